"""The host's OAuth client: PKCE, request building, RFC 9207 checks, token requests, negotiation, DCR."""

from __future__ import annotations

import base64
import collections
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import httpx
import jwt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core import _context
from conformance.core._exceptions import ConfigError
from conformance.host import InvalidResponse, oauth
from conformance.host._guard import UrlGuard
from conformance.host._redact import REDACTED
from conformance.host.asmeta import AsMetadata
from conformance.host.http import HostHTTP
from conformance.host.identity import ASSERTION_TYPE, HostIdentity, HostKey
from conformance.host.oauth import (
    PKCE_CHARSET,
    AuthorizationRequest,
    AuthorizationResponseRejected,
    ClientRegistry,
    OAuthClient,
    RegistrationError,
    RejectReason,
    TokenEndpoint,
    authorization_request,
    basic_credentials,
    choose_redirect_mode,
    choose_scopes,
    cimd_client,
    identify_client,
    negotiate_auth_method,
    new_pkce,
    parse_callback,
    predefined_client,
    register_client,
    s256,
    token_response_problems,
    validate_callback,
)
from tests._examples import examples

ISSUER = "https://as.example"
RESOURCE = "https://tools.example/mcp"
KEY = HostKey.generate()


def as_meta(**extra: Any) -> AsMetadata:
    document = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/auth",
        "token_endpoint": f"{ISSUER}/token",
        "registration_endpoint": f"{ISSUER}/reg",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "private_key_jwt", "client_secret_basic"],
        "authorization_response_iss_parameter_supported": True,
        **extra,
    }
    document = {k: v for k, v in document.items() if v is not None}
    return AsMetadata(expected_issuer=ISSUER, url=f"{ISSUER}/.well-known/x", via="test", document=document)


def identity() -> HostIdentity:
    return HostIdentity("https://host.example", key=KEY)


def http(handler: Callable[[httpx.Request], httpx.Response]) -> HostHTTP:
    return HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True), retry=None)


# -- PKCE ------------------------------------------------------------------------------------------------------


def test_s256_matches_the_rfc7636_appendix_b_example() -> None:
    assert s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


@settings(max_examples=examples(50), deadline=None, database=None)
@given(length=st.integers(43, 128))
def test_pkce_pairs_have_rfc7636_shape(length: int) -> None:
    pair = new_pkce(length)
    assert len(pair.verifier) == length and re.fullmatch(r"[A-Za-z0-9\-._~]+", pair.verifier)
    digest = hashlib.sha256(pair.verifier.encode()).digest()
    assert pair.challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode() and pair.method == "S256"
    assert len(pair.challenge) == 43 and "=" not in pair.challenge


def test_pkce_length_bounds_and_uniqueness() -> None:
    for bad in (42, 129):
        with pytest.raises(ValueError):
            new_pkce(bad)
    assert len({new_pkce().verifier for _ in range(20)}) == 20


def test_random_text_draws_every_character_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each byte the OS gives picks one character; bytes past the largest multiple of the alphabet's size are
    dropped (a plain ``byte % 66`` would make the first 58 characters likelier than the last 8)."""
    reads: list[int] = []

    def every_byte_once(n: int) -> bytes:
        reads.append(n)
        return bytes(range(256))[:n] if len(reads) == 1 else bytes(range(n))

    monkeypatch.setattr(oauth.secrets, "token_bytes", every_byte_once)
    assert len(PKCE_CHARSET) == 66
    text = oauth.random_text(256, PKCE_CHARSET)
    assert len(text) == 256 and reads[0] == 256 and len(reads) >= 2  # 58 bytes of 256 dropped: read again
    first = collections.Counter(text[:198])
    assert set(first) == set(PKCE_CHARSET) and set(first.values()) == {3}


# -- scopes and redirect mode ----------------------------------------------------------------------------------


def test_scope_order_challenge_then_prm_plus_oidc() -> None:
    oidc_as = ["openid", "email", "profile", "tools.read"]
    choice = choose_scopes("tools.write tools.read", ["tools.read"], oidc_as)
    assert choice.source == "challenge" and choice.value == "tools.write tools.read openid email profile"
    assert choice.oidc_added == ("openid", "email", "profile")
    assert choose_scopes(None, ["tools.read"], ["tools.read"]).value == "tools.read"
    assert choose_scopes("", ["a", "a"], None).value == "a"  # duplicates removed, order kept
    assert choose_scopes(None, None, ["openid", "offline_access"]).scopes == ("openid",)
    assert choose_scopes(None, None, ["email"], include_oidc=False).source == "none"
    assert choose_scopes(None, ["openid"], ["openid"]).value == "openid"  # not added twice


def test_redirect_mode_follows_issuer_identification() -> None:
    me = identity()
    stable = choose_redirect_mode(as_meta(), me, "cb1")
    assert stable.mode == "stable" and stable.client_id == me.stable_document_url
    assert stable.redirect_uri == me.redirect_uri() and stable.callback_id is None
    no_iss = choose_redirect_mode(as_meta(authorization_response_iss_parameter_supported=None), me, "cb1")
    assert no_iss.mode == "callback-specific" and no_iss.client_id == me.callback_document_url("cb1")
    assert no_iss.redirect_uri == me.redirect_uri("cb1") and "not true" in no_iss.reason
    mismatched = as_meta()
    mismatched.document["issuer"] = ISSUER + "/"
    assert choose_redirect_mode(mismatched, me, "cb1").mode == "callback-specific"
    legacy = choose_redirect_mode(
        as_meta(authorization_response_iss_parameter_supported=False), me, "c", legacy_stable=True
    )
    assert legacy.mode == "stable" and "legacy" in legacy.reason
    assert legacy.as_evidence()["mode"] == "stable"


# -- negotiation (contract Authentication item 4) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("as_methods", "chosen", "intersection"),
    [
        (["none", "private_key_jwt"], "private_key_jwt", ("none", "private_key_jwt")),
        (["private_key_jwt", "none"], "private_key_jwt", ("none", "private_key_jwt")),
        (["none", "client_secret_basic"], "none", ("none",)),
        (["private_key_jwt"], "private_key_jwt", ("private_key_jwt",)),
        (["client_secret_post", "client_secret_basic"], None, ()),
        ([], None, ()),
        (None, None, ()),  # absent: RFC 8414 default client_secret_basic
    ],
)
def test_cimd_method_negotiation(
    as_methods: list[str] | None, chosen: str | None, intersection: tuple[str, ...]
) -> None:
    decision = negotiate_auth_method(as_methods)
    assert decision.chosen == chosen and decision.intersection == intersection
    assert decision.as_evidence()["reason"] == decision.reason
    if as_methods is None:
        assert decision.as_methods == ("client_secret_basic",) and "default" in decision.as_methods_source
    if chosen is None:
        with pytest.raises(InvalidResponse, match="no common token endpoint auth method"):
            decision.require()
    elif chosen == "private_key_jwt":
        assert "legacy preference private_key_jwt is in the intersection" in decision.reason
    else:
        assert "not in it" in decision.reason


def test_negotiation_without_legacy_preference_uses_host_order_and_flags_unknown_values() -> None:
    decision = negotiate_auth_method(
        ["client_secret_post", "client_secret_basic", "magic"], ["client_secret_post", "client_secret_basic"], None
    )
    assert decision.chosen == "client_secret_basic" and decision.unknown_as_methods == ("magic",)


def test_cimd_client_uses_the_redirect_choice() -> None:
    me = identity()
    meta = as_meta(authorization_response_iss_parameter_supported=False)
    client = cimd_client(me, meta, choose_redirect_mode(meta, me, "cbz"))
    assert client.kind == "cimd" and client.client_id == me.callback_document_url("cbz")
    assert client.redirect_uris == (me.redirect_uri("cbz"),) and client.auth_method == "private_key_jwt"
    with pytest.raises(InvalidResponse):
        cimd_client(me, as_meta(token_endpoint_auth_methods_supported=["client_secret_basic"]))


def test_predefined_clients() -> None:
    public = predefined_client("pub-1", as_meta=as_meta())
    assert public.auth_method == "none" and public.decision is not None
    secret = predefined_client("conf-1", client_secret="s3cret-value", as_meta=as_meta())
    assert secret.auth_method == "client_secret_basic"
    explicit = predefined_client("conf-2", client_secret="s3cret-value", auth_method="client_secret_post")
    assert explicit.auth_method == "client_secret_post" and explicit.decision is None
    with pytest.raises(ConfigError, match="needs a client secret"):
        predefined_client("conf-3", auth_method="client_secret_basic")
    with pytest.raises(ConfigError, match="unsupported"):
        OAuthClient(kind="predefined", client_id="x", auth_method="tls_client_auth")


# -- the authorization request ---------------------------------------------------------------------------------


def test_authorization_url_carries_every_parameter_exactly() -> None:
    me = identity()
    client = cimd_client(me, as_meta())
    resource = "https://tools.example/mcp/"  # exact, trailing slash and all
    request = authorization_request(
        as_meta(authorization_endpoint=f"{ISSUER}/auth?tenant=a"),
        client,
        resource=resource,
        scopes=choose_scopes("tools.read", None, ["openid"]),
        id_token_hint="eyJhbGciOiJub25lIn0.e30.",
    )
    parts = urlsplit(request.url)
    query = parse_qs(parts.query)
    assert parts.path == "/auth" and query["tenant"] == ["a"]
    single = {k: v[0] for k, v in query.items()}
    assert single["response_type"] == "code" and single["client_id"] == me.stable_document_url
    assert single["redirect_uri"] == me.redirect_uri() and single["resource"] == resource
    assert single["scope"] == "tools.read openid" and "%20" in parts.query and "+" not in parts.query
    assert request.pkce is not None and single["code_challenge"] == request.pkce.challenge
    assert single["code_challenge_method"] == "S256" and single["state"] == request.state
    assert single["id_token_hint"].startswith("eyJ")
    assert request.issuer == ISSUER and request.iss_advertised


def test_negative_probes_can_drop_or_change_parameters() -> None:
    client = cimd_client(identity(), as_meta())
    request = authorization_request(
        as_meta(), client, resource=None, scopes=[], code_challenge=None, code_challenge_method="plain"
    )
    params = request.params()
    assert "code_challenge" not in params and params["code_challenge_method"] == "plain"
    assert "resource" not in params and "scope" not in params


# -- callbacks and RFC 9207 ------------------------------------------------------------------------------------


def make_request(*, advertised: bool = True) -> AuthorizationRequest:
    return AuthorizationRequest(
        authorization_endpoint=f"{ISSUER}/auth",
        client_id="https://host.example/oauth/client.json",
        redirect_uri="https://host.example/oauth/callback",
        resource=RESOURCE,
        scope="tools.read",
        issuer=ISSUER,
        iss_advertised=advertised,
        state="st4te",
    )


def callback(query: str, base: str = "https://host.example/oauth/callback") -> str:
    return f"{base}?{query}"


def test_parse_callback_reads_without_following() -> None:
    params = parse_callback(callback("code=abc&state=st4te&iss=https%3A%2F%2Fas.example"))
    assert (params.code, params.state, params.iss, params.is_error) == ("abc", "st4te", ISSUER, False)
    error = parse_callback(callback("error=access_denied&error_description=User+denied&state=s"))
    assert error.is_error and error.error_description == "User denied" and error.code is None
    fragment = parse_callback("https://host.example/cb#code=x&state=y")
    assert fragment.in_fragment and fragment.code == "x"
    assert parse_callback(callback("iss=a&iss=b&state=s")).duplicated == ("iss",)


def test_accepted_success_and_error_responses() -> None:
    accepted = validate_ok("code=abc&state=st4te&iss=https%3A%2F%2Fas.example")
    assert accepted.code == "abc" and accepted.iss_checked
    denied = validate_ok("error=access_denied&state=st4te&iss=https%3A%2F%2Fas.example")
    assert denied.error == "access_denied" and denied.code is None
    not_advertised = AuthorizationRequest(**{**make_request().__dict__, "iss_advertised": False})
    quiet = validate_callback(not_advertised, parse_callback(callback("code=abc&state=st4te")))
    assert not quiet.iss_checked


def validate_ok(query: str) -> Any:
    return validate_callback(make_request(), parse_callback(callback(query)))


@pytest.mark.parametrize(
    ("query", "reason", "advertised", "words"),
    [
        ("code=abc&state=st4te", RejectReason.ISS_MISSING, True, "no iss although"),
        ("error=access_denied&state=st4te", RejectReason.ISS_MISSING, True, "error response has no iss"),
        ("code=abc&state=st4te&iss=https%3A%2F%2Fas.example%2F", RejectReason.ISS_MISMATCH, True, "not identical"),
        ("code=abc&state=st4te&iss=https%3A%2F%2FAS.example", RejectReason.ISS_MISMATCH, True, "not identical"),
        ("code=abc&state=st4te&iss=https%3A%2F%2Fevil.example", RejectReason.ISS_MISMATCH, False, "not identical"),
        ("error=x&state=st4te&iss=https%3A%2F%2Fevil.example", RejectReason.ISS_MISMATCH, True, "error response iss"),
        ("code=abc&state=st4te&iss=a&iss=https%3A%2F%2Fas.example", RejectReason.ISS_DUPLICATED, True, "more than"),
        ("code=abc&iss=https%3A%2F%2Fas.example", RejectReason.STATE_MISSING, True, "no state"),
        ("code=abc&state=other&iss=https%3A%2F%2Fas.example", RejectReason.STATE_MISMATCH, True, "state does not"),
        ("state=st4te&iss=https%3A%2F%2Fas.example", RejectReason.CODE_MISSING, True, "neither code nor error"),
    ],
)
def test_rfc9207_and_state_rejections_say_why(query: str, reason: RejectReason, advertised: bool, words: str) -> None:
    request = make_request(advertised=advertised)
    with pytest.raises(AuthorizationResponseRejected, match=words) as info:
        validate_callback(request, parse_callback(callback(query)))
    assert info.value.reason is reason and isinstance(info.value, InvalidResponse)
    assert info.value.callback.url.endswith(query)


def test_a_response_at_another_uri_is_rejected() -> None:
    wrong = parse_callback(callback("code=a&state=st4te&iss=https%3A%2F%2Fas.example", "https://evil.example/cb"))
    with pytest.raises(AuthorizationResponseRejected) as info:
        validate_callback(make_request(), wrong)
    assert info.value.reason is RejectReason.WRONG_REDIRECT


# -- the token endpoint ----------------------------------------------------------------------------------------


class TokenAS:
    """A fake token endpoint that records the requests and answers like a well-behaved AS."""

    def __init__(self, body: dict[str, Any] | None = None, status: int = 200) -> None:
        self.requests: list[httpx.Request] = []
        self.body = body or {
            "access_token": "at-123456",
            "token_type": "bearer",
            "expires_in": 300,
            "refresh_token": "rt-123456",
            "id_token": "eyJhbGciOiJSUzI1NiJ9.e30.sig",
        }
        self.status = status

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, json=self.body)

    def form(self, index: int = -1) -> dict[str, str]:
        return dict(parse_qsl(self.requests[index].content.decode()))


def test_code_exchange_with_private_key_jwt() -> None:
    fake = TokenAS()
    client_http = http(fake)
    me = identity()
    endpoint = TokenEndpoint(client_http, as_meta(), cimd_client(me, as_meta()))
    result = endpoint.exchange_code("the-code", "v" * 43, me.redirect_uri(), RESOURCE)
    assert result.ok and result.require_bearer() == "at-123456" and result.method == "private_key_jwt"
    assert result.refresh_token == "rt-123456" and result.expires_in == 300
    form = fake.form()
    assert form["grant_type"] == "authorization_code" and form["code"] == "the-code"
    assert form["code_verifier"] == "v" * 43 and form["redirect_uri"] == me.redirect_uri()
    assert form["resource"] == RESOURCE and form["client_assertion_type"] == ASSERTION_TYPE
    claims = jwt.decode(
        form["client_assertion"], jwt.PyJWK(me.jwks()["keys"][0]).key, algorithms=["ES256"], audience=f"{ISSUER}/token"
    )
    assert claims["iss"] == claims["sub"] == me.stable_document_url
    assert fake.requests[-1].headers["content-type"] == "application/x-www-form-urlencoded"
    assert "authorization" not in fake.requests[-1].headers


def test_assertion_audience_can_be_the_issuer() -> None:
    fake = TokenAS()
    endpoint = TokenEndpoint(http(fake), as_meta(), cimd_client(identity(), as_meta()), assertion_audience=ISSUER)
    endpoint.exchange_code("c0de", "v" * 43, "https://host.example/oauth/callback", RESOURCE)
    assert jwt.decode(fake.form()["client_assertion"], options={"verify_signature": False})["aud"] == ISSUER


@pytest.mark.parametrize("method", ["none", "client_secret_post", "client_secret_basic"])
def test_other_client_authentication_methods(method: str) -> None:
    fake = TokenAS()
    client = OAuthClient(kind="predefined", client_id="id:with space", auth_method=method, client_secret="p@ss/w:rd")
    TokenEndpoint(http(fake), as_meta(), client).exchange_code("c0de", "v" * 43, "https://h/cb", None)
    form, headers = fake.form(), fake.requests[-1].headers
    assert "resource" not in form and "client_assertion" not in form
    if method == "none":
        assert form["client_id"] == "id:with space" and "client_secret" not in form
    elif method == "client_secret_post":
        assert form["client_secret"] == "p@ss/w:rd"
    else:
        assert "client_id" not in form
        decoded = base64.b64decode(headers["authorization"].split()[1]).decode()
        assert decoded == "id%3Awith%20space:p%40ss%2Fw%3Ard"  # RFC 6749 §2.3.1: each part urlencoded
    assert basic_credentials("a", "b") == "Basic " + base64.b64encode(b"a:b").decode()


def test_method_override_and_broken_assertion_for_negative_probes() -> None:
    fake = TokenAS(status=401, body={"error": "invalid_client", "error_description": "bad assertion"})
    endpoint = TokenEndpoint(http(fake), as_meta(), cimd_client(identity(), as_meta()))
    result = endpoint.exchange_code("c0de", "v" * 43, "https://h/cb", RESOURCE, assertion="eyJ.broken.sig")
    assert fake.form()["client_assertion"] == "eyJ.broken.sig"
    assert (
        not result.ok and result.error == "invalid_client" and result.describe() == "401 invalid_client (bad assertion)"
    )
    with pytest.raises(InvalidResponse, match=r"token request \(private_key_jwt\): 401 invalid_client"):
        result.require_bearer()
    endpoint.exchange_code("c0de", "v" * 43, "https://h/cb", RESOURCE, method="client_secret_post")
    assert "client_secret" in fake.form() and "client_assertion" not in fake.form()


def test_secrets_never_reach_evidence() -> None:
    fake = TokenAS()
    client_http = http(fake)
    endpoint = TokenEndpoint(client_http, as_meta(), cimd_client(identity(), as_meta()))
    record = _context.begin()
    try:
        result = endpoint.exchange_code("code-value-123", "verifier-value-" + "x" * 30, "https://h/cb", RESOURCE)
        endpoint.refresh(result.refresh_token or "", resource=RESOURCE)
    finally:
        _context.end()
    text = json.dumps(record.exchanges)
    for secret in ("code-value-123", "verifier-value-", "at-123456", "rt-123456", "eyJhbGciOiJSUzI1NiJ9"):
        assert secret not in text
    assert REDACTED in text
    assert client_http.redactor.scrub("token at-123456") == f"token {REDACTED}"


def test_refresh_sends_the_refresh_grant() -> None:
    fake = TokenAS()
    client = OAuthClient(kind="dcr", client_id="c1", auth_method="none")
    result = TokenEndpoint(http(fake), as_meta(), client).refresh("rt-1", resource=RESOURCE, scope="tools.read")
    assert result.ok
    assert fake.form() == {
        "grant_type": "refresh_token",
        "refresh_token": "rt-1",
        "resource": RESOURCE,
        "scope": "tools.read",
        "client_id": "c1",
    }


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"access_token": "a", "token_type": "Bearer"}, None),
        ({"access_token": "a", "token_type": "BEARER"}, None),
        ({"access_token": "a", "token_type": "DPoP"}, "token_type"),
        ({"access_token": "a"}, "token_type"),
        ({"access_token": 5, "token_type": "Bearer"}, "access_token"),
        ({"token_type": "Bearer"}, "access_token"),
        ({"access_token": "a", "token_type": "Bearer", "expires_in": "300"}, "expires_in"),
        ([], "JSON object"),
    ],
)
def test_token_response_validation(body: Any, problem: str | None) -> None:
    problems = token_response_problems(200, body)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems)
    assert token_response_problems(400, body) == []


def test_exchange_after_an_accepted_callback_uses_the_request_values() -> None:
    fake = TokenAS()
    client = cimd_client(identity(), as_meta())
    request = authorization_request(as_meta(), client, resource=RESOURCE, scopes="tools.read")
    accepted = validate_callback(
        request, parse_callback(f"{request.redirect_uri}?code=zz-code&state={request.state}&iss={ISSUER}")
    )
    TokenEndpoint(http(fake), as_meta(), client).exchange(request, accepted)
    assert request.pkce is not None and fake.form()["code_verifier"] == request.pkce.verifier
    denied = validate_callback(
        request, parse_callback(f"{request.redirect_uri}?error=access_denied&state={request.state}&iss={ISSUER}")
    )
    with pytest.raises(InvalidResponse, match="access_denied"):
        TokenEndpoint(http(fake), as_meta(), client).exchange(request, denied)


# -- DCR -------------------------------------------------------------------------------------------------------


def test_registration_negotiates_and_is_reused_per_run() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        return httpx.Response(
            201,
            json={
                **body,
                "client_id": f"dcr-{len(seen)}",
                "client_secret": "dcr-secret-value",
                "registration_access_token": "rat-value-1",
            },
        )

    client_http = http(handler)
    registry = ClientRegistry()
    # The AS's order is its preference: the first it lists that the host can do.
    meta = as_meta(token_endpoint_auth_methods_supported=["private_key_jwt", "client_secret_basic"])
    first = registry.get_or_register(client_http, meta, ["https://h/cb"], identity=identity())
    again = registry.get_or_register(client_http, meta, ["https://h/cb"], identity=identity())
    assert first is again and registry.registrations == 1 and len(seen) == 1
    assert first.kind == "dcr" and first.client_id == "dcr-1" and first.auth_method == "private_key_jwt"
    assert seen[0]["token_endpoint_auth_method"] == "private_key_jwt" and seen[0]["jwks"]["keys"]
    assert seen[0]["redirect_uris"] == ["https://h/cb"]
    assert first.registration is not None and "client_secret" not in first.registration
    assert client_http.redactor.scrub("dcr-secret-value rat-value-1") == f"{REDACTED} {REDACTED}"
    without_key = register_client(client_http, meta, ["https://h/cb"])
    assert seen[-1]["token_endpoint_auth_method"] == "client_secret_basic"
    assert without_key.client_secret == "dcr-secret-value"
    basic_first = as_meta(token_endpoint_auth_methods_supported=["client_secret_basic", "private_key_jwt"])
    register_client(client_http, basic_first, ["https://h/cb"], identity=identity())
    assert seen[-1]["token_endpoint_auth_method"] == "client_secret_basic"
    register_client(client_http, basic_first, ["https://h/cb"], identity=identity(), method="private_key_jwt")
    assert seen[-1]["token_endpoint_auth_method"] == "private_key_jwt"  # --client-auth-method


@pytest.mark.parametrize(
    ("status", "body", "words"),
    [
        (400, {"error": "invalid_redirect_uri", "error_description": "nope"}, "400: invalid_redirect_uri"),
        (201, {"client_name": "x"}, "no client_id"),
        (201, {"client_id": "c", "token_endpoint_auth_method": "client_secret_post"}, "no client_secret"),
    ],
)
def test_registration_failures_say_why(status: int, body: dict[str, Any], words: str) -> None:
    client_http = http(lambda r: httpx.Response(status, json=body))
    with pytest.raises(RegistrationError, match=words):
        register_client(client_http, as_meta(), ["https://h/cb"])
    with pytest.raises(RegistrationError, match="no registration_endpoint"):
        register_client(client_http, as_meta(registration_endpoint=None), ["https://h/cb"])


# -- registration as hosts do it: a native loopback client, else an https redirect on an intercepted host -----

LOOPBACK_CB = "http://127.0.0.1/oauth/callback/abc"
INTERCEPTED_CB = "https://conformance-host.invalid/oauth/callback/abc"


def registering_as(refuse: Callable[[dict[str, Any]], str | None]) -> tuple[HostHTTP, list[dict[str, Any]]]:
    """An AS that refuses (400 invalid_redirect_uri, the reason ``refuse`` gives) or registers each metadata."""
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        metadata = json.loads(request.content)
        sent.append(metadata)
        why = refuse(metadata)
        if why:
            return httpx.Response(400, json={"error": "invalid_redirect_uri", "error_description": why})
        return httpx.Response(201, json={**metadata, "client_id": f"c{len(sent)}"})

    return http(handler), sent


def test_a_loopback_redirect_is_registered_as_a_native_client() -> None:
    client_http, sent = registering_as(lambda m: None)
    client = ClientRegistry().get_or_register(client_http, as_meta(), [LOOPBACK_CB])
    assert sent[0]["application_type"] == "native" and client.redirect_uris == (LOOPBACK_CB,)
    register_client(client_http, as_meta(), [INTERCEPTED_CB])
    assert "application_type" not in sent[1]  # an https redirect: a web client, the default


def test_a_refused_redirect_is_registered_in_its_other_form_and_the_evidence_holds_both() -> None:
    web_only = "web clients require https redirect URIs"
    client_http, sent = registering_as(lambda m: web_only if m["redirect_uris"][0].startswith("http:") else None)
    registry = ClientRegistry()
    _context.begin(["AUTH-ASM-07"])  # registered while another check set the host's client up
    try:
        client = registry.get_or_register(client_http, as_meta(), [LOOPBACK_CB])
    finally:
        _context.end()
    assert [m["redirect_uris"] for m in sent] == [[LOOPBACK_CB], [INTERCEPTED_CB]]
    assert client.redirect_uris == (INTERCEPTED_CB,) and registry.registrations == 1
    assert registry.get_or_register(client_http, as_meta(), [LOOPBACK_CB]) is client  # kept under the URIs asked
    assert [e["status"] for e in registry.evidence(client)] == [400, 201]
    client_http, sent = registering_as(
        lambda m: "native clients only" if m["redirect_uris"][0].startswith("https:") else None
    )
    other = ClientRegistry().get_or_register(client_http, as_meta(), [INTERCEPTED_CB])
    assert other.redirect_uris == (LOOPBACK_CB,) and sent[1]["application_type"] == "native"


def test_a_server_refusing_both_forms_says_what_it_refused() -> None:
    client_http, sent = registering_as(lambda m: "no")
    with pytest.raises(oauth.RegistrationRefused) as caught:
        ClientRegistry().get_or_register(client_http, as_meta(), [LOOPBACK_CB])
    assert len(sent) == 2
    assert "the loopback redirect http://127.0.0.1/oauth/callback/abc as a native client" in caught.value.message
    assert "https://conformance-host.invalid/oauth/callback/abc on a host name the harness intercepts" in (
        caught.value.message
    )
    broken = http(lambda r: httpx.Response(500, json={"error": "server_error"}))
    with pytest.raises(RegistrationError) as failed:  # a failing endpoint is no refusal of the host's choice
        ClientRegistry().get_or_register(broken, as_meta(), [LOOPBACK_CB])
    assert not isinstance(failed.value, oauth.RegistrationRefused)


# -- how the host identifies itself (AUTH-ASM-05) --------------------------------------------------------------


def test_identify_client_prefers_configured_then_cimd_then_dcr() -> None:
    registered: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        registered.append(json.loads(request.content)["redirect_uris"][0])
        return httpx.Response(201, json={"client_id": "dcr-x", "token_endpoint_auth_method": "none"})

    client_http, me = http(handler), identity()
    meta = as_meta(client_id_metadata_document_supported=True)
    redirect = choose_redirect_mode(meta, me, "cb7")
    assert identify_client(client_http, meta, me, redirect).kind == "cimd"
    configured = identify_client(client_http, meta, me, redirect, client_id="pre-1", client_secret="pre-secret")
    assert configured.kind == "predefined" and configured.redirect_uris == (redirect.redirect_uri,)
    registry = ClientRegistry()
    dcr = identify_client(client_http, as_meta(), me, redirect, registry=registry)
    again = identify_client(client_http, as_meta(), me, redirect, registry=registry)
    assert dcr is again and dcr.kind == "dcr" and registered == [redirect.redirect_uri]
    forced = identify_client(client_http, meta, me, redirect, mode="dcr", registry=registry)
    assert forced.kind == "dcr"


def test_identify_client_says_what_each_way_lacked() -> None:
    meta = as_meta(registration_endpoint=None)
    me = identity()
    redirect = choose_redirect_mode(meta, me, "cb8")
    with pytest.raises(InvalidResponse) as info:
        identify_client(http(lambda r: httpx.Response(500)), meta, me, redirect)
    assert "no predefined client" in info.value.message and "CIMD:" in info.value.message
    assert "DCR: no registration_endpoint" in info.value.message
    with pytest.raises(ConfigError):
        identify_client(http(lambda r: httpx.Response(500)), meta, me, redirect, mode="magic")


def test_a_token_refusal_without_an_oauth_error_shows_what_the_server_said() -> None:
    """A 403 whose body has no OAuth `error` member (a CSRF guard, a framework's own error) is described with the
    start of its body, not as a bare "403"."""
    body = {"code": "MISSING_OR_NULL_ORIGIN", "message": "Missing or null Origin"}
    described = oauth.TokenResult(httpx.Response(403, json=body), body, "none").describe()
    assert described.startswith("403, no OAuth error member: ") and "MISSING_OR_NULL_ORIGIN" in described
    standard = {"error": "invalid_grant", "error_description": "bad verifier"}
    assert (
        oauth.TokenResult(httpx.Response(400, json=standard), standard, "none").describe()
        == "400 invalid_grant (bad verifier)"
    )
    assert oauth.TokenResult(httpx.Response(500, text=""), None, "none").describe() == "500"
