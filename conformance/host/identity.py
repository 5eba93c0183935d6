"""The host's client identity: its signing key, CIMD documents, JWKS and RFC 7523 client assertions.

Layout on the metadata origin (``base_url``, e.g. ``https://host.example``):

- ``{origin}/oauth/client.json``               stable CIMD document (stable redirect URI)
- ``{origin}/oauth/{callback_id}/client.json`` callback-specific document (redirect ``{redirect_base}/{callback_id}``)
- ``{origin}/oauth/jwks.json``                 public JWKS for ``private_key_jwt``

**Decision (assertion audience):** the ``aud`` of a client assertion is the token endpoint URL, the value RFC 7523
§3 names and the one every AS accepts; callers may pass the issuer identifier instead (``audience=issuer``), which
the newer guidance prefers and node-oidc-provider also accepts.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from conformance.core._exceptions import ConfigError

KeyKind = Literal["ec", "rsa"]
HOST_AUTH_METHODS = ("none", "private_key_jwt")  # what the host supports for a CIMD client (contract)
LEGACY_AUTH_METHOD = "private_key_jwt"  # the legacy singular preference published during the SEP-3149 transition
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
DEFAULT_ASSERTION_LIFETIME = 60  # seconds: short, as RFC 7523 advises, but tolerant of modest clock skew
CLIENT_NAME = "Conformance host"

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def jwk_thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint of a public JWK (required members only, sorted, no whitespace)."""
    required = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
    members = required.get(str(jwk.get("kty")))
    if members is None:
        raise ValueError(f"unsupported key type {jwk.get('kty')!r}")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return _b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


@dataclass(frozen=True)
class HostKey:
    """A signing key with its algorithm and RFC 7638 thumbprint ``kid``."""

    private_key: PrivateKey

    @classmethod
    def generate(cls, kind: KeyKind = "ec") -> HostKey:
        if kind == "ec":
            return cls(ec.generate_private_key(ec.SECP256R1()))
        if kind == "rsa":
            return cls(rsa.generate_private_key(public_exponent=65537, key_size=2048))
        raise ConfigError(f"unknown key kind {kind!r} (ec or rsa)")

    @classmethod
    def load(cls, path: Path | str, password: bytes | None = None) -> HostKey:
        """A PEM private key (PKCS#8 or traditional); EC keys must be on P-256."""
        try:
            key = serialization.load_pem_private_key(Path(path).read_bytes(), password=password)
        except (OSError, ValueError, TypeError) as exc:
            raise ConfigError(f"cannot load the client key from {path}: {exc}") from None
        if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
            return cls(key)
        if isinstance(key, rsa.RSAPrivateKey) and key.key_size >= 2048:
            return cls(key)
        raise ConfigError(f"client key {path}: use an EC P-256 or an RSA (2048 bits or more) private key")

    @property
    def kind(self) -> KeyKind:
        return "ec" if isinstance(self.private_key, ec.EllipticCurvePrivateKey) else "rsa"

    @property
    def alg(self) -> str:
        return "ES256" if self.kind == "ec" else "RS256"

    def _public_jwk_members(self) -> dict[str, Any]:
        return dict(self._public_jwk)

    @functools.cached_property
    def _public_jwk(self) -> dict[str, Any]:
        # Derived once per key: every client assertion names the key's ``kid``.
        public = self.private_key.public_key()
        if isinstance(public, ec.EllipticCurvePublicKey):
            return jwt.algorithms.ECAlgorithm.to_jwk(public, as_dict=True)
        return jwt.algorithms.RSAAlgorithm.to_jwk(public, as_dict=True)

    @functools.cached_property
    def kid(self) -> str:
        return jwk_thumbprint(self._public_jwk)

    def public_jwk(self) -> dict[str, Any]:
        jwk = self._public_jwk_members()
        return {**jwk, "kid": self.kid, "use": "sig", "alg": self.alg}

    def private_pem(self) -> bytes:
        return self.private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    def save_private(self, path: Path | str) -> Path:
        """Write the private key as PEM with mode 0600 (created with that mode, never world-readable)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(self.private_pem())
        os.chmod(target, 0o600)  # an existing file keeps its old mode through O_CREAT
        return target

    def sign(self, claims: dict[str, Any], *, kid: str | None = None, headers: dict[str, Any] | None = None) -> str:
        header = {"kid": kid or self.kid, "typ": "JWT", **(headers or {})}
        return jwt.encode(claims, self.private_key, algorithm=self.alg, headers=header)


class BrokenAssertion(StrEnum):
    """Deliberately broken client assertions for negative probes."""

    FOREIGN_KEY = "foreign_key"  # signed by a key not in the JWKS (same kid: the AS must check the signature)
    WRONG_AUD = "wrong_aud"
    EXPIRED = "expired"
    WRONG_ISS = "wrong_iss"
    WRONG_SUB = "wrong_sub"
    WRONG_ISS_SUB = "wrong_iss_sub"
    REPLAYED_JTI = "replayed_jti"  # a fresh assertion carrying a jti that was already used

    @property
    def description(self) -> str:
        return _BROKEN_TEXT[self]


_BROKEN_TEXT = {
    BrokenAssertion.FOREIGN_KEY: "signed by a key that is not in the published JWKS (same kid)",
    BrokenAssertion.WRONG_AUD: "aud is another server's token endpoint",
    BrokenAssertion.EXPIRED: "exp is ten minutes in the past",
    BrokenAssertion.WRONG_ISS: "iss is not the client_id",
    BrokenAssertion.WRONG_SUB: "sub is not the client_id",
    BrokenAssertion.WRONG_ISS_SUB: "iss and sub are another client's id",
    BrokenAssertion.REPLAYED_JTI: "jti was already used in an earlier assertion",
}


@dataclass
class HostIdentity:
    """Everything the host publishes about itself as an OAuth client on ``base_url`` (its metadata origin)."""

    base_url: str
    key: HostKey = field(default_factory=HostKey.generate)
    redirect_base: str | None = None  # callback-specific redirect URIs are {redirect_base}/{callback_id}
    stable_redirect_uri: str | None = None
    client_name: str = CLIENT_NAME
    extra_redirect_uris: tuple[str, ...] = ()
    last_jti: str | None = field(default=None, repr=False)  # jti of the last assertion signed

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme != "https" or not parts.netloc or parts.query or parts.fragment:
            raise ConfigError(f"client metadata base URL must be an https origin, got {self.base_url!r}")
        self.base_url = self.base_url.rstrip("/")
        if self.redirect_base is None:
            self.redirect_base = f"{self.base_url}/oauth/callback"
        self.redirect_base = self.redirect_base.rstrip("/")
        if self.stable_redirect_uri is None:
            self.stable_redirect_uri = self.redirect_base

    # -- URLs ------------------------------------------------------------------------------------------------

    @property
    def stable_document_url(self) -> str:
        return f"{self.base_url}/oauth/client.json"

    def callback_document_url(self, callback_id: str) -> str:
        _check_callback_id(callback_id)
        return f"{self.base_url}/oauth/{callback_id}/client.json"

    def callback_redirect_uri(self, callback_id: str) -> str:
        _check_callback_id(callback_id)
        return f"{self.redirect_base}/{callback_id}"

    @property
    def jwks_url(self) -> str:
        return f"{self.base_url}/oauth/jwks.json"

    def document_url(self, callback_id: str | None = None) -> str:
        return self.stable_document_url if callback_id is None else self.callback_document_url(callback_id)

    def redirect_uri(self, callback_id: str | None = None) -> str:
        assert self.stable_redirect_uri is not None
        return self.stable_redirect_uri if callback_id is None else self.callback_redirect_uri(callback_id)

    # -- documents -------------------------------------------------------------------------------------------

    def client_document(self, callback_id: str | None = None) -> dict[str, Any]:
        """The CIMD document: stable (``callback_id`` None) or callback-specific."""
        redirect_uris = [self.redirect_uri(callback_id), *self.extra_redirect_uris]
        return {
            "client_id": self.document_url(callback_id),
            "client_name": self.client_name,
            "client_uri": self.base_url,
            "redirect_uris": redirect_uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_methods_supported": list(HOST_AUTH_METHODS),
            "token_endpoint_auth_method": LEGACY_AUTH_METHOD,
            "token_endpoint_auth_signing_alg": self.key.alg,
            "jwks_uri": self.jwks_url,
        }

    def jwks(self) -> dict[str, Any]:
        """The public key set (never private members)."""
        return {"keys": [self.key.public_jwk()]}

    # -- client assertions -----------------------------------------------------------------------------------

    def client_assertion(
        self,
        client_id: str,
        audience: str,
        *,
        lifetime: int = DEFAULT_ASSERTION_LIFETIME,
        now: float | None = None,
        jti: str | None = None,
        iss: str | None = None,
        sub: str | None = None,
        key: HostKey | None = None,
        kid: str | None = None,
    ) -> str:
        """An RFC 7523 client assertion: iss = sub = client_id, aud, short exp, iat, unique jti."""
        issued = int(time.time() if now is None else now)
        token_id = jti or secrets.token_urlsafe(24)
        self.last_jti = token_id
        claims = {
            "iss": client_id if iss is None else iss,
            "sub": client_id if sub is None else sub,
            "aud": audience,
            "iat": issued,
            "exp": issued + lifetime,
            "jti": token_id,
        }
        return (key or self.key).sign(claims, kid=kid or self.key.kid)

    def broken_assertion(
        self, kind: BrokenAssertion | str, client_id: str, audience: str, *, replay_of: str | None = None
    ) -> str:
        """An assertion broken in exactly one way; the rest is as valid as :meth:`client_assertion`'s.

        ``REPLAYED_JTI`` reuses the jti of ``replay_of`` (an assertion the AS already accepted), by default the
        last assertion this identity signed: sign, send, then probe, and the AS has seen that jti.
        """
        kind = BrokenAssertion(kind)
        if kind is BrokenAssertion.FOREIGN_KEY:
            return self.client_assertion(client_id, audience, key=HostKey.generate(self.key.kind), kid=self.key.kid)
        if kind is BrokenAssertion.WRONG_AUD:
            return self.client_assertion(client_id, "https://other-as.conformance.invalid/token")
        if kind is BrokenAssertion.EXPIRED:
            return self.client_assertion(client_id, audience, now=time.time() - 660)
        other = "https://other-client.conformance.invalid/oauth/client.json"
        if kind is BrokenAssertion.WRONG_ISS:
            return self.client_assertion(client_id, audience, iss=other)
        if kind is BrokenAssertion.WRONG_SUB:
            return self.client_assertion(client_id, audience, sub=other)
        if kind is BrokenAssertion.WRONG_ISS_SUB:
            return self.client_assertion(client_id, audience, iss=other, sub=other)
        if replay_of is not None:
            jti = jwt.decode(replay_of, options={"verify_signature": False}).get("jti")
        else:
            jti = self.last_jti
        if not isinstance(jti, str) or not jti:
            raise ValueError("a replay needs an earlier assertion: sign and send one first (or pass replay_of)")
        return self.client_assertion(client_id, audience, jti=jti)


def _check_callback_id(callback_id: str) -> None:
    # The id becomes a path segment of a client_id URL: keep it to unreserved characters.
    if not callback_id or not all(c.isalnum() or c in "-._~" for c in callback_id) or callback_id in (".", ".."):
        raise ValueError(f"callback id {callback_id!r} must be a non-empty run of unreserved URL characters")


def new_callback_id() -> str:
    return secrets.token_hex(8)


def load_or_generate_key(path: Path | str | None, kind: KeyKind = "ec") -> HostKey:
    """The configured key file, or a fresh key for this run."""
    return HostKey.load(path) if path else HostKey.generate(kind)


__all__ = [
    "ASSERTION_TYPE",
    "HOST_AUTH_METHODS",
    "LEGACY_AUTH_METHOD",
    "BrokenAssertion",
    "HostIdentity",
    "HostKey",
    "jwk_thumbprint",
    "load_or_generate_key",
    "new_callback_id",
]
