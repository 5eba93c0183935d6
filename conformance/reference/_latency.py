"""A set round-trip time in the reference services, for machines without ``tc netem``.

With ``--latency`` every service of the stack answers each request that much later, and the first request of each
new connection once more (the round trip a remote target's TCP and TLS handshakes cost): a run against the
embedded stack then waits as it would for a target that far away. The delay is the server's: the client's clock
sees it, whatever the client is.

- ASGI services (uvicorn): :func:`with_latency` wraps the app. A connection is known by the client's address and
  port (``scope["client"]``), which one TCP connection keeps for its life.
- Threaded ``http.server``/werkzeug handlers (the object-store emulators): :func:`delayed_handler`.
- The Node IdP does the same in ``idp.js`` (its ``--latency`` option).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypeVar

MAX_LATENCY_S = 5.0
# Connections remembered per service: enough for any run (a client that comes back on a forgotten port pays the
# connection's round trip once more, as a new connection would).
REMEMBERED_CONNECTIONS = 4096
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)?\s*", re.IGNORECASE)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def parse_latency(text: str) -> float:
    """Seconds of a round-trip time written ``50ms``, ``0.15s`` or ``50`` (milliseconds), from 0 to 5 s.
    Anything else raises ``ValueError`` naming the accepted forms."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration: write it as 50ms, 0.15s or 50 (milliseconds)")
    value = float(match.group(1))
    seconds = value if (match.group(2) or "ms").lower() == "s" else value / 1000.0
    if seconds > MAX_LATENCY_S:
        raise ValueError(f"{text!r} is more than {MAX_LATENCY_S:g} s")
    return seconds


def format_latency(seconds: float) -> str:
    """``seconds`` as the services' ``--latency`` argument (seconds, e.g. ``0.05s``)."""
    return f"{seconds:g}s"


class _Connections:
    """Which connections this service has already seen (bounded, oldest forgotten first)."""

    def __init__(self) -> None:
        self._seen: OrderedDict[Any, None] = OrderedDict()

    def is_new(self, key: Any) -> bool:
        if key is None:
            return False
        if key in self._seen:
            self._seen.move_to_end(key)
            return False
        self._seen[key] = None
        if len(self._seen) > REMEMBERED_CONNECTIONS:
            self._seen.popitem(last=False)
        return True


def with_latency(app: ASGIApp, latency_s: float) -> ASGIApp:
    """``app`` answering each HTTP request ``latency_s`` later, the first request of a new connection twice that;
    ``app`` itself when the latency is 0. Lifespan and other scopes pass at once."""
    if latency_s <= 0:
        return app
    connections = _Connections()

    async def delayed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            client = scope.get("client")
            rounds = 2 if connections.is_new(tuple(client) if client else None) else 1
            await asyncio.sleep(latency_s * rounds)
        await app(scope, receive, send)

    return delayed


HandlerT = TypeVar("HandlerT", bound=type)


def delayed_handler(handler: HandlerT, latency_s: float) -> HandlerT:
    """A subclass of the ``http.server.BaseHTTPRequestHandler`` class ``handler`` (one instance per connection,
    its own thread) that waits ``latency_s`` once when the connection opens and once before each answer's status
    line (``send_response``, which werkzeug's handler calls too); ``handler`` itself when the latency is 0."""
    if latency_s <= 0:
        return handler

    class Delayed(handler):  # type: ignore[misc,valid-type]
        def handle(self) -> None:
            time.sleep(latency_s)
            super().handle()

        def send_response(self, code: int, message: str | None = None) -> None:
            time.sleep(latency_s)
            super().send_response(code, message)

    Delayed.__name__ = Delayed.__qualname__ = f"Delayed{handler.__name__}"
    return Delayed  # type: ignore[return-value]
