"""AUTH-TOK-08 at an endpoint protected as a whole (no tool names scopes; the 401 challenge's scope= says
what a token needs) tries the same cited table as the tool form: the token lacking the scope, and each nearly-right
scope claim. Before, the endpoint form sent only the lacking token, so a server matching scopes by substring passed.

The stub endpoint (pytester) refuses a token unless its scope claim holds the required scope, compared as MATCH says.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests._checks_run import DEAD_TOOL_SERVER, run_checks

STUBS = """
from types import SimpleNamespace
import httpx, jwt, pytest
from conformance.host._redact import Redactor
from conformance.host.challenge import Challenge
from conformance.host.mcp import RawResult
from conformance.suites._tool_access import CallOutcome

MATCH = {MATCH!r}
ERROR = {ERROR!r}  # the error= of the refusal's challenge (None: no error parameter)
NEEDED = "files.write"

def token(scopes):
    return jwt.encode({{"scope": " ".join(scopes), "aud": "https://rs.test/mcp"}}, "k" * 32, algorithm="HS256")

def holds(scope_claim):
    if MATCH == "substring":
        return NEEDED in scope_claim
    return NEEDED in scope_claim.split()

class Probe:
    name = "the MCP endpoint (tools/list)"
    resource = "https://rs.test/mcp"
    scopes = ["files.read", "files.write"]
    tool = None
    http = SimpleNamespace(redactor=Redactor())
    def send(self, token=None, **kw):
        claim = jwt.decode(token, options={{"verify_signature": False}}).get("scope", "") if token else ""
        if holds(claim):
            raw = RawResult(200, httpx.Headers(), {{"result": {{"tools": []}}}}, [], None, "tools/list", None, "", b"")
        else:
            params = {{"resource_metadata": "https://rs.test/prm", "scope": NEEDED}}
            challenge = Challenge("Bearer", {{**params, **({{"error": ERROR}} if ERROR else {{}})}})
            raw = RawResult(401, httpx.Headers(), None, [], challenge, "initialize", None, "", b"")
        return CallOutcome(raw)

class Issuer:
    def valid(self, audience, scopes, **kw):
        return token(scopes)
    def missing_scope(self, audience, scopes, missing, **kw):
        return token([s for s in scopes if s != missing])

@pytest.fixture(scope="session")
def accepted():
    return Probe()

@pytest.fixture(scope="session")
def listing():
    return SimpleNamespace(named=lambda: [])

@pytest.fixture(scope="session")
def linked_account():
    return SimpleNamespace(scopes=["files.read", "files.write"], access_token=token(["files.read", "files.write"]))

@pytest.fixture(scope="session")
def linker():
    return SimpleNamespace(
        host=SimpleNamespace(scopes=SimpleNamespace(scopes=["files.read", "files.write"])),
        shared=lambda scopes: SimpleNamespace(scopes=list(scopes), access_token=token(scopes)),
    )

@pytest.fixture(scope="session")
def prm_discovery():
    return SimpleNamespace(challenge={{"scope": "files.write"}})

@pytest.fixture(scope="session")
def harness_issuer():
    return Issuer()

@pytest.fixture(scope="session")
def harness_issuer_or_none():
    return Issuer()
"""


def run(pytester: pytest.Pytester, match: str, rule: str = "AUTH-TOK-08", error: str | None = None) -> dict[str, Any]:
    pytester.makeconftest(STUBS.format(MATCH=match, ERROR=error))
    check = {"AUTH-TOK-08": "test_insufficient_scope", "AUTH-TOK-10": "test_insufficient_scope_is_named"}[rule]
    pytester.makepyfile(test_t=f"from conformance.suites.auth.test_tokens import {check}, scope_probe")
    results = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_t.py", how="forked").results
    (result,) = [r for r in results if r["rule"] == rule]
    return dict(result)


def test_a_substring_scope_match_at_the_endpoint_fails_naming_the_case(pytester: pytest.Pytester) -> None:
    result = run(pytester, "substring")
    assert result["status"] == "failed", result
    assert "the scope with a suffix (substring match)" in result["message"], result["message"]
    assert "[RFC 6749 §3.3" in result["message"]


def test_an_exact_scope_match_at_the_endpoint_passes_with_every_case_tried(pytester: pytest.Pytester) -> None:
    result = run(pytester, "exact")
    assert result["status"] == "passed", result
    assert "cases tried (4/4)" in result["message"], result["message"]


def test_the_refusal_naming_insufficient_scope_and_the_scope_meets_tok10(pytester: pytest.Pytester) -> None:
    result = run(pytester, "exact", "AUTH-TOK-10", error="insufficient_scope")
    assert result["status"] == "passed", result


def test_a_refusal_with_another_error_warns_under_tok10_only(pytester: pytest.Pytester) -> None:
    result = run(pytester, "exact", "AUTH-TOK-10", error="invalid_token")
    assert result["status"] == "warning", result
    assert 'not "insufficient_scope"' in result["message"], result["message"]
    assert run(pytester, "exact", error="invalid_token")["status"] == "passed"  # AUTH-TOK-08 holds
