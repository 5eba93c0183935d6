"""Token checks at the tool server: AUTH-TOK-01 … 09.

Every probe calls the same tool the same way (a tool declared oauth2 only, read-only when there is one, with
arguments made from its inputSchema), changing only the credentials. The positive control (AUTH-TOK-01) comes
first: when a valid token is refused, every negative check is blocked by it, since a server refusing everything
would pass them all. Refusal means HTTP 401 (the 401's challenge is AUTH-PRM-05's business); an ``isError`` result
carrying a ``mcp/www_authenticate`` challenge is accepted too, since the contract's Errors table allows the in-call
form for the same conditions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from conformance import Blocked, TargetError, expect, fail, needs, observe, rule
from conformance.config import Settings, Target
from conformance.host.asmeta import OIDC_SCOPES
from conformance.host.declarations import check_challenge_result
from conformance.host.forge import (
    ForgeError,
    HarnessIssuer,
    alg_none,
    split_jwt,
    tamper_payload,
    tamper_signature,
)
from conformance.host.http import HostHTTP
from conformance.host.mcp import raw_call
from conformance.suites._linking import LinkedAccount, Linker
from conformance.suites._tool_access import (
    HARNESS_OPTION,
    CallOutcome,
    Listing,
    auth_tool,
    call,
    distinct,
    fresh_token,
    load_issuer,
    oauth_scopes,
    safe_call,
    suite_listing,
    unverified_claims,
    vendor_of,
)

EXPIRY_MARGIN_S = 2.0  # past exp before the expired real token is sent
UNTRUSTED_ISSUER = "https://untrusted-issuer.conformance.invalid"


ENDPOINT = "the MCP endpoint (tools/list)"


@dataclass
class Probe:
    """What every token probe calls, and how: a tool declared oauth2, or (``tool`` None) the endpoint itself when
    the server protects the whole endpoint (an anonymous session is refused with 401 and no tool says oauth2)."""

    http: HostHTTP
    url: str
    tool: Mapping[str, Any] | None
    resource: str
    scopes: list[str]  # what a token for this tool carries: the granted scopes and the tool's own

    @property
    def name(self) -> str:
        return repr(self.tool.get("name")) if self.tool is not None else ENDPOINT

    def send(self, token: str | None = None, **kwargs: Any) -> CallOutcome | str:
        if self.tool is None:
            try:
                return CallOutcome(raw_call(self.http, self.url, "tools/list", {}, token=token, **kwargs))
            except TargetError as exc:
                return str(exc)
        return safe_call(self.http, self.url, self.tool, token=token, **kwargs)


def refusal_problem(outcome: CallOutcome | str, what: str) -> str | None:
    """None when ``outcome`` refused the credentials; else what happened instead."""
    if isinstance(outcome, str):
        return f"{what}: the request failed ({outcome})"
    if outcome.status == 401:
        return None
    if outcome.auth_error_result:
        observe(f"{what}: refused with an auth error result instead of HTTP 401")
        return None
    verdict = "was accepted" if outcome.returned_data else "was not refused with 401"
    return f"{what} {verdict} ({outcome.describe()})"


def judge_refused(probe: Probe, cases: Mapping[str, str]) -> None:
    problems = [p for what, token in cases.items() if (p := refusal_problem(probe.send(token), what))]
    expect(not problems, "; ".join(problems))


# -- fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def listing(
    host_http: HostHTTP, tool_server_target: Target, conformance_settings: Settings, request: pytest.FixtureRequest
) -> Listing:
    def token() -> str:
        return fresh_token(request.getfixturevalue("linked_account"))

    return suite_listing(host_http, tool_server_target.base_url, vendor_of(conformance_settings), token)


@pytest.fixture(scope="module")
def probe(
    host_http: HostHTTP,
    tool_server_target: Target,
    conformance_settings: Settings,
    listing: Listing,
    linked_account: LinkedAccount,
) -> Probe:
    tool = auth_tool(listing, vendor_of(conformance_settings))
    if tool is None and not listing.authenticated:
        needs(
            "a tool declared with securitySchemes oauth2 only, or an endpoint that refuses anonymous sessions "
            "(nothing to present a token to)"
        )
    if tool is None:
        # The whole endpoint is protected (an anonymous tools/list got 401): the token checks judge the endpoint.
        observe(f"no tool declares oauth2 only; the endpoint refuses anonymous sessions: probing {ENDPOINT}")
    scopes = distinct([*linked_account.scopes, *(oauth_scopes(tool) if tool is not None else [])])
    return Probe(host_http, tool_server_target.base_url, tool, linked_account.resource, scopes)


@pytest.fixture(scope="module")
def control(probe: Probe, linked_account: LinkedAccount) -> CallOutcome | str:
    """The positive control: the linked account's valid token on the probe tool."""
    return probe.send(fresh_token(linked_account))


@pytest.fixture(scope="module")
def accepted(control: CallOutcome | str, probe: Probe) -> Probe:
    """The probe, once the control passed; else every negative check is blocked by AUTH-TOK-01."""
    if isinstance(control, str) or control.refused_http or control.auth_error_result:
        why = control if isinstance(control, str) else control.describe()
        raise Blocked("AUTH-TOK-01", f"a valid token on {probe.name} was not accepted: {why}")
    return probe


@pytest.fixture(scope="module")
def harness_issuer(conformance_settings: Settings, host_http: HostHTTP, accepted: Probe) -> HarnessIssuer | None:
    """The test issuer the target trusts, proven by a valid harness-issued token; None when not configured."""
    issuer = load_issuer(conformance_settings, host_http)
    if issuer is None:
        return None
    control = accepted.send(issuer.valid(accepted.resource, accepted.scopes))
    if isinstance(control, str) or control.refused_http or control.auth_error_result:
        why = control if isinstance(control, str) else control.describe()
        needs(
            f"harness-issued tokens trusted by the target (a valid test-issuer token was refused: {why})",
            HARNESS_OPTION,
        )
    return issuer


def require_issuer(issuer: HarnessIssuer | None, what: str) -> HarnessIssuer:
    if issuer is None:
        needs(f"harness-issued tokens ({what})", HARNESS_OPTION)
    return issuer


# -- checks --------------------------------------------------------------------------------------------------


@rule("AUTH-TOK-01")
def test_valid_token_is_accepted(control: CallOutcome | str, probe: Probe) -> None:
    name = probe.name
    if isinstance(control, str):
        fail(f"calling {name} with a valid token failed: {control}")
    if control.refused_http or control.auth_error_result:
        fail(f"a valid access token from the flow was refused on {name}: {control.describe()}")
    if control.is_error_result:
        observe(f"{name} ran but returned an error result (not an auth error)")
    observe(f"accepted on {name}: {control.describe()}")


@rule("AUTH-TOK-02")
def test_missing_or_malformed_authorization(accepted: Probe) -> None:
    cases: dict[str, dict[str, str] | None] = {
        "no Authorization header": None,
        "an empty Authorization header": {"Authorization": ""},
        "'Bearer' without a token": {"Authorization": "Bearer"},
        "a Basic header": {"Authorization": "Basic Y29uZm9ybWFuY2U6cHJvYmU="},
        "a token without a scheme": {"Authorization": "conformance-token"},
    }
    problems = []
    for what, headers in cases.items():
        outcome = accepted.send(None, headers=headers)
        if isinstance(outcome, str):
            problems.append(f"{what}: the request failed ({outcome})")
        elif outcome.status == 401 or outcome.is_error_result:
            if outcome.is_error_result and not outcome.challenges:
                observe(f"{what}: an error result without a challenge (AUTH-CHAL-01 judges its shape)")
        else:
            problems.append(f"{what} on {accepted.name}: {outcome.describe()}, no auth error")
    expect(not problems, "; ".join(problems))


@rule("AUTH-TOK-03")
def test_tampered_token_is_refused(accepted: Probe, linked_account: LinkedAccount) -> None:
    token = fresh_token(linked_account)
    try:
        cases = {
            "a token with a tampered payload": tamper_payload(token),
            "a token with a flipped signature byte": (tamper_signature(token)),
        }
    except ForgeError:
        middle = len(token) // 2
        flipped = token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]
        observe("the access token is opaque: one character changed instead of payload/signature tampering")
        cases = {"an access token with one character changed": flipped}
    for value in cases.values():
        accepted.http.redactor.add_secret(value)
    judge_refused(accepted, cases)


@rule("AUTH-TOK-04")
def test_untrusted_key_and_alg_none_are_refused(accepted: Probe, linked_account: LinkedAccount, linker: Linker) -> None:
    token = fresh_token(linked_account)
    foreign = HarnessIssuer(issuer=UNTRUSTED_ISSUER, redactor=accepted.http.redactor)
    try:
        header, claims, _ = split_jwt(token)
    except ForgeError:
        observe("the access token is opaque: forged tokens carry claims made by the harness")
        header = {}
        claims = foreign.claims(audience=accepted.resource, scopes=accepted.scopes, iss=linker.host.as_metadata.issuer)
    cases = {
        "the real claims signed by an unknown key": foreign.sign(claims),
        "a token from an issuer the server does not trust": foreign.valid(accepted.resource, accepted.scopes),
        "the real claims unsigned (alg: none)": alg_none(claims),
    }
    if header.get("kid"):
        cases["the real claims signed by an unknown key under the real kid"] = foreign.sign(
            claims, headers={"kid": header["kid"]}
        )
    for value in cases.values():
        accepted.http.redactor.add_secret(value)
    judge_refused(accepted, cases)


@rule("AUTH-TOK-05")
def test_expired_token_is_refused(
    accepted: Probe,
    harness_issuer: HarnessIssuer | None,
    linked_account: LinkedAccount,
    link_account: Callable[..., LinkedAccount],
    conformance_settings: Settings,
) -> None:
    if harness_issuer is not None:
        judge_refused(accepted, {"an expired token": harness_issuer.expired(accepted.resource, accepted.scopes)})
        return
    # No test issuer: wait out a real token, when its lifetime is short enough.
    limit = float(conformance_settings.get("max_expiry_wait", 120.0))
    claims = unverified_claims(linked_account.access_token)
    lifetime = linked_account.token.expires_in
    if isinstance(claims.get("exp"), int | float) and isinstance(claims.get("iat"), int | float):
        lifetime = int(claims["exp"] - claims["iat"])
    if lifetime is None or lifetime > limit:
        needs(
            f"an access-token lifetime ≤ {limit:.0f} s (it is {lifetime if lifetime is not None else 'unknown'}) "
            "or harness-issued tokens",
            f"--max-expiry-wait or {HARNESS_OPTION}",
        )
    # A throwaway authorization is spent, never the shared account (which renews itself when used after the wait).
    throwaway = link_account()
    expired = throwaway.current_token  # the raw token: ``access_token`` would renew it once expired
    exp = unverified_claims(expired).get("exp")
    deadline = float(exp) if isinstance(exp, int | float) else time.time() + lifetime
    time.sleep(max(0.0, deadline - time.time()) + EXPIRY_MARGIN_S)
    observe(f"waited out a real token's lifetime ({lifetime} s) on a throwaway authorization")
    judge_refused(accepted, {"an expired access token": expired})


@rule("AUTH-TOK-06")
def test_token_for_another_audience_is_refused(
    accepted: Probe, harness_issuer: HarnessIssuer | None, linker: Linker, conformance_settings: Settings
) -> None:
    cases: dict[str, str] = {}
    if harness_issuer is not None:
        cases["a token for another audience"] = harness_issuer.wrong_audience(accepted.resource, accepted.scopes)
    alt = conformance_settings.get("alt_resource")
    if alt:
        attempt = linker.attempt(request=linker.request(resource=str(alt)))
        if attempt.ok and attempt.token is not None and attempt.token.access_token:
            cases[f"a real token issued for {alt}"] = attempt.token.access_token
        else:
            observe(f"no token could be obtained for --alt-resource {alt}: {attempt.problem}")
    if not cases:
        needs("a token for another audience", f"--alt-resource or {HARNESS_OPTION}")
    judge_refused(accepted, cases)


@rule("AUTH-TOK-07")
def test_not_yet_valid_and_wrong_issuer_are_refused(accepted: Probe, harness_issuer: HarnessIssuer | None) -> None:
    issuer = require_issuer(harness_issuer, "nbf in the future, wrong iss with a trusted key")
    judge_refused(
        accepted,
        {
            "a token whose nbf lies in the future": issuer.not_yet_valid(accepted.resource, accepted.scopes),
            "a token of a trusted key naming another issuer": issuer.wrong_issuer(accepted.resource, accepted.scopes),
        },
    )


def scope_probe(listing: Listing, granted: list[str]) -> tuple[Mapping[str, Any], str] | None:
    """(tool, scope): a tool needing a granted scope that the fewest tools need (the downscoped token stays useful);
    a destructive tool first, since that is where a missing scope check hurts."""
    tools = [t for t in listing.named() if oauth_scopes(t)]
    counts: dict[str, int] = {}
    for tool in tools:
        for scope in set(oauth_scopes(tool)):
            counts[scope] = counts.get(scope, 0) + 1
    options = [(t, s) for t in tools for s in oauth_scopes(t) if s in granted]
    options.sort(key=lambda ts: (counts[ts[1]], (ts[0].get("annotations") or {}).get("destructiveHint") is not True))
    return options[0] if options else None


@rule("AUTH-TOK-08")
def test_insufficient_scope(
    accepted: Probe,
    listing: Listing,
    linked_account: LinkedAccount,
    linker: Linker,
    link_account: Callable[..., LinkedAccount],
    request: pytest.FixtureRequest,
) -> None:
    found = scope_probe(listing, list(linked_account.scopes))
    if found is None and accepted.tool is None:
        endpoint_insufficient_scope(accepted, linker, link_account, request)
        return
    if found is None:
        needs("a tool whose securitySchemes name a scope the host was granted")
    tool, scope = found
    fewer = [s for s in linker.host.scopes.scopes if s != scope]
    account = link_account(scopes=fewer)
    token: str | None = account.access_token
    if scope in account.scopes or scope in str(unverified_claims(token).get("scope", "")).split():
        issuer = request.getfixturevalue("harness_issuer")
        if issuer is None:
            needs(
                f"a token without {scope} (the authorization server granted it although not requested)", HARNESS_OPTION
            )
        token = issuer.missing_scope(accepted.resource, accepted.scopes, scope)
        observe(f"the authorization server granted {scope} anyway: used a harness-issued token without it")
    outcome = call(accepted.http, accepted.url, tool, token=token)
    name = tool.get("name")
    if outcome.status in (401, 403):
        observe(f"refused with HTTP {outcome.status}")
        return
    if not outcome.is_error_result:
        fail(f"{name!r} (needs {scope}) with a token lacking {scope}: {outcome.describe()}, not refused")
    parsed = check_challenge_result(outcome.result).challenges
    errors = [c for c in parsed if c.get("error") == "insufficient_scope"]
    if not errors:
        fail(f'{name!r} without {scope}: an error result whose challenge has no error="insufficient_scope"')
    expect(
        bool((errors[0].get("scope") or "").strip()),
        f'{name!r} without {scope}: the insufficient_scope challenge names no scope="..."',
    )
    observe(f"{name!r} without {scope}: insufficient_scope result")


def endpoint_insufficient_scope(
    probe: Probe, linker: Linker, link_account: Callable[..., LinkedAccount], request: pytest.FixtureRequest
) -> None:
    """AUTH-TOK-08 at an endpoint protected as a whole: the scopes its 401 challenge requires (``scope=``) are what
    a token must carry; a token without one of them must be refused (401, or 403 insufficient_scope)."""
    challenge = request.getfixturevalue("prm_discovery").challenge
    required = [s for s in str((challenge.get("scope") if challenge else None) or "").split() if s not in OIDC_SCOPES]
    if not required:
        needs(
            "the scopes the endpoint requires: a tool whose securitySchemes name scopes, or a scope= in the "
            "endpoint's 401 challenge"
        )
    scope = required[0]
    fewer = [s for s in linker.host.scopes.scopes if s != scope]
    account = link_account(scopes=fewer)
    token: str = account.current_token
    if scope in account.scopes or scope in str(unverified_claims(token).get("scope", "")).split():
        issuer = request.getfixturevalue("harness_issuer")
        if issuer is None:
            needs(
                f"a token without {scope} (the authorization server granted it although not requested)", HARNESS_OPTION
            )
        token = issuer.missing_scope(probe.resource, probe.scopes, scope)
        observe(f"the authorization server granted {scope} anyway: used a harness-issued token without it")
    outcome = probe.send(token)
    if isinstance(outcome, str):
        fail(f"{ENDPOINT} with a token lacking {scope}: the request failed ({outcome})")
    if outcome.status in (401, 403) or outcome.auth_error_result:
        observe(f"{ENDPOINT} (its challenge requires {scope}) refused a token without it: {outcome.describe()}")
        return
    fail(f"{ENDPOINT} requires {scope} (its 401 challenge says so) but a token without it got {outcome.describe()}")


@rule("AUTH-TOK-09")
def test_token_in_query_string_is_not_accepted(accepted: Probe, linked_account: LinkedAccount) -> None:
    outcome = accepted.send(None, query={"access_token": fresh_token(linked_account)})
    if isinstance(outcome, str):
        fail(f"the request with a token in the query string failed: {outcome}")
    expect(
        not outcome.returned_data,
        f"a token in the query string (no header) was accepted: {outcome.describe()}",
    )
    observe(outcome.describe())
