"""The MCP wire's JSON-RPC, shared by the raw probes (:mod:`conformance.host.mcp`), the SDK session
(:mod:`conformance.host.mcp_session`) and discovery: reading the messages of a body (JSON, batch or SSE), finding the
response to a request, the first Bearer challenge, and the session's error. A leaf of the host's MCP modules."""

from __future__ import annotations

from typing import Any

from conformance.core._exceptions import TargetError
from conformance.host import _json as target_json
from conformance.host.challenge import Challenge, first_bearer_challenge

__all__ = ["McpSessionError", "first_challenge", "jsonrpc_messages", "response_to", "sse_data"]


class McpSessionError(TargetError):
    """The MCP session could not do what was asked (HTTP error status, JSON-RPC error, unusable answer)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        challenge: Challenge | None = None,
        error: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.challenge = challenge
        self.error = error


def sse_data(text: str) -> list[str]:
    """The ``data`` of each event of a text/event-stream body (multi-line data joined with newlines).

    An event without a terminating blank line at the end of the body still counts (the stream was closed).
    """
    events: list[str] = []
    data: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data:
                events.append("\n".join(data))
            data = []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            if name == "data":
                data.append(value[1:] if value.startswith(" ") else value)
    if data:
        events.append("\n".join(data))
    return events


def jsonrpc_messages(content_type: str | None, body: bytes) -> list[Any]:
    """The JSON-RPC messages of a response body: one object, a batch array, or SSE events with JSON data.

    Unparseable parts are skipped; callers judge an empty list.
    """
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    text = body.decode("utf-8", "replace")
    chunks = sse_data(text) if ctype == "text/event-stream" else [text]
    messages: list[Any] = []
    for chunk in chunks:
        if not chunk.strip():
            continue
        try:
            value = target_json.loads(chunk)
        except ValueError:
            continue
        messages.extend(value if isinstance(value, list) else [value])
    return messages


def response_to(messages: list[Any], request_id: Any) -> dict[str, Any] | None:
    """The response (result or error) to ``request_id`` among ``messages``; else the only response there is."""
    # An OAuth error body ({"error": "invalid_token"}) is not JSON-RPC: a response names the protocol or an id.
    responses = [
        m
        for m in messages
        if isinstance(m, dict) and ("result" in m or "error" in m) and (m.get("jsonrpc") == "2.0" or "id" in m)
    ]
    for message in responses:
        if message.get("id") == request_id and type(message.get("id")) is type(request_id):
            return message
    return responses[0] if len(responses) == 1 else None


def first_challenge(headers: Any) -> Challenge | None:
    """The first Bearer challenge of a response's ``WWW-Authenticate`` headers."""
    return first_bearer_challenge(headers.get_list("www-authenticate") if hasattr(headers, "get_list") else [])
