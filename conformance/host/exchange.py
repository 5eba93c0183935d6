"""The evidence of a check: one exchange with a target, redacted once, at capture.

Every exchange the harness records (HostHTTP's requests, the MCP SDK's, the publisher's inbound fetches, probes
made by hand) is an :class:`Exchange` built by :meth:`Exchange.capture` (the one redaction pass) and attached to
the running check by :func:`record_exchange` (the one recorder). The check keeps its JSON form
(:meth:`Exchange.to_json`, the report's ``exchange`` object), which is what a verdict's evidence lists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

import httpx

from conformance.core import _context
from conformance.host._redact import Redactor, header_items

# The one body excerpt limit (characters, after redaction) of every exchange: docs/report-json.md's "excerpt".
BODY_EXCERPT_CHARS = 2048
# The one limit of every other text an exchange keeps (each header value, the URL), after redaction: a target's
# 100 KB header must not be copied whole into every exchange of a report.
HEADER_EXCERPT_CHARS = 2048
# What an exchange keeps of its headers once the run's budget of bodies is spent (conformance.core._context): those a
# reviewer follows an exchange by (what came back, where it led, what was challenged, the credential's redacted
# form), each value cut shorter.
KEY_HEADERS = frozenset(
    {
        "authorization",
        "content-length",
        "content-type",
        "location",
        "mcp-protocol-version",
        "mcp-session-id",
        "retry-after",
        "www-authenticate",
    }
)
KEY_HEADER_CHARS = 256
BUDGET_SPENT = "run body budget spent"  # the ``omitted`` reason of an exchange past the run's budget
RESPONSE_EXTENSION = "conformance.exchange"  # where HostHTTP leaves a response's recorded exchange
_TAGS = ("direction", "peer", "document")  # written first, as the inbound records always were
_CURRENT: Any = object()


def now_stamp() -> str:
    """UTC, milliseconds, ``Z``: the ``started_at`` of an exchange."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Exchange:
    """One request and its answer (or the error instead of one), already redacted."""

    method: str
    url: str
    request_headers: Mapping[str, str]
    request_body: str | None
    status: int | None
    response_headers: Mapping[str, str]
    response_body: str | None
    elapsed_s: float
    started_at: str
    error: str | None = None
    direction: str | None = None  # "inbound": a fetch the harness served (the publisher), else made by it
    peer: str | None = None  # inbound: who fetched
    document: str | None = None  # inbound: which published document
    client: str | None = None  # made by another client than HostHTTP ("boto3", "raw socket")
    extra: Mapping[str, Any] = field(default_factory=dict)  # anything else a recorder was given, kept as is

    @classmethod
    def capture(cls, redactor: Redactor, **exchange: Any) -> Exchange:
        """The redaction pass (:func:`captured`, which names what an exchange is made of), as an exchange holding
        its JSON form."""
        data = captured(redactor, **exchange)
        known = _field_names(cls)
        return cls(
            **{k: v for k, v in data.items() if k in known},
            extra={k: v for k, v in data.items() if k not in known},
        )

    def to_json(self) -> dict[str, Any]:
        """The report's ``exchange`` object."""
        data: dict[str, Any] = {k: getattr(self, k) for k in _TAGS if getattr(self, k) is not None}
        data.update(
            method=self.method,
            url=self.url,
            request_headers=dict(self.request_headers),
            request_body=self.request_body,
            status=self.status,
            response_headers=dict(self.response_headers),
            response_body=self.response_body,
            elapsed_s=self.elapsed_s,
            started_at=self.started_at,
            error=self.error,
        )
        if self.client is not None:
            data["client"] = self.client
        data.update(self.extra)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Exchange:
        """An exchange read back from a report (the inverse of :meth:`to_json`)."""
        known = _field_names(cls) - {"extra"}
        return cls(
            method=data["method"],
            url=data["url"],
            request_headers=dict(data.get("request_headers") or {}),
            request_body=data.get("request_body"),
            status=data.get("status"),
            response_headers=dict(data.get("response_headers") or {}),
            response_body=data.get("response_body"),
            elapsed_s=data.get("elapsed_s", 0.0),
            started_at=data.get("started_at", ""),
            error=data.get("error"),
            direction=data.get("direction"),
            peer=data.get("peer"),
            document=data.get("document"),
            client=data.get("client"),
            extra={k: v for k, v in data.items() if k not in known},
        )


def _field_names(cls: type[Exchange]) -> frozenset[str]:
    # (dataclasses.fields walks the class each time: once per recorded exchange, for the same class)
    return _FIELD_NAMES if cls is Exchange else frozenset(f.name for f in fields(cls))


_FIELD_NAMES = frozenset(f.name for f in fields(Exchange))


def captured(
    redactor: Redactor,
    *,
    method: str,
    url: str,
    request_headers: Mapping[str, str] | None = None,
    request_body: bytes | None = None,
    status: int | None = None,
    response_headers: Mapping[str, str] | None = None,
    response_body: bytes | None = None,
    elapsed_s: float = 0.0,
    started_at: str | None = None,
    error: str | None = None,
    **tags: Any,
) -> dict[str, Any]:
    """The redaction pass: an exchange's JSON form (:meth:`Exchange.to_json`, the report's ``exchange`` object),
    made at once from what was sent and received. Its order matters: a ``Location`` teaches the redactor the secrets
    of a redirect before the response body is redacted."""
    # Each header set read once (httpx decodes its headers on every read): redacted and its content type.
    request_items = header_items(request_headers) if request_headers is not None else []
    response_items = header_items(response_headers) if response_headers is not None else None
    url_shown = excerpt(redactor.url(url))
    shown_request_headers = _excerpts(redactor.header_items(request_items))
    shown_request_body = redactor.body(request_body, _ctype(request_items), BODY_EXCERPT_CHARS)
    shown_response_headers = _excerpts(redactor.header_items(response_items)) if response_items is not None else {}
    shown_response_body = redactor.body(response_body, _ctype(response_items), BODY_EXCERPT_CHARS)
    data: dict[str, Any] = {}
    if tags:
        data.update((k, tags[k]) for k in _TAGS if tags.get(k) is not None)
    data.update(
        method=method,
        url=url_shown,
        request_headers=shown_request_headers,
        request_body=shown_request_body,
        status=status,
        response_headers=shown_response_headers,
        response_body=shown_response_body,
        elapsed_s=round(elapsed_s, 4),
        started_at=started_at or now_stamp(),
        error=redactor.scrub(error) if error else None,
    )
    if tags:
        if tags.get("client") is not None:
            data["client"] = tags["client"]
        data.update((k, v) for k, v in tags.items() if k not in _FIELD_NAMES)  # (a tag named ``extra`` is none)
    return data


def record_exchange(
    redactor: Redactor, *, into: _context.CheckRecord | None = _CURRENT, **capture: Any
) -> dict[str, Any] | None:
    """The one recorder: capture an exchange (see :func:`captured`) and attach it to the running check, or to
    ``into``. Returns what the check holds (its JSON form), or None when no check is running (nothing is captured
    then)."""
    record = _context.current() if into is _CURRENT else into
    if record is None:
        return None
    exchange = captured(redactor, **capture)
    elapsed = capture.get("elapsed_s")
    if elapsed and capture.get("direction") != "inbound" and not capture.get("error"):  # a round trip it made
        _context.ROUND_TRIPS.add(float(elapsed))
    if not _context.spend_body(body_size(exchange)):  # the bodies of the run are bounded (headers per exchange)
        exchange = without_details(exchange)
    record.add_exchange(exchange)
    return exchange


_DETAILS = ("request_headers", "request_body", "response_headers", "response_body")


def body_size(exchange: Mapping[str, Any]) -> int:
    """The characters of an exchange's bodies."""
    size = 0
    for side in ("request_body", "response_body"):
        body = exchange.get(side)
        size += len(body) if isinstance(body, str) else 0 if body is None else len(str(body))
    return size


def body_fingerprint(body: Any) -> dict[str, Any]:
    """What stays of an omitted body: its length in characters (the whole body's when the excerpt says how much
    was cut) and the first 16 hex digits of the SHA-256 of the excerpt the exchange held (redacted), enough to tell
    two omitted bodies apart."""
    text = body if isinstance(body, str) else str(body)
    chars = len(text)
    cut = text.rfind("… [")
    if cut >= 0 and text.endswith(" more characters]"):
        more = text[cut + 3 : -len(" more characters]")]
        if more.isdigit():
            chars = cut + int(more)
    return {"chars": chars, "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]}


def without_details(exchange: Mapping[str, Any], reason: str = BUDGET_SPENT) -> dict[str, Any]:
    """The exchange with its metadata only (method, URL, status, timing, case, its key headers), its bodies
    replaced by their length and digest under ``omitted`` (with ``reason`` and the count of headers left out)."""
    if "omitted" in exchange:
        return dict(exchange)
    omitted: dict[str, Any] = {"reason": reason}
    slim: dict[str, Any] = {}
    for key, value in exchange.items():
        if key not in _DETAILS:
            slim[key] = value
        elif key.endswith("_headers"):
            headers = value if isinstance(value, Mapping) else {}
            kept = {k: excerpt(str(v), KEY_HEADER_CHARS) for k, v in headers.items() if str(k).lower() in KEY_HEADERS}
            slim[key] = kept
            if len(headers) > len(kept):
                omitted[key] = len(headers) - len(kept)
        else:
            slim[key] = None
            if value is not None and value != "":
                omitted[key] = body_fingerprint(value)
    slim["omitted"] = omitted
    return slim


def exchange_of(response: httpx.Response | None) -> dict[str, Any] | None:
    """The recorded exchange a HostHTTP response came from, when a check recorded it."""
    if response is None:
        return None
    found = response.extensions.get(RESPONSE_EXTENSION)
    return found if isinstance(found, dict) else None


def excerpt(text: str, limit: int = HEADER_EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters (already redacted: a secret is never cut in half), saying what was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def _excerpts(headers: dict[str, str]) -> dict[str, str]:
    """Each value cut as :func:`excerpt` cuts it (most are short: the dict itself, then)."""
    for value in headers.values():
        if len(value) > HEADER_EXCERPT_CHARS:
            return {name: excerpt(value) for name, value in headers.items()}
    return headers


def _ctype(items: list[tuple[str, str]] | None) -> str | None:
    if items is None:
        return None
    return next((value for key, value in items if key == "content-type"), None)
