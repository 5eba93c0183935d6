"""Bearer-token checks of the reference tool server: signature (JWKS), iss, exp, nbf, aud and scopes.

Each trusted issuer has a key source: the IdP's JWKS (found through its discovery metadata) or a JWKS URL given
at start (``https://...`` or ``file:...``; the harness mints claim-level test tokens with the matching key). Keys
are cached and re-fetched when a token names an unknown ``kid`` (at most once per second per issuer).

The ``defects`` set switches off one check at a time for mutants; the reference passes an empty set.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import httpx
import jwt

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]


class TokenError(Exception):
    """The token is not acceptable; ``str(exc)`` is the error_description of the challenge."""


@dataclass(frozen=True)
class Principal:
    """Who a verified token represents."""

    issuer: str
    subject: str
    scopes: frozenset[str]
    client_id: str | None
    claims: dict[str, Any]


@dataclass
class KeySource:
    issuer: str
    jwks_url: str | None = None  # None: read jwks_uri from the issuer's discovery metadata
    keys: dict[str, jwt.PyJWK] = field(default_factory=dict)
    fetched_at: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class JwtVerifier:
    def __init__(
        self,
        *,
        resource: str,
        issuers: dict[str, str | None],
        ca_file: str | None = None,
        defects: frozenset[str] = frozenset(),
    ) -> None:
        self.resource = resource
        self.sources = {iss: KeySource(iss, url) for iss, url in issuers.items()}
        self.defects = defects
        self._http = httpx.AsyncClient(
            verify=ssl.create_default_context(cafile=ca_file) if ca_file else True, timeout=5.0
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def verify(self, token: str) -> Principal:
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError as exc:
            raise TokenError(f"malformed token: {exc}") from None
        issuer = unverified.get("iss")
        alg = header.get("alg")
        if "iss-normalized" in self.defects and isinstance(issuer, str):
            issuer = self._normalized_issuer(issuer)
        if (alg == "none" and "accept-alg-none" in self.defects) or "ignore-signature" in self.defects:
            claims = unverified
        elif "alg-none-any-case" in self.defects and isinstance(alg, str) and alg.lower() == "none" and alg != "none":
            claims = unverified  # a case-sensitive deny list: only the exact spelling "none" is refused
        elif "accept-stripped-signature" in self.defects and token.endswith(".") and alg in ALGORITHMS:
            claims = unverified  # "no signature to check" taken as "nothing wrong with the signature"
        elif "trust-embedded-jwk" in self.defects and isinstance(header.get("jwk"), dict):
            claims = self._decode(token, jwt.PyJWK(header["jwk"]), alg)  # the token brings its own key
        elif "hs256-public-key" in self.defects and alg == "HS256":
            claims = self._decode_hmac_with_public_key(token, await self._key_for(issuer, header.get("kid")))
        else:
            if not isinstance(alg, str) or alg not in ALGORITHMS:
                raise TokenError(f"signing algorithm {alg!r} is not accepted")
            key = await self._key_for(issuer, header.get("kid"))
            try:
                claims = jwt.decode(
                    token,
                    key=key,
                    algorithms=[alg],
                    options={"verify_exp": False, "verify_nbf": False, "verify_aud": False, "verify_iss": False},
                )
            except jwt.PyJWTError as exc:
                raise TokenError(f"signature check failed: {exc}") from None
        self._check_claims(claims)
        scopes = frozenset(str(claims.get("scope", "")).split())
        client_id = claims.get("client_id") or claims.get("azp")
        return Principal(
            issuer=str(claims.get("iss", "")),
            subject=str(claims["sub"]),
            scopes=scopes,
            client_id=str(client_id) if client_id else None,
            claims=claims,
        )

    @staticmethod
    def _decode(token: str, key: Any, alg: Any) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[str(alg)],
                options={"verify_exp": False, "verify_nbf": False, "verify_aud": False, "verify_iss": False},
            )
        except jwt.PyJWTError as exc:
            raise TokenError(f"signature check failed: {exc}") from None
        return claims

    @staticmethod
    def _decode_hmac_with_public_key(token: str, key: jwt.PyJWK) -> dict[str, Any]:
        """The algorithm-confusion defect: HS256 verified with the issuer's public key (PEM) as the secret."""
        import base64
        import hashlib
        import hmac

        from cryptography.hazmat.primitives import serialization

        public = getattr(key.key, "public_key", lambda: key.key)()
        pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        signing_input, _, signature = token.rpartition(".")
        expected = base64.urlsafe_b64encode(hmac.new(pem, signing_input.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(expected.rstrip(b"=").decode(), signature):
            raise TokenError("signature check failed")
        return dict(jwt.decode(token, options={"verify_signature": False}))

    def _normalized_issuer(self, issuer: str) -> str:
        """The iss-normalized defect: the trusted issuer that matches case- and trailing-slash-insensitively."""
        for trusted in self.sources:
            if trusted.rstrip("/").lower() == issuer.rstrip("/").lower():
                return trusted
        return issuer

    def _check_claims(self, claims: dict[str, Any]) -> None:
        now = time.time()
        iss = claims.get("iss")
        if "iss-normalized" in self.defects and isinstance(iss, str):
            iss = self._normalized_issuer(iss)
        if "skip-iss" not in self.defects and (not isinstance(iss, str) or iss not in self.sources):
            raise TokenError("token issuer is not trusted")
        exp = claims.get("exp")
        lenient_exp = "exp-lenient-type" in self.defects and exp is not None and not isinstance(exp, int | float)
        if "skip-exp" not in self.defects and not lenient_exp:
            if not isinstance(exp, int | float) or isinstance(exp, bool):
                raise TokenError("token has no expiry")
            if exp <= now:
                raise TokenError("token expired")
        nbf = claims.get("nbf")
        if "skip-nbf" not in self.defects:
            # RFC 7519 §4.1.5: a NumericDate; anything else makes the token invalid (not "no nbf").
            if nbf is not None and (not isinstance(nbf, int | float) or isinstance(nbf, bool)):
                if "nbf-lenient-type" not in self.defects:
                    raise TokenError("token nbf is not a NumericDate")
            elif isinstance(nbf, int | float) and nbf > now:
                raise TokenError("token not yet valid")
        if "skip-audience" not in self.defects:
            aud = claims.get("aud")
            audiences = aud if isinstance(aud, list) else [aud]
            # expects-other-audience: a canonicalization slip (trailing slash) refuses every valid token.
            expected = self.resource + "/" if "expects-other-audience" in self.defects else self.resource
            prefix = "audience-prefix" in self.defects and any(
                isinstance(a, str) and a and self.resource.startswith(a) for a in audiences
            )
            # audience-trusted-issuer: a token a trusted issuer minted for itself (aud: its own identifier, as for
            # its userinfo endpoint) taken as one for this resource.
            issued_for_issuer = "audience-trusted-issuer" in self.defects and any(
                isinstance(a, str) and a in self.sources for a in audiences
            )
            if expected not in audiences and not prefix and not issued_for_issuer:
                raise TokenError("token was issued for another resource")
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise TokenError("token has no subject")

    async def _key_for(self, issuer: Any, kid: Any) -> jwt.PyJWK:
        if "skip-iss" in self.defects:
            # Any trusted key will do, whatever the token says its issuer is.
            for candidate in self.sources.values():
                key = await self._lookup(candidate, kid)
                if key is not None:
                    return key
            raise TokenError("no trusted key matches the token")
        source = self.sources.get(issuer) if isinstance(issuer, str) else None
        if source is None:
            raise TokenError("token issuer is not trusted")
        if "key-from-any-issuer" in self.defects:
            # One key pool for every trusted issuer: the token's issuer is trusted, any trusted key will sign for it.
            for candidate in [source, *(s for s in self.sources.values() if s is not source)]:
                key = await self._lookup(candidate, kid)
                if key is not None:
                    return key
            raise TokenError("no trusted key matches the token")
        key = await self._lookup(source, kid)
        if key is None:
            raise TokenError("no trusted key matches the token")
        return key

    async def _lookup(self, source: KeySource, kid: Any) -> jwt.PyJWK | None:
        async with source.lock:
            key = self._pick(source, kid)
            if key is None and time.monotonic() - source.fetched_at > 1.0:
                # Unknown kid: the issuer may have rotated its keys.
                source.keys = await self._fetch_keys(source)
                source.fetched_at = time.monotonic()
                key = self._pick(source, kid)
            return key

    @staticmethod
    def _pick(source: KeySource, kid: Any) -> jwt.PyJWK | None:
        if kid is None:
            return next(iter(source.keys.values()), None) if len(source.keys) == 1 else None
        return source.keys.get(str(kid))

    async def _fetch_keys(self, source: KeySource) -> dict[str, jwt.PyJWK]:
        try:
            url = source.jwks_url or await self._discover_jwks_uri(source.issuer)
            document = await self._read_json(url)
        except (httpx.HTTPError, OSError, ValueError):
            return source.keys  # keep what we had; the token is refused if its key is unknown
        keys: dict[str, jwt.PyJWK] = {}
        for index, jwk in enumerate(document.get("keys", [])):
            if jwk.get("use", "sig") != "sig":
                continue
            try:
                keys[str(jwk.get("kid", index))] = jwt.PyJWK(jwk)
            except jwt.PyJWTError:
                continue
        return keys

    async def _discover_jwks_uri(self, issuer: str) -> str:
        for suffix in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
            try:
                metadata = await self._read_json(issuer.rstrip("/") + suffix)
            except (httpx.HTTPError, ValueError):
                continue
            if isinstance(metadata.get("jwks_uri"), str):
                return str(metadata["jwks_uri"])
        raise ValueError(f"no jwks_uri for {issuer}")

    async def _read_json(self, url: str) -> dict[str, Any]:
        if url.startswith("file:"):
            document = json.loads(Path(unquote(urlparse(url).path)).read_text())
        else:
            response = await self._http.get(url)
            response.raise_for_status()
            document = response.json()
        if not isinstance(document, dict):
            raise ValueError(f"{url} did not return a JSON object")
        return document
