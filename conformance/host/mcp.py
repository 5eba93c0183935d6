"""MCP from synchronous checks: an SDK session over streamable HTTP, and raw JSON-RPC probes.

:class:`McpSession` is what a real host does: the ``mcp`` SDK client (initialize, ``tools/list`` page by page,
``tools/call``) with the host's bearer token, driven from sync code through an anyio portal thread that keeps one
event loop (and one MCP session) alive across operations. Its httpx client behaves like :class:`HostHTTP`
(timeouts, TLS verification with the CA bundle, unverified TLS only on loopback when allowed) and a wrapping
transport records every exchange, redacted, as evidence of the running check. Results are returned *as they were on
the wire* (taken from the recorded bodies): the SDK parses into models that drop unknown fields such as
``securitySchemes`` and refuses malformed results, while the checks must judge exactly what the target sent.
What the SDK refused is reported beside the raw value.

:func:`raw_call` is for negative probes where the SDK would hide the status line and headers: JSON-RPC over
:class:`HostHTTP` (``initialize``, ``notifications/initialized``, then the call, carrying ``Mcp-Session-Id``),
reading JSON and ``text/event-stream`` answers alike.

The session is in :mod:`conformance.host.mcp_session`, loaded when ``McpSession`` is first named here: importing
the SDK costs more CPU than many checks, and a run's first checks (and every raw probe) do without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from conformance.core._exceptions import TargetError
from conformance.host import mcp_era
from conformance.host.challenge import Challenge
from conformance.host.discovery import MCP_HEADERS, initialize_request
from conformance.host.http import HostHTTP
from conformance.host.jsonrpc import McpSessionError as McpSessionError  # the probes' names, re-exported
from conformance.host.jsonrpc import first_challenge as _first_challenge
from conformance.host.jsonrpc import jsonrpc_messages as jsonrpc_messages
from conformance.host.jsonrpc import response_to as _response_to
from conformance.host.jsonrpc import sse_data as sse_data

if TYPE_CHECKING:
    from conformance.host.mcp_session import CLIENT_INFO as CLIENT_INFO
    from conformance.host.mcp_session import MAX_PAGES as MAX_PAGES
    from conformance.host.mcp_session import McpSession as McpSession
    from conformance.host.mcp_session import ToolCall as ToolCall
    from conformance.host.mcp_session import ToolListing as ToolListing

SESSION_HEADER = "Mcp-Session-Id"
PROTOCOL_HEADER = "MCP-Protocol-Version"


# ----------------------------------------------------------------------------------------- raw probes


@dataclass
class RawResult:
    """One JSON-RPC exchange as the wire had it (the last HTTP step made)."""

    status: int
    headers: httpx.Headers
    message: dict[str, Any] | None  # the JSON-RPC response to the request, when there is one
    messages: list[Any]  # every JSON-RPC message in the body
    challenge: Challenge | None  # first Bearer challenge of WWW-Authenticate
    step: str  # which step answered: "initialize", "notifications/initialized" or "call"
    session_id: str | None
    content_type: str
    body: bytes

    @property
    def result(self) -> Any:
        return self.message.get("result") if self.message else None

    @property
    def error(self) -> Any:
        return self.message.get("error") if self.message else None

    @property
    def json_rpc_result_or_error(self) -> Any:
        return self.result if self.message and "result" in self.message else self.error


def _raw_result(response: httpx.Response, request_id: Any, step: str, session_id: str | None) -> RawResult:
    ctype = response.headers.get("content-type", "")
    messages = jsonrpc_messages(ctype, response.content) if response.content else []
    return RawResult(
        status=response.status_code,
        headers=response.headers,
        message=_response_to(messages, request_id) if request_id is not None else None,
        messages=messages,
        challenge=_first_challenge(response.headers),
        step=step,
        session_id=response.headers.get(SESSION_HEADER) or session_id,
        content_type=ctype,
        body=response.content,
    )


def raw_call(
    host: HostHTTP,
    url: str,
    method: str,
    params: Mapping[str, Any] | None = None,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    handshake: bool = True,
    query: Mapping[str, str] | None = None,
    body: Mapping[str, str] | None = None,
) -> RawResult:
    """Send ``method`` as raw JSON-RPC, in the form of the era the target speaks, and return what answered, status
    line and headers included.

    The era (:mod:`conformance.host.mcp_era`) is the one chosen or already settled for ``url``; when none is yet,
    ``server/discover`` settles it first (sent with the same credentials); when its answer settles nothing (e.g. 401
    for a bad token, the usual outcome of a negative probe) that answer is returned with ``step`` naming it.
    ``initialize`` itself is always sent as the legacy era's. In the legacy era, with ``handshake`` (default),
    ``initialize`` and ``notifications/initialized`` go first as a host does, and their answer is returned when one
    fails; the MCP session, if the server opened one, is closed with DELETE afterwards. In the modern era the call is
    one self-contained POST (routing headers and ``_meta`` envelope, no session). ``token`` goes in
    ``Authorization: Bearer``; ``headers`` override anything (e.g. a malformed ``Authorization``, a routing header);
    ``query`` adds URL parameters and ``body`` top-level members of every JSON-RPC message sent (e.g. a token in the
    query string or the body). No retries: a probe must see the raw 401/429/503.
    """
    base: dict[str, str] = dict(MCP_HEADERS)
    if token is not None:
        host.redactor.add_secret(token)
        base["Authorization"] = f"Bearer {token}"
    for value in [*(query or {}).values(), *(body or {}).values()]:
        host.redactor.add_secret(value)
    session_id: str | None = None

    def post(payload: dict[str, Any], step: str, extra: Mapping[str, str]) -> RawResult:
        sent = {**base, **extra, **(headers or {})}
        message = {**payload, **(body or {})}
        response = host.request("POST", url, json=message, headers=sent, params=query, retry=None)
        return _raw_result(response, payload.get("id"), step, session_id)

    era = mcp_era.known(host, url) if method != "initialize" else mcp_era.legacy("initialize asked for")
    if era is None:
        era, probe = negotiate(host, url, post)
        if era is None:
            return probe
    if era.modern:
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": method}
        payload["params"] = mcp_era.envelope(params, era.version)
        return post(payload, "call", mcp_era.modern_headers(method, params, era.version))
    extra: dict[str, str] = {}
    try:
        if handshake and method != "initialize":
            init = post(initialize_request(), "initialize", extra)
            if init.status >= 300 or not isinstance(init.result, dict):
                return init
            session_id = init.session_id
            if session_id:
                extra[SESSION_HEADER] = session_id
            version = init.result.get("protocolVersion")
            if isinstance(version, str):
                extra[PROTOCOL_HEADER] = version
            note = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notifications/initialized", extra)
            if note.status >= 300:
                return note
        payload = {"jsonrpc": "2.0", "id": 2, "method": method}
        if method == "initialize" and params is None:
            payload = initialize_request()
        elif params is not None:
            payload["params"] = dict(params)
        return post(payload, "call", extra)
    finally:
        if session_id:
            with contextlib.suppress(TargetError):  # closing is a courtesy; the probe's answer is in hand
                host.request("DELETE", url, headers={**base, **extra, **(headers or {})}, params=query, retry=None)


Post = Callable[[dict[str, Any], str, Mapping[str, str]], RawResult]


def negotiate(host: HostHTTP, url: str, post: Post | None = None) -> tuple[mcp_era.Era | None, RawResult]:
    """Send ``server/discover`` at the newest modern version and settle the era by its answer (the SDK client's
    ``mode='auto'`` rules, :func:`conformance.host.mcp_era.settle_from_discover`); remember it for ``url``.

    ``post`` sends a payload with the caller's credentials (default: anonymous). Returns the era (None when the
    answer settled nothing) and the probe's answer.
    """
    if post is None:

        def post(payload: dict[str, Any], step: str, extra: Mapping[str, str]) -> RawResult:
            response = host.request("POST", url, json=payload, headers={**MCP_HEADERS, **extra}, retry=None)
            return _raw_result(response, payload.get("id"), step, None)

    request = mcp_era.discover_request(mcp_era.MODERN_VERSION, request_id=1)
    headers = mcp_era.modern_headers(mcp_era.DISCOVER, None, mcp_era.MODERN_VERSION)
    probe = post(request, mcp_era.DISCOVER, headers)
    era = mcp_era.settle_from_discover(probe.status, probe.headers, probe.message)
    if era is not None:
        mcp_era.remember(host, url, era)
    return era, probe


# ------------------------------------------------------------------------------------- SDK session

# The SDK session lives in conformance.host.mcp_session, imported when first named (its SDK import is the costliest
# of a run: a check that only probes never pays it).
_SESSION_NAMES = frozenset({"McpSession", "ToolListing", "ToolCall", "MAX_PAGES", "CLIENT_INFO"})


def __getattr__(name: str) -> Any:
    if name in _SESSION_NAMES:
        from conformance.host import mcp_session

        return getattr(mcp_session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
