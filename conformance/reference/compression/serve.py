"""Serving the sandbox with uvicorn over TLS; the ``plain_http`` mutant also answers plain HTTP on the same port.

For that mutant a small TCP front peeks at the first byte of each connection: a TLS handshake (0x16) goes to the
TLS server, anything else to a plain-HTTP server of the same app, both on internal loopback ports.

With ``plain_port`` the sandbox also listens on plain HTTP there, as a deployment's port 80 does: every request is
redirected to the same path over HTTPS without being processed (what IMG-TLS-01 asks; the harness is told this
URL, so that the rule is decided on a listener that exists).
"""

from __future__ import annotations

import asyncio
import contextlib
from types import FrameType
from typing import Any

import uvicorn

from conformance.reference._latency import with_latency
from conformance.reference._service import KEEP_ALIVE_S, free_port, http_protocol

TLS_HANDSHAKE = b"\x16"


class _Server(uvicorn.Server):
    """One of the sandbox's listeners: a signal that stops one stops them all at once (each would otherwise
    notice it only after the one before had shut down, one shutdown after the other)."""

    def __init__(self, config: uvicorn.Config, sandbox: SandboxServer) -> None:
        super().__init__(config)
        self.sandbox = sandbox

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.sandbox.stop()


class SandboxServer:
    def __init__(
        self,
        app: Any,
        host: str,
        port: int,
        certfile: str,
        keyfile: str,
        *,
        plain_http: bool = False,
        plain_output_only: bool = False,
        plain_port: int | None = None,
        latency_s: float = 0.0,
    ):
        plain_http = plain_http or plain_output_only
        app = with_latency(app, latency_s)  # every listener answers as far away
        self.host, self.port, self.plain_http = host, port, plain_http
        tls_port = free_port(host) if plain_http else port
        # Bounded graceful shutdown: an idle keep-alive client must not hold the stack's stop for long.
        common: dict[str, Any] = {
            "host": host,
            "log_level": "warning",
            "server_header": False,
            "timeout_graceful_shutdown": 1,
            "timeout_keep_alive": KEEP_ALIVE_S,
            "http": http_protocol(),
        }
        self.tls = _Server(
            uvicorn.Config(app, port=tls_port, ssl_certfile=certfile, ssl_keyfile=keyfile, **common), self
        )
        plain_app = _upgrade_uploads(app, port) if plain_output_only else app
        self.plain = _Server(uvicorn.Config(plain_app, port=free_port(host), **common), self) if plain_http else None
        self._front: asyncio.Server | None = None
        self.redirect = (
            _Server(
                uvicorn.Config(
                    with_latency(_to_https(host, port), latency_s), port=plain_port, lifespan="off", **common
                ),
                self,
            )
            if plain_port is not None
            else None
        )

    @property
    def started(self) -> bool:
        servers_up = all(s.started for s in (self.tls, self.plain, self.redirect) if s is not None)
        return servers_up and (not self.plain_http or self._front is not None)

    def stop(self) -> None:
        for server in (self.tls, self.plain, self.redirect):
            if server is not None:
                server.should_exit = True

    def run(self) -> None:
        asyncio.run(self.serve())

    async def serve(self) -> None:
        extra = [self.redirect.serve()] if self.redirect is not None else []
        if self.plain is None:
            await asyncio.gather(self.tls.serve(), *extra)
            return
        self._front = await asyncio.start_server(self._route, self.host, self.port)
        try:
            await asyncio.gather(self.tls.serve(), self.plain.serve(), *extra)
        finally:
            self._front.close()

    async def _route(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self.plain is not None
        try:
            first = await asyncio.wait_for(reader.read(1), timeout=10)
            if not first:
                return
            port = self.tls.config.port if first == TLS_HANDSHAKE else self.plain.config.port
            back_reader, back_writer = await asyncio.open_connection(self.host, port)
            back_writer.write(first)
            await asyncio.gather(_pipe(reader, back_writer), _pipe(back_reader, writer))
        except (OSError, TimeoutError):
            return
        finally:
            with contextlib.suppress(OSError):
                writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


def _upgrade_uploads(app: Any, port: int) -> Any:
    """The ``plain_http_output`` mutant's plain-HTTP app: uploads are redirected to HTTPS, but /output/... (downloads
    and resizes) is served as is, as a front that upgrades only the upload path would."""

    async def front(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/output/"):
            await app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1").split(":")[0] or "localhost"
        location = f"https://{host}:{port}{scope['path']}".encode()
        await send({"type": "http.response.start", "status": 308, "headers": [(b"location", location)]})
        await send({"type": "http.response.body", "body": b""})

    return front


def _to_https(host: str, port: int) -> Any:
    """The plain-HTTP listener's app: a 308 to the same path and query on the TLS port; the request is never read
    or processed."""
    authority = f"[{host}]" if ":" in host else host

    async def redirect(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        query = scope.get("query_string", b"").decode("latin-1")
        location = f"https://{authority}:{port}{scope['path']}" + (f"?{query}" if query else "")
        await send(
            {
                "type": "http.response.start",
                "status": 308,
                "headers": [(b"location", location.encode()), (b"content-length", b"0")],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    return redirect
