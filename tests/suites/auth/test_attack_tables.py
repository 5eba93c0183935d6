"""Negative token rules iterate cited attack tables, judge each refusal whole, and show the cases tried.

Each check runs (pytester) against a stub probe that refuses everything but one attack: the rule fails naming that
case and its citation, where a single probe passes. A stub that refuses every case passes with the cases
tried listed; a bare 401 (no Bearer challenge) is a refusal too (its challenge is AUTH-PRM-05's to judge).
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.suites._cases import ATTACK_TABLES, Attack, AttackRun, attack_table, unreached_text
from conformance.suites._checks import catalog_rows
from tests._checks_run import DEAD_TOOL_SERVER, run_checks

STUBS = """
import json, time
from types import SimpleNamespace
import httpx, jwt, pytest
from conformance.host._redact import Redactor
from conformance.host.challenge import Challenge
from conformance.host.forge import split_jwt, ForgeError, HarnessIssuer
from conformance.host.mcp import RawResult
from conformance.core._exceptions import TargetUnreachable
from conformance.suites._cases import unreached_text
from conformance.suites._tool_access import CallOutcome

ACCEPT = {ACCEPT!r}  # which attack the stub server wrongly accepts: a predicate name below
BARE = {BARE!r}  # refusals carry no challenge

def accepts(token, kw):
    header, claims = {{}}, {{}}
    try:
        header, claims, _ = split_jwt(token) if token else ({{}}, {{}}, b"")
    except ForgeError:
        pass
    alg = str(header.get("alg", ""))
    headers = kw.get("headers") or {{}}
    auth = headers.get("Authorization", "")
    return {{
        "another-issuers-key": header.get("kid") == "harness-kid" and claims.get("iss") == "https://as.test",
        "aud-issuer": claims.get("aud") == "https://as.test",
        "query-token-param": bool((kw.get("query") or {{}}).get("token")),
        "token-cookie": headers.get("Cookie", "").startswith("token="),
        "body-member": bool((kw.get("body") or {{}}).get("access_token")),
        "anyone": True,
        "alg-none-any-case": alg.lower() == "none" and alg != "none",
        "embedded-jwk": "jwk" in header,
        "other-scheme": auth.startswith("Token "),
        "query-over-header": bool(kw.get("query")) and bool(auth),
        "stripped": bool(token) and token.endswith(".") and alg == "HS256",
    }}.get(ACCEPT, False)

class Probe:
    name = "'stub'"
    resource = "https://rs.test/mcp"
    scopes = ["files"]
    tool = {{"name": "stub"}}
    http = SimpleNamespace(redactor=Redactor())
    def send(self, token=None, **kw):
        if ACCEPT == "reset-other-scheme" and (kw.get("headers") or {{}}).get("Authorization", "").startswith("Token "):
            return unreached_text(TargetUnreachable("connection reset by peer"))  # what Probe.send gives back
        if accepts(token, kw):
            raw = RawResult(200, httpx.Headers(), {{"result": {{"content": []}}}}, [], None, "call", None, "", b"")
        else:
            challenge = None if BARE else Challenge("Bearer", {{"resource_metadata": "https://rs.test/prm"}})
            raw = RawResult(401, httpx.Headers(), None, [], challenge, "initialize", None, "", b"")
        return CallOutcome(raw)

KEY = "k" * 32  # the stub verifies nothing: the signing algorithm is irrelevant

@pytest.fixture(scope="module")
def accepted():
    return Probe()

@pytest.fixture(scope="module")
def linked_account():
    claims = {{"iss": "https://as.test", "sub": "alice", "aud": "https://rs.test/mcp", "exp": int(time.time()) + 300}}
    token = jwt.encode(claims, KEY, algorithm="HS256", headers={{"kid": "real"}})
    return SimpleNamespace(access_token=token, id_token=None, client=SimpleNamespace(client_id="host-client"))

@pytest.fixture(scope="module")
def linker():
    return SimpleNamespace(host=SimpleNamespace(as_metadata=SimpleNamespace(issuer="https://as.test")))

@pytest.fixture(scope="module")
def harness_issuer_or_none():
    return None

@pytest.fixture(scope="module")
def harness_issuer():
    return HarnessIssuer("https://test-issuer.test", kid="harness-kid")

@pytest.fixture(scope="module")
def conformance_settings():
    return SimpleNamespace(get=lambda name, default=None: default)
"""

CHECKS = {
    "AUTH-TOK-02": "test_missing_or_malformed_authorization",
    "AUTH-TOK-03": "test_tampered_token_is_refused",
    "AUTH-TOK-04": "test_untrusted_key_and_alg_none_are_refused",
    "AUTH-TOK-06": "test_token_for_another_audience_is_refused",
    "AUTH-TOK-07": "test_not_yet_valid_and_wrong_issuer_are_refused",
    "AUTH-TOK-09": "test_token_in_query_string_is_not_accepted",
}


def run(pytester: pytest.Pytester, rule: str, accept: str | None, bare: bool = False) -> dict[str, Any]:
    pytester.makeconftest(STUBS.format(ACCEPT=accept, BARE=bare))
    pytester.makepyfile(test_t=f"from conformance.suites.auth.test_tokens import {CHECKS[rule]}")
    # A subprocess: cryptography's EC bindings do not survive pytester's in-process module snapshot.
    results = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_t.py", how="forked").results
    (result,) = [r for r in results if r["rule"] == rule]
    return dict(result)


@pytest.mark.parametrize(
    ("rule", "accept", "case"),
    [
        ("AUTH-TOK-02", "other-scheme", "the real token under another scheme (Token)"),
        ("AUTH-TOK-03", "stripped", "a token with its signature stripped"),
        ("AUTH-TOK-04", "alg-none-any-case", "alg: NONE"),
        ("AUTH-TOK-04", "embedded-jwk", "an attacker key embedded in the jwk header"),
        ("AUTH-TOK-09", "query-over-header", "access_token in the query string with an invalid header"),
        # parties the server trusts for something else
        ("AUTH-TOK-07", "another-issuers-key", "signed by the test issuer's key"),
        ("AUTH-TOK-06", "aud-issuer", "aud: the authorization server's issuer"),
        # a token outside the header
        ("AUTH-TOK-09", "query-token-param", "token in the query string (no header)"),
        ("AUTH-TOK-09", "token-cookie", "the token in a token cookie (no header)"),
        ("AUTH-TOK-09", "body-member", "access_token as a member of the JSON request body (no header)"),
    ],
)
def test_one_accepted_attack_fails_the_rule_naming_it(
    pytester: pytest.Pytester, rule: str, accept: str, case: str
) -> None:
    result = run(pytester, rule, accept)
    assert result["status"] in ("failed", "warning"), result
    assert case in result["message"] and "[RFC" in result["message"], result["message"]


@pytest.mark.parametrize("rule", sorted(CHECKS))
def test_refusing_every_case_passes_listing_the_cases_tried(pytester: pytest.Pytester, rule: str) -> None:
    result = run(pytester, rule, None)
    assert result["status"] == "passed", result
    assert "cases tried (" in result["message"], result["message"]


def test_data_for_anyone_says_nothing_about_a_token_outside_the_header(pytester: pytest.Pytester) -> None:
    """A tool that answers anonymous calls with data would answer a request carrying a token it ignores the same way:
    those cases are not tried (AUTH-TOOL-03 judges the tool), never a failure of AUTH-TOK-09."""
    result = run(pytester, "AUTH-TOK-09", "anyone")
    assert result["status"] == "skipped", result
    assert "returns data to an anonymous call too" in str(result), result


def test_a_bare_401_is_a_refusal_whose_challenge_is_judged_elsewhere(pytester: pytest.Pytester) -> None:
    """The token rules judge the refusal; a 401 without a challenge is AUTH-PRM-05's violation, reported there."""
    result = run(pytester, "AUTH-TOK-04", None, bare=True)
    assert result["status"] == "passed", result
    assert "AUTH-PRM-05 judges it" in str(result), result


def test_catalog_gives_each_rule_its_case_count() -> None:
    rows = {row["id"]: row for row in catalog_rows()}
    for rule_id, table in ATTACK_TABLES.items():
        assert rows[rule_id]["cases"] == len(table) >= 2
        assert all(attack.source for attack in table)
    assert rows["AUTH-TOK-01"]["cases"] is None  # a positive control has no attack table


def test_a_named_case_not_tried_skips_and_inapplicable_ones_do_not() -> None:
    attack_table("TEST-RULE", Attack("a", "RFC 0 §1", named=True), Attack("b", "RFC 0 §2"))
    try:
        ran = AttackRun.of("TEST-RULE")
        ran.tried_case("b")
        with pytest.raises(pytest.skip.Exception, match="not a"):
            ran.conclude()
        ran = AttackRun.of("TEST-RULE")
        ran.tried_case("b")
        ran.inapplicable("a", "opaque token")
        ran.conclude()
    finally:
        del ATTACK_TABLES["TEST-RULE"]


def test_a_case_whose_exchange_failed_in_transport_is_not_tried_not_failed(pytester: pytest.Pytester) -> None:
    """A connection reset or timeout on one attack is the harness not trying that case, never the target
    failing it (before, "the request failed" counted as the target's problem)."""
    result = run(pytester, "AUTH-TOK-02", "reset-other-scheme")
    assert result["status"] != "failed", result
    assert "the real token under another scheme (Token) (the exchange failed at the transport layer" in result[
        "message"
    ] or any("transport layer" in str(e) for e in result.get("evidence", [])), result


def test_attempt_counts_transport_failures_as_not_tried_and_failures_as_problems() -> None:
    from conformance.core._exceptions import TargetUnreachable
    from conformance.verdict._verdicts import Failure

    attack_table("TEST-RULE", Attack("a", "RFC 0 §1"), Attack("b", "RFC 0 §2", named=True), Attack("c", "RFC 0 §3"))
    try:
        ran = AttackRun.of("TEST-RULE")
        with ran.attempt("a"):
            raise TargetUnreachable("read timed out after 10 s")
        with ran.attempt("b"):
            pass
        with ran.attempt("c"):
            raise Failure("c was accepted")
        assert [a.case for a in ran.tried] == ["b", "c"]
        assert "transport layer" in ran.untried["a"] and "read timed out" in ran.untried["a"]
        assert ran.problems == ["c was accepted [RFC 0 §3]"]
        ran.judged("c", unreached_text(TargetUnreachable("reset")))  # the text form, as safe_call returns it
        assert "reset" in ran.untried["c"]
        ran.problems.clear()
        ran.conclude()  # "a" is not named: the rule passes with the gap listed, never fails on it
    finally:
        del ATTACK_TABLES["TEST-RULE"]


def test_a_named_case_lost_in_transport_skips_the_rule() -> None:
    from conformance.core._exceptions import TargetUnreachable

    attack_table("TEST-RULE", Attack("a", "RFC 0 §1", named=True))
    try:
        ran = AttackRun.of("TEST-RULE")
        with ran.attempt("a"):
            raise TargetUnreachable("connection reset by peer")
        with pytest.raises(pytest.skip.Exception, match="transport layer"):
            ran.conclude()
    finally:
        del ATTACK_TABLES["TEST-RULE"]
