"""Client ID metadata documents with private_key_jwt: AUTH-CIMD-01 … 07.

The negative assertion probes (CIMD-03/04/07) ride on a refresh token of a fresh authorization: client authentication
comes before the grant, so a refused assertion spends nothing, and a control with a valid assertion afterwards
proves the refusals were about the assertion. Without a refresh token each probe gets a fresh code.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator, Mapping
from typing import Any

import jwt
import pytest

from conformance import Blocked, alone, early, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host import fanout
from conformance.host.forge import alg_none, hmac_with_public_key, strip_signature, tamper_payload
from conformance.host.http import HostHTTP
from conformance.host.identity import LEGACY_AUTH_METHOD, BrokenAssertion, HostKey, new_callback_id
from conformance.host.oauth import (
    SUPPORTED_METHODS,
    OAuthClient,
    RedirectChoice,
    TokenEndpoint,
    TokenResult,
    cimd_client,
)
from conformance.host.publisher import Publisher
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites._linking import FlowAttempt, HostClient, LinkedAccount, Linker
from conformance.suites.auth.client import none_only_client

CIMD_REFUSALS = ("AUTH-CIMD-01", "AUTH-CIMD-02")


def require_cimd(host_client: HostClient) -> OAuthClient:
    if host_client.client.kind != "cimd":
        needs(
            f"the host identified by CIMD (it uses {host_client.client.kind})",
            "--client-registration cimd (and client_id_metadata_document_supported: true)",
        )
    return host_client.client


def require_code(first_link: FlowAttempt) -> None:
    """The authorization server issued a code to the host's CIMD client in the first authorization."""
    if first_link.callback is None or not first_link.callback.code:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no code")


class AssertionProbe:
    """Token requests whose client assertion is chosen by the check, on a live grant of the host's client."""

    def __init__(self, linker: Linker, account: LinkedAccount) -> None:
        self.linker = linker
        self.account = account
        self.tokens: TokenEndpoint = account.tokens
        self.sent: str | None = None  # the valid assertion last sent (what a replay reuses)

    def send(self, assertion: str) -> TokenResult:
        if self.account.refresh_token:
            form = {
                "grant_type": "refresh_token",
                "refresh_token": self.account.refresh_token,
                "resource": self.account.resource,
            }
            result = self.tokens.request(form, method="private_key_jwt", assertion=assertion)
            if result.ok and result.refresh_token:
                self.account.refresh_token = result.refresh_token  # accepted (a defect): keep the rotated token
            return result
        request = self.linker.request()
        accepted = self.linker.code(request)
        return self.tokens.exchange(request, accepted, method="private_key_jwt", assertion=assertion)

    def each(self, cases: Mapping[str, str]) -> Iterator[tuple[str, TokenResult]]:
        """Each case's assertion sent, registered with the redactor first (a nearly-right assertion is a secret).

        On the grant's refresh token, the cases go at once: a refused request leaves the token as it was. One that
        is accepted (a defect) rotates it, and a case sent beside it may then have been refused for the stale token,
        or the grant revoked as replayed (RFC 9700 §4.14.2): every case is then sent again, one after another, on a
        fresh grant, the accepted token kept after each, as a host would."""
        for assertion in cases.values():
            self.linker.http.redactor.add_secret(assertion)
        pairs = list(cases.items())
        if self.account.refresh_token and self.linker.http.concurrency > 1 and len(pairs) > 1:
            results = fanout.each(
                pairs, lambda pair: self.send(pair[1]), limit=self.linker.http.concurrency, case=lambda pair: pair[0]
            )
            if not any(result.ok for result in results):
                yield from zip(cases, results, strict=True)
                return
            observe(
                "a case was accepted while the cases went at once: each case is sent again in turn, on a fresh grant"
            )
            self.account = self.linker.link()
            self.tokens = self.account.tokens
        for case, assertion in pairs:
            yield case, self.send(assertion)

    def valid(self) -> TokenResult:
        identity = self.tokens.client.identity
        assert identity is not None
        self.sent = identity.client_assertion(self.tokens.client.client_id, self.tokens.url)
        return self.send(self.sent)

    def control(self) -> None:
        """A valid assertion still works: the refusals before were about the assertions."""
        result = self.valid()
        if not result.ok:
            raise Blocked("AUTH-CIMD-02", f"a valid assertion after the probes was refused too: {result.describe()}")

    def broken(self, kind: BrokenAssertion, replay_of: str | None = None) -> TokenResult:
        identity = self.tokens.client.identity
        assert identity is not None
        return self.send(
            identity.broken_assertion(kind, self.tokens.client.client_id, self.tokens.url, replay_of=replay_of)
        )


@pytest.fixture(scope="session")
@early()
def assertion_probe(linker: Linker, first_link: FlowAttempt) -> AssertionProbe:
    client = require_cimd(linker.host)
    if client.auth_method != "private_key_jwt":
        needs("private_key_jwt in the intersection of the methods (the host then uses it)")
    require_code(first_link)
    if not first_link.ok:
        raise Blocked(first_link.rule or "AUTH-CIMD-02", first_link.problem or "no token")
    return AssertionProbe(linker, linker.link())


@pytest.fixture(scope="session")
def cimd_publisher(linker: Linker, request: pytest.FixtureRequest) -> Publisher:
    """The publisher, asked for only once the host identifies by CIMD: a DCR-only or predefined host needs none
    (its CIMD rules skip with the CIMD need, and the run is not incomplete for want of a certificate)."""
    require_cimd(linker.host)
    publisher: Publisher = request.getfixturevalue("publisher")
    return publisher


@pytest.fixture(scope="session")  # torn down at the end: a check's own fixture would go while its body runs
def second_publisher(
    conformance_settings: Settings, host_http: HostHTTP, cimd_publisher: Publisher
) -> Iterator[Publisher]:
    """Another origin for a one-off client document, so the host's own documents (cached by the AS) stay as is."""
    publisher = cimd_publisher
    with Publisher(
        certfile=publisher.certfile, keyfile=publisher.keyfile, host=publisher.host, redactor=host_http.redactor
    ) as other:
        yield other


@rule("AUTH-CIMD-01")
def test_document_url_is_the_client_id(
    linker: Linker, first_link: FlowAttempt, cimd_publisher: Publisher, second_publisher: Publisher
) -> None:
    client = require_cimd(linker.host)
    publisher = cimd_publisher
    if first_link.callback is not None and first_link.callback.code:
        fetches = publisher.fetched(client.client_id)
        expect(bool(fetches), f"a code was issued to {client.client_id} but the document was never fetched")
        observe(f"the authorization server fetched {client.client_id} from {fetches[0].client}")
        return
    if first_link.rule == "AUTH-CIMD-01":
        fail(first_link.problem or "the client was refused")
    if first_link.rule != "AUTH-CIMD-02":
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    # The document was fetched and refused: tell "CIMD refused" from "private_key_jwt refused" with a document
    # that asks for `none` only, on another origin.
    probe = none_only_client(second_publisher)
    attempt = linker.attempt(client=probe, exchange=False)
    expect(bool(second_publisher.fetched(probe.client_id)), f"{probe.client_id} was never fetched")
    if attempt.callback is None or not attempt.callback.code:
        fail(f"a client document asking for `none` was refused as well: {attempt.problem}")
    observe(f"the host's document ({first_link.problem}) was refused, but a `none` document was accepted")


@rule("AUTH-CIMD-02")
def test_private_key_jwt_is_accepted(linker: Linker, first_link: FlowAttempt, cimd_publisher: Publisher) -> None:
    client = require_cimd(linker.host)
    publisher = cimd_publisher
    if client.auth_method != "private_key_jwt":
        needs("private_key_jwt in the intersection of the methods (the host then uses it)")
    if first_link.rule == "AUTH-CIMD-02":
        fail(first_link.problem or "the private_key_jwt client was refused")
    require_code(first_link)
    token = first_link.token
    if token is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-02", first_link.problem or "no token request")
    if token.error == "invalid_client":
        fail(f"the token endpoint refused the private_key_jwt assertion: {token.describe()}")
    if not token.ok:
        raise Blocked("AUTH-FLOW-02", f"token request: {token.describe()}")
    assert client.identity is not None
    fetched = publisher.fetched(client.identity.jwks_url)
    expect(bool(fetched), f"the assertion was accepted but {client.identity.jwks_url} was never fetched")
    observe(f"the authorization server fetched the JWKS from {fetched[0].client}")


SIGNATURE = "RFC 7523 §3 item 9 (the signature MUST verify); RFC 8725"
CIMD03 = attack_table(
    "AUTH-CIMD-03",
    Attack("signed by a key not in the JWKS under the real kid", "AUTH-CIMD-03; RFC 7523 §3, §3.2", named=True),
    Attack("signed by a key not in the JWKS under an unknown kid", f"{SIGNATURE} §3.10; RFC 7515 §4.1.4"),
    Attack("signed by a key not in the JWKS without kid", f"{SIGNATURE} §3.10; RFC 7515 §4.1.4"),
    Attack("unsigned (alg: none)", f"{SIGNATURE} §2.1, §3.1"),
    Attack("unsigned (alg: None)", f"{SIGNATURE} §2.1, §3.1; RFC 7515 §4.1.1 (case-sensitive)"),
    Attack("the real assertion with its signature stripped", f"{SIGNATURE} §2.1"),
    Attack("the real assertion with a tampered payload (jti)", "RFC 7515 §5.2; RFC 7523 §3 item 9"),
    Attack("HS256 signed with the client's public key as the secret", f"{SIGNATURE} §2.1, §3.1, §3.2"),
    Attack("an attacker key embedded in the jwk header", f"{SIGNATURE} §3.10; RFC 7515 §4.1.3"),
)


def _claims(probe: AssertionProbe, **changes: Any) -> dict[str, Any]:
    """A valid assertion's claims (RFC 7523 §3) with ``changes``; a change to ``...`` removes the claim."""
    client_id, now = probe.tokens.client.client_id, int(time.time())
    claims: dict[str, Any] = {"iss": client_id, "sub": client_id, "aud": probe.tokens.url, "iat": now}
    claims.update(exp=now + 60, jti=secrets.token_urlsafe(24))
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not ...}


def _signature_cases(probe: AssertionProbe) -> dict[str, str]:
    identity = probe.tokens.client.identity
    assert identity is not None
    key, foreign = identity.key, HostKey.generate(identity.key.kind)
    real = identity.client_assertion(probe.tokens.client.client_id, probe.tokens.url)
    jwk = {k: v for k, v in foreign.public_jwk().items() if k != "kid"}
    return {
        "signed by a key not in the JWKS under the real kid": foreign.sign(_claims(probe), kid=key.kid),
        "signed by a key not in the JWKS under an unknown kid": foreign.sign(_claims(probe), kid="conformance-unknown"),
        "signed by a key not in the JWKS without kid": _without_kid(foreign, _claims(probe)),
        "unsigned (alg: none)": alg_none(_claims(probe)),
        "unsigned (alg: None)": alg_none(_claims(probe), "None"),
        "the real assertion with its signature stripped": strip_signature(real),
        "the real assertion with a tampered payload (jti)": tamper_payload(
            identity.client_assertion(probe.tokens.client.client_id, probe.tokens.url),
            {"jti": secrets.token_urlsafe(24)},
        ),
        "HS256 signed with the client's public key as the secret": hmac_with_public_key(
            _claims(probe), key.private_key.public_key(), {"kid": key.kid}
        ),
        "an attacker key embedded in the jwk header": foreign.sign(_claims(probe), headers={"jwk": jwk}),
    }


def _without_kid(key: HostKey, claims: dict[str, Any]) -> str:
    return jwt.encode(claims, key.private_key, algorithm=key.alg, headers={"typ": "JWT"})


def _not_invalid_client(case: str, result: TokenResult) -> str | None:
    """AUTH-CIMD-03 says how a bad signature is refused: with invalid_client."""
    if result.ok:
        return f"an assertion {case} was accepted"
    if result.error != "invalid_client":
        return f"an assertion {case} was refused with {result.describe()}, not invalid_client"
    return None


def _not_refused(what: str, result: TokenResult) -> str | None:
    """AUTH-CIMD-04 counts any 4xx as a refusal (RFC 7523 §3.2 only names invalid_client as the usual error)."""
    if result.ok or not 400 <= result.status < 500:
        return f"an assertion {what} was not refused: {result.describe()}"
    return None


@alone("rotates the refresh token of the grant the assertion probes share", among="assertion probe")
@rule("AUTH-CIMD-03")
def test_foreign_key_assertion_is_refused(assertion_probe: AssertionProbe) -> None:
    run = AttackRun.of("AUTH-CIMD-03")
    for case, result in assertion_probe.each(_signature_cases(assertion_probe)):
        run.tried_case(case, _not_invalid_client(case, result))
    assertion_probe.control()
    run.conclude()


CLAIMS = "RFC 7523 §3"
CIMD04 = attack_table(
    "AUTH-CIMD-04",
    Attack("aud is another server's token endpoint", f"AUTH-CIMD-04; {CLAIMS} item 3", named=True),
    Attack("exp is ten minutes in the past", f"AUTH-CIMD-04; {CLAIMS} item 4", named=True),
    Attack("iss is not the client_id", f"AUTH-CIMD-04; {CLAIMS} item 1", named=True),
    Attack("sub is not the client_id", f"AUTH-CIMD-04; {CLAIMS} item 2", named=True),
    Attack("iss and sub are another client's id", f"{CLAIMS} items 1, 2"),
    Attack("no aud", f"{CLAIMS} item 3 (aud MUST be present)"),
    Attack("aud is the token endpoint with a suffix", f"{CLAIMS} item 3 (the AS's own identity, exactly)"),
    Attack("aud is an array holding only another server", f"{CLAIMS} item 3; RFC 7519 §4.1.3"),
    Attack("no exp", f"{CLAIMS} item 4 (exp MUST be present)"),
    Attack("exp as a numeric string", f"{CLAIMS} item 4; RFC 7519 §4.1.4 (NumericDate)"),
    Attack("nbf ten minutes in the future", f"{CLAIMS} item 5 (MUST NOT be accepted before nbf)"),
    Attack("no iss", f"{CLAIMS} item 1 (iss MUST be present)"),
    Attack("no sub", f"{CLAIMS} item 2 (sub MUST be present)"),
)


def _claim_cases(probe: AssertionProbe) -> dict[str, str]:
    identity = probe.tokens.client.identity
    assert identity is not None
    client_id, url, now = probe.tokens.client.client_id, probe.tokens.url, int(time.time())
    broken = {
        "aud is another server's token endpoint": BrokenAssertion.WRONG_AUD,
        "exp is ten minutes in the past": BrokenAssertion.EXPIRED,
        "iss is not the client_id": BrokenAssertion.WRONG_ISS,
        "sub is not the client_id": BrokenAssertion.WRONG_SUB,
        "iss and sub are another client's id": BrokenAssertion.WRONG_ISS_SUB,
    }
    cases = {case: identity.broken_assertion(kind, client_id, url) for case, kind in broken.items()}
    changed: dict[str, dict[str, Any]] = {
        "no aud": {"aud": ...},
        "aud is the token endpoint with a suffix": {"aud": url + "x"},
        "aud is an array holding only another server": {"aud": ["https://other-as.conformance.invalid/token"]},
        "no exp": {"exp": ...},
        "exp as a numeric string": {"exp": str(now + 60)},
        "nbf ten minutes in the future": {"nbf": now + 600},
        "no iss": {"iss": ...},
        "no sub": {"sub": ...},
    }
    cases.update({case: identity.key.sign(_claims(probe, **change)) for case, change in changed.items()})
    return cases


@alone("rotates the refresh token of the grant the assertion probes share", among="assertion probe")
@rule("AUTH-CIMD-04")
def test_bad_assertions_are_refused(assertion_probe: AssertionProbe) -> None:
    run = AttackRun.of("AUTH-CIMD-04")
    for case, result in assertion_probe.each(_claim_cases(assertion_probe)):
        problem = _not_refused(f"where {case}", result)
        if problem is None and result.error != "invalid_client":
            observe(f"{case}: refused with {result.error!r}, not invalid_client (RFC 7523 §3.2)")
        run.tried_case(case, problem)
    assertion_probe.control()
    run.conclude()


@alone("rotates the refresh token of the grant the assertion probes share", among="assertion probe")
@rule("AUTH-CIMD-07")
def test_replayed_assertion_is_refused(assertion_probe: AssertionProbe) -> None:
    """RFC 7523 §3 item 7 makes replay protection a MAY; the row asks it as a SHOULD."""
    first = assertion_probe.valid()
    if not first.ok:
        raise Blocked("AUTH-CIMD-02", f"a valid assertion was refused: {first.describe()}")
    replay = assertion_probe.broken(BrokenAssertion.REPLAYED_JTI, replay_of=assertion_probe.sent)
    problem = _not_refused("with a jti already used (a fresh assertion reusing it)", replay)
    expect(problem is None, problem or "")
    observe(f"a replayed assertion was refused: {replay.describe()}")


METHODS = "RFC 8414 §2 (token_endpoint_auth_methods_supported); RFC 7591 §2 (token_endpoint_auth_method)"
CIMD05 = attack_table(
    "AUTH-CIMD-05",
    Attack("client_secret_post, outside the intersection", f"AUTH-CIMD-05 (its example); {METHODS}", named=True),
    Attack("client_secret_basic, outside the intersection", f"AUTH-CIMD-05; {METHODS}; RFC 6749 §2.3.1"),
    Attack("none, outside the intersection", f"AUTH-CIMD-05; {METHODS}"),
    Attack("private_key_jwt, outside the intersection", f"AUTH-CIMD-05; {METHODS}; RFC 7523 §2.2"),
)


@rule("AUTH-CIMD-05")
def test_method_negotiation(linker: Linker, first_link: FlowAttempt) -> None:
    """The host's selection must be accepted and a method outside the intersection refused; another method of the
    intersection may be refused by the server's local policy (contract, Authentication 4), which is reported."""
    client = require_cimd(linker.host)
    decision = client.decision
    assert decision is not None  # a CIMD client always negotiates
    observe(decision.reason)
    if LEGACY_AUTH_METHOD in decision.intersection:
        expect(decision.chosen == LEGACY_AUTH_METHOD, f"the host chose {decision.chosen}: {decision.reason}")
    require_code(first_link)
    selected = first_link.client.auth_method
    token = first_link.token
    if token is not None and token.error == "invalid_client":
        fail(f"the method the host selected ({selected}, in the intersection) was refused: {token.describe()}")
    if not first_link.ok:
        raise Blocked(first_link.rule or "AUTH-FLOW-02", first_link.problem or "no token")
    observe(f"the host's selection {selected} was accepted (the first authorization)")

    def exchanged(method: str) -> TokenResult:
        """A fresh authorization's code exchanged with ``method``: each one independent of the others."""
        request = linker.request()
        return linker.host.tokens.exchange(request, linker.code(request), method=method)

    others = [method for method in decision.intersection if method != selected]
    tried = fanout.each(others, exchanged, limit=linker.concurrency, case=lambda m: f"{m}, in the intersection")
    for method, result in zip(others, tried, strict=True):
        if result.ok:
            observe(f"{method}, also in the intersection, was accepted")
        else:
            observe(
                f"{method}, also in the intersection, was refused ({result.describe()}): allowed as the server's "
                "local policy (contract, Authentication 4: 'unless local policy forbids it'), reported, not judged"
            )
    run = AttackRun.of("AUTH-CIMD-05")
    outside = {f"{method}, outside the intersection": method for method in SUPPORTED_METHODS}
    for case, method in list(outside.items()):
        if method in decision.intersection:
            run.inapplicable(case, "in the intersection: local policy decides it (reported above)")
            del outside[case]

    def refused(case: str) -> str | None:
        if not exchanged(outside[case]).ok:
            return None
        return f"{outside[case]}, outside the intersection {list(decision.intersection)}, was accepted"

    run.each(outside, refused, limit=linker.concurrency)
    run.conclude()


@rule("AUTH-CIMD-06")
def test_chosen_document_is_accepted(linker: Linker, first_link: FlowAttempt) -> None:
    client = require_cimd(linker.host)
    chosen = linker.host.redirect
    identity = linker.host.identity
    expected = (
        identity.stable_document_url
        if chosen.mode == "stable"
        else identity.callback_document_url(chosen.callback_id or "")
    )
    expect(client.client_id == expected, f"the host uses {client.client_id} in {chosen.mode} mode, not {expected}")
    observe(f"{chosen.mode} document {client.client_id}: {chosen.reason}")
    require_code(first_link)
    # The host's mode follows the server's issuer identification, which can change under a connection: the
    # authorization server must accept the host's other document too.
    meta = linker.host.as_metadata
    if chosen.mode == "stable":
        callback_id = new_callback_id()
        other = RedirectChoice(
            "callback-specific",
            "probe",
            identity.callback_document_url(callback_id),
            identity.callback_redirect_uri(callback_id),
            callback_id,
        )
    else:
        other = RedirectChoice("stable", "probe", identity.stable_document_url, identity.redirect_uri(), None)
    other_client = cimd_client(identity, meta, other)
    attempt = linker.attempt(client=other_client, exchange=False)
    if attempt.callback is None or not attempt.callback.code:
        fail(f"the host's {other.mode} document {other_client.client_id} was refused: {attempt.problem}")
    if attempt.accepted is not None:
        tokens = TokenEndpoint(linker.http, meta, other_client)
        result = tokens.exchange(attempt.request, attempt.accepted)
        if result.error == "invalid_client":
            fail(f"the token endpoint refused the host's {other.mode} document: {result.describe()}")
        if not result.ok:
            raise Blocked("AUTH-FLOW-02", f"token request for the {other.mode} document: {result.describe()}")
