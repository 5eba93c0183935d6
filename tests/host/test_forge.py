"""Forged and harness-issued tokens, checked with pyjwt (and the reference tool server's verifier)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
import trustme
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import TargetUnreachable
from conformance.host._guard import UrlGuard
from conformance.host._redact import REDACTED, Redactor
from conformance.host.forge import (
    ForgeError,
    HarnessIssuer,
    JwksServer,
    alg_none,
    b64url_decode,
    split_jwt,
    tamper_payload,
    tamper_signature,
)
from conformance.host.http import HostHTTP
from tests._examples import examples

RESOURCE = "https://tools.example/mcp"
SCOPES = ["tools.read", "tools.write"]


@pytest.fixture(scope="module")
def idp() -> HarnessIssuer:
    """Stands in for the target's real authorization server."""
    return HarnessIssuer("https://idp.example")


@pytest.fixture(scope="module")
def real_token(idp: HarnessIssuer) -> str:
    return idp.valid(RESOURCE, SCOPES, subject="alice")


def verify(token: str, issuer: HarnessIssuer, **options: Any) -> dict[str, Any]:
    claims: dict[str, Any] = jwt.decode(
        token, issuer.key.public_key(), algorithms=["ES256"], audience=RESOURCE, issuer=issuer.issuer, **options
    )
    return claims


def test_the_real_token_verifies(real_token: str, idp: HarnessIssuer) -> None:
    assert verify(real_token, idp)["sub"] == "alice"


def test_tampered_payload_keeps_header_and_signature(real_token: str, idp: HarnessIssuer) -> None:
    forged = tamper_payload(real_token)
    assert forged.split(".")[0] == real_token.split(".")[0] and forged.split(".")[2] == real_token.split(".")[2]
    assert jwt.decode(forged, options={"verify_signature": False})["sub"] == "alice-tampered"
    with pytest.raises(jwt.InvalidSignatureError):
        verify(forged, idp)


def test_tampered_signature_keeps_length(real_token: str, idp: HarnessIssuer) -> None:
    forged = tamper_signature(real_token)
    assert forged.rsplit(".", 1)[0] == real_token.rsplit(".", 1)[0]
    assert len(b64url_decode(forged.split(".")[2])) == len(b64url_decode(real_token.split(".")[2]))
    with pytest.raises(jwt.InvalidSignatureError):
        verify(forged, idp)


def test_alg_none_carries_the_claims_unsigned(real_token: str, idp: HarnessIssuer) -> None:
    forged = alg_none(real_token)
    header, claims, signature = split_jwt(forged)
    assert header == {"alg": "none", "typ": "JWT"} and signature == b"" and forged.endswith(".")
    assert claims == split_jwt(real_token)[1]
    with pytest.raises(jwt.InvalidAlgorithmError):
        verify(forged, idp)


def test_resigned_by_the_untrusted_harness_key(real_token: str, idp: HarnessIssuer) -> None:
    harness = HarnessIssuer("https://harness.example")
    forged = harness.resign(real_token)
    assert split_jwt(forged)[1] == split_jwt(real_token)[1]
    assert jwt.get_unverified_header(forged)["kid"] == harness.kid
    with pytest.raises(jwt.InvalidSignatureError):
        verify(forged, idp)
    claims = jwt.decode(forged, harness.key.public_key(), algorithms=["ES256"], audience=RESOURCE)
    assert claims["iss"] == idp.issuer  # the harness key verifies it; the target's trusted key does not


@settings(max_examples=examples(40), deadline=None)
@given(st.dictionaries(st.sampled_from(["sub", "scope", "aud", "exp", "admin"]), st.integers() | st.text(max_size=6)))
def test_any_payload_change_breaks_the_signature(changes: dict[str, Any]) -> None:
    idp = HarnessIssuer("https://idp.example")
    token = idp.valid(RESOURCE, SCOPES)
    forged = tamper_payload(token, changes)
    claims = split_jwt(forged)[1]
    assert all(claims[k] == v for k, v in changes.items())
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(forged, idp.key.public_key(), algorithms=["ES256"], options={"verify_aud": False})


@pytest.mark.parametrize("token", ["a.b", "x.y.z", "e30.W10.", f"{'e30'}.{'bnVsbA'}.sig"])
def test_malformed_input_is_a_forge_error(token: str) -> None:
    with pytest.raises(ForgeError):
        split_jwt(token)


def test_minted_tokens_are_registered_as_secrets() -> None:
    redactor = Redactor()
    token = HarnessIssuer("https://harness.example", redactor=redactor).valid(RESOURCE, SCOPES)
    assert redactor.scrub(f"sent {token}") == f"sent {REDACTED}" and token in redactor._secrets


# ------------------------------------------------------------------------------ harness-issued tokens


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("jwks-tls")
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    ca_file, pem = directory / "ca.pem", directory / "server.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    leaf.private_key_and_cert_chain_pem.write_to_path(str(pem))
    return ca_file, pem


@pytest.fixture(scope="module")
def jwks_server(tls_files: tuple[Path, Path]) -> Iterator[JwksServer]:
    _, pem = tls_files
    issuer = HarnessIssuer("https://harness-issuer.example")
    with JwksServer(issuer, certfile=pem, keyfile=pem) as server:
        yield server


def test_jwks_server_publishes_keys_and_discovery(jwks_server: JwksServer, tls_files: tuple[Path, Path]) -> None:
    with HostHTTP(guard=UrlGuard(), ca_bundle=tls_files[0], retry=None) as host:
        keys = host.get(jwks_server.jwks_url).json()
        discovery = host.get(jwks_server.origin + "/.well-known/openid-configuration").json()
        missing = host.get(jwks_server.origin + "/nope")
    assert keys == jwks_server.issuer.jwks() and keys["keys"][0]["kid"] == jwks_server.issuer.kid
    assert discovery == {"issuer": jwks_server.issuer.issuer, "jwks_uri": jwks_server.jwks_url}
    assert missing.status_code == 404
    assert [f.path for f in jwks_server.fetches][-3:] == [
        "/jwks.json",
        "/.well-known/openid-configuration",
        "/nope",
    ]


def test_variants_verified_against_the_published_jwks(jwks_server: JwksServer, tls_files: tuple[Path, Path]) -> None:
    issuer = jwks_server.issuer
    with HostHTTP(guard=UrlGuard(), ca_bundle=tls_files[0], retry=None) as host:
        jwks = host.get(jwks_server.jwks_url).json()
    key = jwt.PyJWK(jwks["keys"][0]).key

    def check(token: str) -> dict[str, Any]:
        claims: dict[str, Any] = jwt.decode(token, key, algorithms=["ES256"], audience=RESOURCE, issuer=issuer.issuer)
        return claims

    assert check(issuer.valid(RESOURCE, SCOPES))["scope"] == "tools.read tools.write"
    with pytest.raises(jwt.ExpiredSignatureError):
        check(issuer.expired(RESOURCE, SCOPES))
    with pytest.raises(jwt.ImmatureSignatureError):
        check(issuer.not_yet_valid(RESOURCE, SCOPES))
    with pytest.raises(jwt.InvalidIssuerError):
        check(issuer.wrong_issuer(RESOURCE, SCOPES))
    with pytest.raises(jwt.InvalidAudienceError):
        check(issuer.wrong_audience(RESOURCE, SCOPES))
    assert check(issuer.missing_scope(RESOURCE, SCOPES, "tools.write"))["scope"] == "tools.read"


def test_reference_verifier_trusts_the_harness_issuer(jwks_server: JwksServer, tls_files: tuple[Path, Path]) -> None:
    """The intended use: the reference tool server started with --trusted-issuer ISSUER=JWKS_URL."""
    from conformance.reference.toolserver.verifier import JwtVerifier, TokenError

    issuer = jwks_server.issuer
    outsider = HarnessIssuer("https://outsider.example")

    async def outcomes() -> dict[str, str]:
        verifier = JwtVerifier(
            resource=RESOURCE, issuers={issuer.issuer: jwks_server.jwks_url}, ca_file=str(tls_files[0])
        )
        valid = issuer.valid(RESOURCE, SCOPES)
        tokens = {
            "valid": valid,
            "expired": issuer.expired(RESOURCE, SCOPES),
            "nbf": issuer.not_yet_valid(RESOURCE, SCOPES),
            "iss": issuer.wrong_issuer(RESOURCE, SCOPES),
            "aud": issuer.wrong_audience(RESOURCE, SCOPES),
            "payload": tamper_payload(valid),
            "signature": tamper_signature(valid),
            "none": alg_none(valid),
            "foreign": outsider.resign(valid),
        }
        found = {}
        try:
            for name, token in tokens.items():
                try:
                    await verifier.verify(token)
                    found[name] = "accepted"
                except TokenError:
                    found[name] = "refused"
        finally:
            await verifier.aclose()
        return found

    found = asyncio.run(outcomes())
    assert found.pop("valid") == "accepted"
    assert set(found.values()) == {"refused"}, json.dumps(found)


def test_a_client_that_does_not_trust_the_jwks_server_is_recorded(jwks_server: JwksServer) -> None:
    with HostHTTP(guard=UrlGuard(), retry=None) as untrusting, pytest.raises(TargetUnreachable, match="not trusted"):
        untrusting.get(jwks_server.jwks_url)
    deadline = time.monotonic() + 5
    while not jwks_server.errors and time.monotonic() < deadline:
        time.sleep(0.02)
    assert jwks_server.errors and jwks_server.errors[-1].startswith("127.0.0.1: ")
