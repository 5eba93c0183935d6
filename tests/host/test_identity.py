"""The host identity: keys and thumbprints, CIMD documents, JWKS, client assertions and their broken variants."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import jwt
import pytest

from conformance.core._exceptions import ConfigError
from conformance.host.asmeta import schema_problems
from conformance.host.cimd_export import export_cimd
from conformance.host.identity import BrokenAssertion, HostIdentity, HostKey, jwk_thumbprint, load_or_generate_key

TOKEN_ENDPOINT = "https://as.example/token"
CLIENT_ID = "https://host.example/oauth/client.json"


@pytest.fixture(scope="module")
def ec_key() -> HostKey:
    return HostKey.generate("ec")


@pytest.fixture(scope="module")
def rsa_key() -> HostKey:
    return HostKey.generate("rsa")


def verify(token: str, key: HostKey, audience: str = TOKEN_ENDPOINT) -> dict[str, object]:
    public = jwt.PyJWK(key.public_jwk())
    claims: dict[str, object] = jwt.decode(token, public.key, algorithms=[key.alg], audience=audience)
    return claims


def test_rfc7638_thumbprint_of_the_rfc_example_key() -> None:
    # RFC 7638 §3.1 example RSA key and its published thumbprint.
    n = (
        "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3o"
        "knjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZH"
        "zu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEg"
        "U8awapJzKnqDKgw"
    )
    jwk = {"kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"}
    assert jwk_thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


@pytest.mark.parametrize("kind", ["ec", "rsa"])
def test_kid_is_the_thumbprint_and_the_jwks_is_public_only(kind: str, ec_key: HostKey, rsa_key: HostKey) -> None:
    key = ec_key if kind == "ec" else rsa_key
    identity = HostIdentity("https://host.example", key=key)
    (jwk,) = identity.jwks()["keys"]
    assert jwk["kid"] == key.kid == jwk_thumbprint(jwk)
    assert jwk["alg"] == ("ES256" if kind == "ec" else "RS256") and jwk["use"] == "sig"
    assert not {"d", "p", "q", "dp", "dq", "qi"} & set(jwk)
    if kind == "ec":
        assert jwk["crv"] == "P-256"


def test_key_round_trips_through_a_pem_file_with_mode_600(tmp_path: Path, ec_key: HostKey) -> None:
    path = ec_key.save_private(tmp_path / "keys" / "host.pem")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    loaded = load_or_generate_key(path)
    assert loaded.kid == ec_key.kid
    assert load_or_generate_key(None).kid != ec_key.kid  # a fresh key per run without a file


def test_unsuitable_key_files_are_refused(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    p384 = ec.generate_private_key(ec.SECP384R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "p384.pem").write_bytes(p384)
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(ConfigError, match="P-256"):
        HostKey.load(tmp_path / "p384.pem")
    with pytest.raises(ConfigError, match="cannot load"):
        HostKey.load(tmp_path / "junk.pem")


def test_stable_and_callback_specific_documents(ec_key: HostKey) -> None:
    identity = HostIdentity("https://host.example/", key=ec_key, redirect_base="https://app.example/oauth/cb")
    stable = identity.client_document()
    assert stable["client_id"] == "https://host.example/oauth/client.json" == identity.stable_document_url
    assert stable["redirect_uris"] == ["https://app.example/oauth/cb"]
    assert stable["token_endpoint_auth_methods_supported"] == ["none", "private_key_jwt"]
    assert stable["token_endpoint_auth_method"] == "private_key_jwt"
    assert stable["jwks_uri"] == "https://host.example/oauth/jwks.json"
    assert stable["grant_types"] == ["authorization_code", "refresh_token"] and stable["response_types"] == ["code"]
    assert stable["client_name"]
    specific = identity.client_document("cb42")
    assert specific["client_id"] == "https://host.example/oauth/cb42/client.json"
    assert specific["redirect_uris"] == ["https://app.example/oauth/cb/cb42"]
    for document in (stable, specific):
        assert "?" not in document["client_id"]
        assert schema_problems(document, "cimd") == []


def test_default_redirects_live_on_the_metadata_origin(ec_key: HostKey) -> None:
    identity = HostIdentity("https://host.example", key=ec_key)
    assert identity.redirect_uri() == "https://host.example/oauth/callback"
    assert identity.redirect_uri("x1") == "https://host.example/oauth/callback/x1"


@pytest.mark.parametrize("bad", ["", "a/b", "..", "a b", "a?b"])
def test_callback_ids_are_single_safe_segments(bad: str, ec_key: HostKey) -> None:
    with pytest.raises(ValueError):
        HostIdentity("https://host.example", key=ec_key).callback_document_url(bad)


@pytest.mark.parametrize("base", ["http://host.example", "https://host.example/?q=1", "host.example"])
def test_base_url_must_be_https_without_query(base: str, ec_key: HostKey) -> None:
    with pytest.raises(ConfigError):
        HostIdentity(base, key=ec_key)


@pytest.mark.parametrize("kind", ["ec", "rsa"])
def test_client_assertion_claims_and_signature(kind: str, ec_key: HostKey, rsa_key: HostKey) -> None:
    key = ec_key if kind == "ec" else rsa_key
    identity = HostIdentity("https://host.example", key=key)
    before = int(time.time())
    token = identity.client_assertion(CLIENT_ID, TOKEN_ENDPOINT)
    header = jwt.get_unverified_header(token)
    assert header["kid"] == key.kid and header["alg"] == key.alg
    claims = verify(token, key)
    assert claims["iss"] == claims["sub"] == CLIENT_ID
    assert claims["aud"] == TOKEN_ENDPOINT
    iat, exp = int(str(claims["iat"])), int(str(claims["exp"]))
    assert before <= iat <= before + 5 and 0 < exp - iat <= 300
    other = identity.client_assertion(CLIENT_ID, TOKEN_ENDPOINT)
    assert jwt.decode(other, options={"verify_signature": False})["jti"] != claims["jti"]


def test_issuer_is_accepted_as_the_audience_alternative(ec_key: HostKey) -> None:
    identity = HostIdentity("https://host.example", key=ec_key)
    token = identity.client_assertion(CLIENT_ID, "https://as.example")
    assert verify(token, ec_key, audience="https://as.example")["aud"] == "https://as.example"


def test_broken_assertions_break_exactly_one_thing(ec_key: HostKey) -> None:
    identity = HostIdentity("https://host.example", key=ec_key)

    def claims(kind: BrokenAssertion) -> dict[str, object]:
        token = identity.broken_assertion(kind, CLIENT_ID, TOKEN_ENDPOINT)
        return dict(jwt.decode(token, options={"verify_signature": False}))

    foreign = identity.broken_assertion(BrokenAssertion.FOREIGN_KEY, CLIENT_ID, TOKEN_ENDPOINT)
    assert jwt.get_unverified_header(foreign)["kid"] == ec_key.kid  # same kid: only the signature is wrong
    with pytest.raises(jwt.InvalidSignatureError):
        verify(foreign, ec_key)
    assert claims(BrokenAssertion.WRONG_AUD)["aud"] != TOKEN_ENDPOINT
    with pytest.raises(jwt.ExpiredSignatureError):
        verify(identity.broken_assertion("expired", CLIENT_ID, TOKEN_ENDPOINT), ec_key)
    wrong_iss = claims(BrokenAssertion.WRONG_ISS)
    assert wrong_iss["iss"] != CLIENT_ID and wrong_iss["sub"] == CLIENT_ID
    wrong_sub = claims(BrokenAssertion.WRONG_SUB)
    assert wrong_sub["sub"] != CLIENT_ID and wrong_sub["iss"] == CLIENT_ID
    both = claims(BrokenAssertion.WRONG_ISS_SUB)
    assert both["iss"] == both["sub"] != CLIENT_ID
    # Replay: a fresh, validly signed assertion that reuses the jti of one already sent.
    sent = identity.client_assertion(CLIENT_ID, TOKEN_ENDPOINT)
    first = verify(sent, ec_key)
    replayed = verify(identity.broken_assertion(BrokenAssertion.REPLAYED_JTI, CLIENT_ID, TOKEN_ENDPOINT), ec_key)
    assert replayed["jti"] == first["jti"] and int(str(replayed["iat"])) >= int(str(first["iat"]))
    identity.client_assertion(CLIENT_ID, TOKEN_ENDPOINT)  # a later assertion does not change an explicit replay
    explicit = identity.broken_assertion(BrokenAssertion.REPLAYED_JTI, CLIENT_ID, TOKEN_ENDPOINT, replay_of=sent)
    assert verify(explicit, ec_key)["jti"] == first["jti"]
    with pytest.raises(ValueError, match="earlier assertion"):
        HostIdentity("https://host.example", key=ec_key).broken_assertion("replayed_jti", CLIENT_ID, TOKEN_ENDPOINT)
    for kind in BrokenAssertion:
        assert kind.description


def test_export_layout_and_permissions(tmp_path: Path) -> None:
    public = tmp_path / "site"
    result = export_cimd(
        public, "https://me.github.io", private_key_path=tmp_path / "private" / "key.pem", callback_ids=["c1"]
    )
    files = sorted(str(p.relative_to(public)) for p in public.rglob("*") if p.is_file())
    assert files == ["oauth/c1/client.json", "oauth/client.json", "oauth/jwks.json"]
    document = json.loads((public / "oauth/client.json").read_text())
    assert document["client_id"] == result.client_id == "https://me.github.io/oauth/client.json"
    jwks = json.loads((public / "oauth/jwks.json").read_text())
    assert jwks["keys"][0]["kid"] == result.kid and "d" not in jwks["keys"][0]
    assert result.private_key is not None and stat.S_IMODE(result.private_key.stat().st_mode) == 0o600
    assert HostKey.load(result.private_key).kid == result.kid
    for path in public.rglob("*"):
        assert b"PRIVATE KEY" not in path.read_bytes() if path.is_file() else True


def test_export_refuses_a_private_key_inside_the_public_directory(tmp_path: Path, ec_key: HostKey) -> None:
    with pytest.raises(ConfigError, match="must not be written inside"):
        export_cimd(tmp_path, "https://me.example", ec_key, private_key_path=tmp_path / "oauth" / "key.pem")
    with pytest.raises(ConfigError, match="private_key_path"):
        export_cimd(tmp_path / "x", "https://me.example")


def test_export_with_a_given_key_writes_only_public_files(tmp_path: Path, ec_key: HostKey) -> None:
    result = export_cimd(tmp_path, "https://me.example", ec_key)
    assert result.private_key is None and result.kid == ec_key.kid
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["client.json", "jwks.json"]
    assert json.loads((tmp_path / "oauth/jwks.json").read_text())["keys"][0]["kid"] == ec_key.kid
