"""Redaction at capture time: secrets never reach an exchange record, so no writer can leak them.

Two layers. By name: headers, query parameters, form fields and JSON keys that carry credentials. By value: every
secret the harness knows (configured API keys, tokens it obtained, assertions it signed) is scrubbed wherever it
appears, including URLs, bodies and error messages.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from conformance.host import _json as target_json

REDACTED = "[REDACTED]"

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "dpop",
    }
)

# Parameter and field names whose value is a secret wherever they appear (query, form, JSON).
SECRET_NAMES = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "id_token_hint",
        "client_secret",
        "client_assertion",
        "code_verifier",
        "password",
        "passwd",
        "api_key",
        "apikey",
        "secret",
        "token",
        "assertion",
        "private_key",
        "registration_access_token",
    }
)
# `code` is the authorization code in queries and forms; in JSON bodies it is an error code, kept for evidence.
SECRET_QUERY_FORM_NAMES = SECRET_NAMES | {"code", "state_secret"}

_SECRET_NAME_PATTERN = re.compile(r"(secret|password|passwd|_token$|^token_|private_key|api_?key|credential)", re.I)
_JWT_PATTERN = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_PEM_PATTERN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)
_NOT_SECRET = frozenset({"input_tokens", "max_tokens", "token_type", "output_tokens", "max_output_tokens"})


def is_secret_name(name: str, *, query_or_form: bool = False) -> bool:
    lowered = name.lower()
    if lowered in _NOT_SECRET:
        return False
    names = SECRET_QUERY_FORM_NAMES if query_or_form else SECRET_NAMES
    return lowered in names or bool(_SECRET_NAME_PATTERN.search(lowered))


class Redactor:
    """Scrubs secrets from the parts of an exchange. Thread-safe; secrets can be added at any time."""

    MIN_SECRET_LENGTH = 4  # shorter values would blank out ordinary text

    def __init__(self, secrets: list[str] | None = None) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()
        for value in secrets or []:
            self.add_secret(value)

    def add_secret(self, value: str | bytes | None) -> None:
        if value is None:
            return
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if len(text) >= self.MIN_SECRET_LENGTH:
            with self._lock:
                self._secrets.add(text)
                # Secrets also travel percent-encoded or base64-encoded (Basic auth); scrub those forms too.
                from urllib.parse import quote, quote_plus

                self._secrets.add(quote(text, safe=""))
                self._secrets.add(quote_plus(text))

    def scrub(self, text: str) -> str:
        """Value-based redaction of free text, plus JWTs and private keys by shape."""
        if not text:
            return text
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        text = _PEM_PATTERN.sub(REDACTED, text)
        return _JWT_PATTERN.sub(REDACTED, text)

    def header(self, name: str, value: str) -> str:
        if name.lower() in SECRET_HEADERS:
            # Keep the scheme (Bearer, Basic): it is evidence and harmless.
            scheme, _, rest = value.partition(" ")
            if name.lower() in {"authorization", "proxy-authorization"} and rest and scheme.isalpha():
                return f"{scheme} {REDACTED}"
            return REDACTED
        return self.scrub(value)

    def headers(self, headers: Any) -> dict[str, str]:
        redacted: dict[str, str] = {}
        for name, value in headers.items():
            key = str(name).lower()
            clean = self.header(key, str(value))
            # Repeated headers (Set-Cookie, WWW-Authenticate) are joined, as HTTP allows for most.
            redacted[key] = f"{redacted[key]}, {clean}" if key in redacted else clean
        return redacted

    def query(self, query: str) -> str:
        if not query:
            return query
        pairs = parse_qsl(query, keep_blank_values=True)
        cleaned = [(k, REDACTED if is_secret_name(k, query_or_form=True) else self.scrub(v)) for k, v in pairs]
        return urlencode(cleaned, safe="[]")

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:  # user:password@host
            netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
        return self.scrub(urlunsplit((parts.scheme, netloc, parts.path, self.query(parts.query), parts.fragment)))

    def json_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: (
                    REDACTED if isinstance(k, str) and is_secret_name(k) and v not in (None, "") else self.json_value(v)
                )
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.json_value(v) for v in value]
        if isinstance(value, str):
            return self.scrub(value)
        return value

    def body(self, body: bytes | None, content_type: str | None, limit: int) -> str | None:
        """A redacted, size-limited text excerpt of a body; binary bodies are described, not shown."""
        if not body:
            return None
        ctype = (content_type or "").lower()
        text: str | None = None
        if "json" in ctype or body[:1] in (b"{", b"["):
            try:
                parsed = target_json.loads(body)
            except (ValueError, UnicodeDecodeError):
                parsed = None
            if parsed is not None:
                text = json.dumps(self.json_value(parsed), ensure_ascii=False)
        if text is None and "x-www-form-urlencoded" in ctype:
            text = self.query(body.decode("utf-8", "replace"))
        if text is None:
            if _looks_binary(body):
                return f"<binary body: {len(body)} bytes, {content_type or 'unknown type'}>"
            text = self.scrub(body.decode("utf-8", "replace"))
        if len(text) > limit:
            text = text[:limit] + f"… [{len(text) - limit} more characters]"
        return text


def _looks_binary(body: bytes) -> bool:
    sample = body[:512]
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the sample's end is still text.
        return exc.start < len(sample) - 3
    return False
