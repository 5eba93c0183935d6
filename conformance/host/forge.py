"""Deliberately broken and harness-issued access tokens for the negative token checks.

Two modes:

* **Forgery from a real token** (no cooperation from the target): tamper the payload or the signature, strip the
  signature with ``alg: none``, or re-sign the real claims with a key the target does not trust.
* **Harness-issued tokens** (the target trusts the harness's test issuer, e.g. the reference tool server started
  with ``--trusted-issuer ISSUER=JWKS_URL``): :class:`HarnessIssuer` owns an EC P-256 key and mints tokens with a
  valid signature and chosen claims (expired, not yet valid, wrong issuer, wrong audience, missing scope, and a
  valid control). :class:`JwksServer` publishes its JWKS over HTTPS from a thread.

Every minted token is registered with the redactor given, so evidence never shows it.
"""

from __future__ import annotations

import base64
import json
import secrets
import ssl
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from conformance.host import _json as target_json
from conformance.host._redact import Redactor
from conformance.host._serving import ServingThread, https_server

DEFAULT_LIFETIME_S = 300
CLOCK_MARGIN_S = 3600  # far beyond any reasonable leeway a server grants for exp / nbf


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _json_segment(value: Mapping[str, Any]) -> str:
    return b64url_encode(json.dumps(value, separators=(",", ":")).encode())


class ForgeError(ValueError):
    """The input is not a compact JWS (three base64url segments with JSON header and payload)."""


def split_jwt(token: str) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """Header, payload and raw signature of a compact JWS, without verifying anything."""
    parts = token.split(".")
    if len(parts) != 3:
        raise ForgeError(f"a JWT has three segments, this one has {len(parts)}")
    try:
        header = target_json.loads(b64url_decode(parts[0]))
        payload = target_json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except (ValueError, UnicodeDecodeError) as exc:
        raise ForgeError(f"not a decodable JWT: {exc}") from None
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise ForgeError("the JWT header and payload must be JSON objects")
    return header, payload, signature


def tamper_payload(token: str, changes: Mapping[str, Any] | None = None) -> str:
    """The same header and signature over a changed payload (default: a different ``sub``)."""
    parts = token.split(".")
    _, payload, _ = split_jwt(token)
    updates = dict(changes) if changes is not None else {"sub": f"{payload.get('sub', '')}-tampered"}
    forged = {**payload, **updates}
    if forged == payload:
        forged["conformance_tampered"] = True
    return f"{parts[0]}.{_json_segment(forged)}.{parts[2]}"


def tamper_signature(token: str) -> str:
    """The same header and payload with the signature's middle byte flipped (length and encoding kept)."""
    parts = token.split(".")
    _, _, signature = split_jwt(token)
    if not signature:
        raise ForgeError("the token has no signature to tamper with")
    flipped = bytearray(signature)
    flipped[len(flipped) // 2] ^= 0x5A
    return f"{parts[0]}.{parts[1]}.{b64url_encode(bytes(flipped))}"


def alg_none(token_or_claims: str | Mapping[str, Any], alg: str = "none", *, keep_signature: bool = False) -> str:
    """An unsigned token (``alg: none`` in the spelling given, empty signature) carrying the given claims or a real
    token's claims; ``keep_signature`` keeps a real token's signature segment (RFC 8725 §2.1)."""
    claims = split_jwt(token_or_claims)[1] if isinstance(token_or_claims, str) else dict(token_or_claims)
    signature = token_or_claims.split(".")[2] if keep_signature and isinstance(token_or_claims, str) else ""
    return f"{_json_segment({'alg': alg, 'typ': 'JWT'})}.{_json_segment(claims)}.{signature}"


def strip_signature(token: str) -> str:
    """The real header and payload with the signature segment removed (``header.payload.``)."""
    split_jwt(token)
    head, payload, _ = token.split(".")
    return f"{head}.{payload}."


def hmac_with_public_key(claims: Mapping[str, Any], public_key: Any, headers: Mapping[str, Any] | None = None) -> str:
    """RFC 8725 §2.1 algorithm confusion: the claims signed HS256 with the verifier's *public* key (its PEM, as a
    careless library reads "the key") as the HMAC secret. pyjwt refuses such secrets, so the MAC is made here."""
    import hashlib
    import hmac

    from cryptography.hazmat.primitives import serialization

    pem = public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    signing_input = f"{_json_segment({**(headers or {}), 'alg': 'HS256', 'typ': 'JWT'})}.{_json_segment(claims)}"
    mac = hmac.new(pem, signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{b64url_encode(mac)}"


def _new_kid() -> str:
    return "conformance-" + secrets.token_hex(6)


@dataclass
class HarnessIssuer:
    """The harness's own token issuer: an EC P-256 key, its JWKS, and tokens with chosen claims."""

    issuer: str
    kid: str = field(default_factory=_new_kid)
    redactor: Redactor | None = None
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    def jwks(self) -> dict[str, Any]:
        return {"keys": [{**self.public_jwk(), "kid": self.kid, "use": "sig", "alg": "ES256"}]}

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
        return jwk

    def sign(self, claims: Mapping[str, Any], *, headers: Mapping[str, Any] | None = None) -> str:
        """Sign exactly these claims (nothing added) with this issuer's key."""
        # JWS over the JSON as given: pyjwt's claim checks (e.g. iss must be a string) would refuse to forge.
        payload = json.dumps(dict(claims), separators=(",", ":")).encode()
        token = jwt.api_jws.encode(payload, self.key, algorithm="ES256", headers={"kid": self.kid, **(headers or {})})
        if self.redactor is not None:
            self.redactor.add_secret(token)
        return token

    def claims(
        self,
        *,
        audience: str | Sequence[str],
        scopes: Sequence[str] = (),
        subject: str = "conformance-user",
        lifetime_s: int = DEFAULT_LIFETIME_S,
        now: float | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The claims of a valid access token for ``audience`` (extra claims override or add)."""
        at = int(now if now is not None else time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience if isinstance(audience, str) else list(audience),
            "iat": at,
            "nbf": at,
            "exp": at + lifetime_s,
            "jti": secrets.token_hex(12),
            "scope": " ".join(scopes),
            "client_id": "conformance-host",
        }
        claims.update(extra)
        return claims

    def mint(self, **kwargs: Any) -> str:
        return self.sign(self.claims(**kwargs))

    # -- the named variants of the token checks

    def valid(self, audience: str, scopes: Sequence[str], **kwargs: Any) -> str:
        """The positive control: every harness-issued negative is this token with one claim changed."""
        return self.mint(audience=audience, scopes=scopes, **kwargs)

    def expired(self, audience: str, scopes: Sequence[str], **kwargs: Any) -> str:
        at = int(time.time()) - 2 * CLOCK_MARGIN_S
        return self.mint(audience=audience, scopes=scopes, now=at, lifetime_s=CLOCK_MARGIN_S, **kwargs)

    def not_yet_valid(self, audience: str, scopes: Sequence[str], **kwargs: Any) -> str:
        at = int(time.time())
        later = {"nbf": at + CLOCK_MARGIN_S, "exp": at + 2 * CLOCK_MARGIN_S}
        return self.mint(audience=audience, scopes=scopes, **later, **kwargs)

    def wrong_issuer(self, audience: str, scopes: Sequence[str], **kwargs: Any) -> str:
        """Signed with the trusted key but naming an issuer the target does not trust."""
        return self.mint(audience=audience, scopes=scopes, iss=self.issuer.rstrip("/") + "/untrusted", **kwargs)

    def wrong_audience(self, audience: str, scopes: Sequence[str], **kwargs: Any) -> str:
        return self.mint(audience=audience.rstrip("/") + "/other-resource", scopes=scopes, **kwargs)

    def missing_scope(self, audience: str, scopes: Sequence[str], missing: str, **kwargs: Any) -> str:
        return self.mint(audience=audience, scopes=[s for s in scopes if s != missing], **kwargs)

    def resign(self, token: str) -> str:
        """A real token's exact claims, signed by this (untrusted) key: the foreign-key case."""
        return self.sign(split_jwt(token)[1])


@dataclass
class Fetch:
    path: str
    client: str
    at: float


class JwksServer:
    """A tiny HTTPS server in a thread publishing an issuer's JWKS (and a minimal discovery document).

    ``GET /jwks.json`` serves the JWKS; ``GET /.well-known/openid-configuration`` and
    ``/.well-known/oauth-authorization-server`` serve ``{issuer, jwks_uri}`` for targets that discover keys from
    the issuer. Fetches are recorded (the evidence that the target looked the key up).
    """

    def __init__(
        self,
        issuer: HarnessIssuer,
        *,
        certfile: Path | str,
        keyfile: Path | str,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.issuer = issuer
        self.fetches: list[Fetch] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with server._lock:
                    server.fetches.append(Fetch(path, self.client_address[0], time.time()))
                if path == "/jwks.json":
                    self._send(200, server.issuer.jwks())
                elif path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
                    self._send(200, {"issuer": server.issuer.issuer, "jwks_uri": server.jwks_url})
                else:
                    self._send(404, {"error": "not_found"})

            def _send(self, status: int, body: Mapping[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet: the fetch list is the record
                return

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that fails the TLS handshake (it does not trust our CA) is evidence, not a traceback.
                with server._lock:
                    server.errors.append(f"{client_address[0]}: {sys.exc_info()[1]}")

        self.errors: list[str] = []
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(certfile), str(keyfile))
        # The handshake runs in the handler thread, so a client that never speaks TLS cannot stall accept().
        self._httpd = https_server((host, port), Handler, context, Server)
        self._thread: ServingThread | None = None

    @property
    def origin(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"https://{host!s}:{port}"

    @property
    def jwks_url(self) -> str:
        return f"{self.origin}/jwks.json"

    def start(self) -> JwksServer:
        self._thread = ServingThread(self._httpd, "jwks-server").start()  # stops at once, not at the next poll
        return self

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()  # closes the server
        else:
            self._httpd.server_close()

    def __enter__(self) -> JwksServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
