"""The authorization-code flow with PKCE and resource indicators: AUTH-FLOW-01 … 07.

Negative probes use fresh authorizations (never the session's linked account): replaying a code revokes the
tokens of its first exchange.
"""

from __future__ import annotations

import json

import jwt

from conformance import Blocked, _context, expect, fail, observe, rule
from conformance._exceptions import NeedsUnmet
from conformance.host.discovery import MCP_HEADERS, initialize_request
from conformance.host.oauth import new_pkce
from conformance.suites._linking import FlowAttempt, LinkedAccount, Linker


@rule("AUTH-FLOW-01")
def test_code_comes_back_with_state(first_link_outcome: FlowAttempt | NeedsUnmet) -> None:
    # The login may have run while another check set the fixture up: its exchanges are this rule's evidence.
    _context.attach(getattr(first_link_outcome, "exchanges", []))
    if isinstance(first_link_outcome, NeedsUnmet):
        raise first_link_outcome  # the configuration stopped the login (skipped, incomplete), not the target
    first_link = first_link_outcome
    callback = first_link.callback
    if callback is None or callback.is_error:
        if first_link.rule in ("AUTH-FLOW-01", None):
            fail(first_link.problem or "no authorization response")
        raise Blocked(first_link.rule, first_link.problem or "")
    request = first_link.request
    expect(bool(callback.code), "the authorization response carries no code")
    if callback.state is None:
        fail("the authorization response lost the state parameter")
    expect(callback.state == request.state, "the authorization response's state differs from the state sent")
    observe(f"requested scopes {request.scope!r} for resource {request.resource!r} with PKCE S256")


@rule("AUTH-FLOW-02")
def test_token_request_returns_bearer(first_link: FlowAttempt) -> None:
    token = first_link.token
    if token is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no code to exchange")
    if first_link.rule not in ("AUTH-FLOW-02", None):
        raise Blocked(first_link.rule, first_link.problem or "")
    if first_link.need is not None:
        first_link.require()  # a configuration gap (a predefined client as configured): skipped, incomplete
    expect(token.ok, f"token request ({token.method}): {token.describe()}")
    observe(f"{token.token_type} token, expires_in {token.expires_in}, scope {token.scope!r}")


@rule("AUTH-FLOW-03")
def test_wrong_verifier_is_refused(linker: Linker, linked_account: LinkedAccount) -> None:
    request = linker.request()
    accepted = linker.code(request)
    wrong = new_pkce().verifier
    linker.http.redactor.add_secret(wrong)
    result = linker.host.tokens.exchange_code(accepted.code or "", wrong, request.redirect_uri, request.resource)
    if result.ok:
        fail("a code was exchanged with a code_verifier that does not match its code_challenge")
    expect(
        result.status == 400 and result.error == "invalid_grant",
        f"a wrong code_verifier was refused with {result.describe()}, not 400 invalid_grant",
    )


@rule("AUTH-FLOW-04")
def test_pkce_is_required(linker: Linker, linked_account: LinkedAccount) -> None:
    plain = new_pkce().verifier
    linker.http.redactor.add_secret(plain)
    probes: dict[str, dict[str, str | None]] = {
        "without code_challenge": {"code_challenge": None, "code_challenge_method": None},
        "with code_challenge_method plain": {"code_challenge": plain, "code_challenge_method": "plain"},
    }
    accepted = []
    for what, extra in probes.items():
        request = linker.request(params=extra)
        _, callback = linker.authorize(request)
        if callback is not None and callback.code:
            accepted.append(what)
    expect(not accepted, "authorization requests were answered with a code: " + ", ".join(accepted))


def _audience_ok(token: str, resource: str) -> bool | None:
    """True/False for a JWT (aud or resource claim), None for an opaque token."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    aud = claims.get("aud")
    audiences = aud if isinstance(aud, list) else [aud]
    return resource in audiences or claims.get("resource") == resource


@rule("AUTH-FLOW-05")
def test_resource_reaches_the_token(linked_account: LinkedAccount, linker: Linker) -> None:
    token, resource = linked_account.access_token, linked_account.resource
    verdict = _audience_ok(token, resource)
    if verdict is not None:
        claims = jwt.decode(token, options={"verify_signature": False})
        expect(verdict, f"the JWT access token's aud is {json.dumps(claims.get('aud'))}, not {resource!r}")
        return
    # Opaque: the tool server must accept it for this resource.
    headers = {**MCP_HEADERS, **linked_account.auth_header}
    response = linker.http.post(resource, json=initialize_request(), headers=headers, retry=None)
    expect(
        response.status_code == 200,
        f"the opaque access token was refused by the resource it was requested for ({response.status_code})",
    )
    observe("opaque access token: accepted by the tool server")


@rule("AUTH-FLOW-06")
def test_code_works_once(linker: Linker, linked_account: LinkedAccount) -> None:
    attempt = linker.attempt()
    attempt.require()
    assert attempt.accepted is not None
    again = linker.host.tokens.exchange(attempt.request, attempt.accepted)
    # The rule names one thing: the code does not work twice. No access token is what proves it; how the refusal
    # is worded (RFC 6749 §5.2's 400 invalid_grant, or a 5xx) is an observation, not this rule's verdict.
    expect(
        not again.ok and not again.access_token,
        f"the same authorization code was exchanged twice ({again.describe()})",
    )
    if not (400 <= again.status < 500 and again.error == "invalid_grant"):
        observe(f"the replayed code was refused with {again.describe()}, not RFC 6749 §5.2's 400 invalid_grant")
    else:
        observe("the replayed code was refused with 400 invalid_grant")


@rule("AUTH-FLOW-07")
def test_redirect_uri_must_match_exactly(linker: Linker, linked_account: LinkedAccount) -> None:
    registered = linker.host.redirect.redirect_uri
    probe = registered.rstrip("/") + "/elsewhere"
    request = linker.request(redirect_uri=probe)
    login, callback = linker.authorize(request)
    if callback is not None:
        fail(f"the authorization server redirected to {probe}, which only extends the registered {registered}")
    observe(f"refused: {login.stopped}")
