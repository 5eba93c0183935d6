"""Client ID metadata documents with private_key_jwt: AUTH-CIMD-01 … 06.

The negative assertion probes (CIMD-03/04) ride on a refresh token of a fresh authorization: client authentication
comes before the grant, so a refused assertion spends nothing, and a control with a valid assertion afterwards
proves the refusals were about the assertion. Without a refresh token each probe gets a fresh code.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance import Blocked, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host.http import HostHTTP
from conformance.host.identity import LEGACY_AUTH_METHOD, BrokenAssertion, new_callback_id
from conformance.host.oauth import (
    SUPPORTED_METHODS,
    OAuthClient,
    RedirectChoice,
    TokenEndpoint,
    TokenResult,
    cimd_client,
)
from conformance.host.publisher import Publisher
from conformance.suites._linking import FlowAttempt, HostClient, LinkedAccount, Linker

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

    def valid(self) -> TokenResult:
        identity = self.tokens.client.identity
        assert identity is not None
        return self.send(identity.client_assertion(self.tokens.client.client_id, self.tokens.url))

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


@pytest.fixture(scope="module")
def assertion_probe(linker: Linker, first_link: FlowAttempt) -> AssertionProbe:
    client = require_cimd(linker.host)
    if client.auth_method != "private_key_jwt":
        needs("private_key_jwt in the intersection of the methods (the host then uses it)")
    require_code(first_link)
    if not first_link.ok:
        raise Blocked(first_link.rule or "AUTH-CIMD-02", first_link.problem or "no token")
    return AssertionProbe(linker, linker.link())


@pytest.fixture(scope="module")
def cimd_publisher(linker: Linker, request: pytest.FixtureRequest) -> Publisher:
    """The publisher, asked for only once the host identifies by CIMD: a DCR-only or predefined host needs none
    (its CIMD rules skip with the CIMD need, and the run is not incomplete for want of a certificate)."""
    require_cimd(linker.host)
    publisher: Publisher = request.getfixturevalue("publisher")
    return publisher


@pytest.fixture
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
    identity = second_publisher.identity
    assert identity is not None
    document = {
        **identity.client_document(),
        "token_endpoint_auth_methods_supported": ["none"],
        "token_endpoint_auth_method": "none",
    }
    for name in ("jwks_uri", "token_endpoint_auth_signing_alg"):
        document.pop(name)
    second_publisher.override("/oauth/client.json", 200, document)
    probe = OAuthClient("cimd", identity.stable_document_url, "none", (identity.redirect_uri(),), identity=identity)
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


@rule("AUTH-CIMD-03")
def test_foreign_key_assertion_is_refused(assertion_probe: AssertionProbe) -> None:
    result = assertion_probe.broken(BrokenAssertion.FOREIGN_KEY)
    if result.ok:
        fail(f"an assertion {BrokenAssertion.FOREIGN_KEY.description} was accepted")
    assertion_probe.control()
    expect(
        result.error == "invalid_client",
        f"an assertion {BrokenAssertion.FOREIGN_KEY.description} was refused with {result.describe()}, "
        "not invalid_client",
    )


@rule("AUTH-CIMD-04")
def test_bad_assertions_are_refused(assertion_probe: AssertionProbe) -> None:
    accepted = []
    kinds = [BrokenAssertion.WRONG_AUD, BrokenAssertion.EXPIRED, BrokenAssertion.WRONG_ISS, BrokenAssertion.WRONG_SUB]
    for kind in kinds:
        result = assertion_probe.broken(kind)
        if result.ok or result.status < 400 or result.status >= 500:
            accepted.append(f"{kind.description}: {result.describe()}")
    first = assertion_probe.valid()
    if not first.ok:
        raise Blocked("AUTH-CIMD-02", f"a valid assertion was refused: {first.describe()}")
    replay = assertion_probe.broken(BrokenAssertion.REPLAYED_JTI, replay_of=assertion_probe.tokens.last_assertion)
    if replay.ok or not 400 <= replay.status < 500:
        accepted.append(f"{BrokenAssertion.REPLAYED_JTI.description}: {replay.describe()}")
    expect(not accepted, "assertions that must be refused were not: " + "; ".join(accepted))


@rule("AUTH-CIMD-05")
def test_method_negotiation(linker: Linker, first_link: FlowAttempt) -> None:
    client = require_cimd(linker.host)
    decision = client.decision
    assert decision is not None  # a CIMD client always negotiates
    observe(decision.reason)
    if LEGACY_AUTH_METHOD in decision.intersection:
        expect(decision.chosen == LEGACY_AUTH_METHOD, f"the host chose {decision.chosen}: {decision.reason}")
    require_code(first_link)
    if not first_link.ok:
        raise Blocked(first_link.rule or "AUTH-FLOW-02", first_link.problem or "no token")
    problems = []
    for method in decision.intersection:
        if method == first_link.client.auth_method:
            continue  # the first authorization already used it
        request = linker.request()
        result = linker.host.tokens.exchange(request, linker.code(request), method=method)
        if not result.ok:
            problems.append(
                f"{method} (in the intersection {list(decision.intersection)}) was refused: {result.describe()}"
            )
    outside = next(m for m in ("client_secret_post", *SUPPORTED_METHODS) if m not in decision.intersection)
    request = linker.request()
    result = linker.host.tokens.exchange(request, linker.code(request), method=outside)
    if result.ok:
        problems.append(f"{outside}, outside the intersection {list(decision.intersection)}, was accepted")
    expect(not problems, "; ".join(problems))


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
