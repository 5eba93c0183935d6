"""The two eras of MCP over streamable HTTP, and which one the host speaks to a tool server.

- **legacy** (protocol revisions up to 2025-11-25): an ``initialize`` handshake, then requests carrying the
  negotiated ``MCP-Protocol-Version`` and, when the server opened one, ``Mcp-Session-Id``.
- **modern** (2026-07-28): no handshake; every request is one self-contained POST carrying the headers
  ``MCP-Protocol-Version``, ``Mcp-Method`` and (for ``tools/call``, ``prompts/get``, ``resources/read``)
  ``Mcp-Name``, and in ``params._meta`` the ``io.modelcontextprotocol/*`` envelope (protocol version, client
  capabilities, client info). ``server/discover`` states the server's versions and capabilities.

The host settles the era the way the ``mcp`` SDK's client does in ``mode='auto'``: ``server/discover`` at the newest
modern version; the modern era when the result lists a modern version the host speaks; the legacy ``initialize``
otherwise (any JSON-RPC error, an HTTP 4xx without an authorization challenge, a result listing only handshake
versions), except a ``-32022`` naming only modern versions the host does not speak (no shared version). An answer
that says nothing about the era (401/403, a 5xx, a broken connection) settles nothing: the next request probes
again.

The choice (``--mcp-era``): ``auto`` (default: modern when the server speaks it), ``legacy`` or ``modern`` (that era
without probing). It and what was settled are kept per :class:`~conformance.host.http.HostHTTP` (one per run, or
per named target of a fleet) and per MCP endpoint URL.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.core import _context

LEGACY = "legacy"
MODERN = "modern"
AUTO = "auto"
CHOICES = (AUTO, LEGACY, MODERN)

LEGACY_VERSION = "2025-06-18"  # the handshake version the host offers in initialize
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSION = "2026-07-28"  # the newest modern version: server/discover is sent at it
MODERN_VERSIONS = (MODERN_VERSION,)

UNSUPPORTED_PROTOCOL_VERSION = -32022
HEADER_MISMATCH = -32020

PROTOCOL_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
SESSION_HEADER = "Mcp-Session-Id"
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
CLIENT_INFO = {"name": "conformance-host", "version": "0.1"}
DISCOVER = "server/discover"
NOTE = re.compile(r"MCP era: (\w+ \([^)]*\))")  # what Era.describe() writes: "MCP era: modern (2026-07-28); ..."


@dataclass(frozen=True)
class Era:
    """The era and protocol version the host speaks to one MCP endpoint, and how that was settled."""

    name: str  # LEGACY or MODERN
    version: str
    how: str

    @property
    def modern(self) -> bool:
        return self.name == MODERN

    def describe(self) -> str:
        return f"MCP era: {self.name} ({self.version}); {self.how}"


def legacy(how: str) -> Era:
    return Era(LEGACY, LEGACY_VERSION, how)


def modern(how: str, version: str = MODERN_VERSION) -> Era:
    return Era(MODERN, version, how)


# ------------------------------------------------------------------------------------------ the wire form


def envelope(params: Mapping[str, Any] | None, version: str = MODERN_VERSION) -> dict[str, Any]:
    """``params`` with the modern ``_meta`` envelope added (keys the caller already put in ``_meta`` win)."""
    body = dict(params or {})
    meta = body.get("_meta")
    stamp = {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {}, META_CLIENT_INFO: dict(CLIENT_INFO)}
    body["_meta"] = {**stamp, **meta} if isinstance(meta, Mapping) else stamp
    return body


def modern_headers(method: str, params: Mapping[str, Any] | None, version: str = MODERN_VERSION) -> dict[str, str]:
    """The routing headers of a modern request: version, method and, for a name-bearing method, the name."""
    headers = {PROTOCOL_HEADER: version, METHOD_HEADER: method}
    key = NAME_BEARING.get(method)
    name = (params or {}).get(key) if key else None
    if isinstance(name, str):
        headers[NAME_HEADER] = name if name.isascii() and name.isprintable() else _encoded(name)
    return headers


def _encoded(value: str) -> str:
    """The SDK's header-value codec for a value that is not printable ASCII: ``=?base64?...?=``."""
    import base64

    return "=?base64?" + base64.b64encode(value.encode()).decode("ascii") + "?="


def discover_request(version: str = MODERN_VERSION, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": DISCOVER, "params": envelope(None, version)}


# ------------------------------------------------------------------------------------- the mode='auto' rules


def settle_from_discover(status: int, headers: Any, message: Mapping[str, Any] | None) -> Era | None:
    """The era a ``server/discover`` answer settles, by the rules of the SDK client's ``mode='auto'``; None when
    the answer says nothing about the era (authorization refused, server error)."""
    challenged = bool(headers.get("www-authenticate")) if headers is not None else False
    if status in (401, 403) or challenged or status >= 500 or status == 429:
        return None
    result = message.get("result") if message else None
    error = message.get("error") if message else None
    if isinstance(result, Mapping):
        value = result.get("supportedVersions")
        listed: list[Any] = value if isinstance(value, list) else []
        mutual = [v for v in MODERN_VERSIONS if v in listed]
        if mutual:
            return modern(f"server/discover listed {', '.join(str(v) for v in listed)}", mutual[-1])
        return legacy(f"server/discover listed no modern version ({value!r}); initialize")
    if isinstance(error, Mapping):
        code = error.get("code")
        data = error.get("data")
        supported = data.get("supported") if isinstance(data, Mapping) else None
        if code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(supported, list):
            mutual = [v for v in MODERN_VERSIONS if v in supported]
            if mutual:
                return modern(f"server/discover: -32022 naming {supported}", mutual[-1])
            if not any(v in HANDSHAKE_VERSIONS for v in supported):
                return modern(f"server/discover: -32022 naming only {supported}, no version in common")
        return legacy(f"server/discover → HTTP {status}, JSON-RPC error {code}; initialize")
    if 400 <= status < 500:
        return legacy(f"server/discover → HTTP {status}; initialize")
    return legacy(f"server/discover → HTTP {status} without a JSON-RPC answer; initialize")


# ------------------------------------------------------------------------------------------ state per host


@dataclass
class _HostEras:
    choice: str = AUTO
    settled: dict[str, Era] | None = None


_lock = threading.Lock()
_hosts: weakref.WeakKeyDictionary[Any, _HostEras] = weakref.WeakKeyDictionary()


def _state(host: Any) -> _HostEras:
    with _lock:
        state = _hosts.get(host)
        if state is None:
            state = _hosts[host] = _HostEras(settled={})
        return state


def choose(host: Any, choice: str) -> None:
    """The era ``host`` speaks to every MCP endpoint: AUTO (settled per endpoint), LEGACY or MODERN."""
    if choice not in CHOICES:
        raise ValueError(f"MCP era {choice!r}: expected one of {', '.join(CHOICES)}")
    state = _state(host)
    state.choice = choice
    state.settled = {}


def choose_setting(host: Any, value: Any) -> None:
    """:func:`choose` from the ``mcp_era`` setting: ``both`` (a fleet of one target per era, each member with its
    own era) and no value are AUTO for a host that is not one of those members."""
    choose(host, value if value in CHOICES else AUTO)


def choice_of(host: Any) -> str:
    return _state(host).choice


def _key(url: str) -> str:
    return url.split("?", 1)[0].split("#", 1)[0]


def known(host: Any, url: str) -> Era | None:
    """The era ``host`` speaks to ``url``: the chosen one, or the one settled by a probe; None before either."""
    state = _state(host)
    if state.choice in (LEGACY, MODERN):
        chosen = legacy("--mcp-era legacy") if state.choice == LEGACY else modern("--mcp-era modern")
        remember(host, url, chosen)
        return chosen
    with _lock:
        return (state.settled or {}).get(_key(url))


def remember(host: Any, url: str, era: Era) -> None:
    """Keep the era settled for ``url``; the first time, say so on the running check (its evidence, the report)."""
    state = _state(host)
    with _lock:
        settled = state.settled if state.settled is not None else {}
        state.settled = settled
        new = _key(url) not in settled
        settled.setdefault(_key(url), era)
    record = _context.current() if new else None
    if record is not None:
        record.notes.append(era.describe())
