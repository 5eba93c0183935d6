"""The tool server answering its health check before its app is built.

Building the app imports the ``mcp`` SDK (both eras' pydantic models): most of the tool server's start, the
longest of the stack's. :class:`DeferredApp` is the ASGI app uvicorn serves from the start: it answers
``GET /healthz`` at once, builds the real app in a thread as the server starts (``build``), runs the real app's
lifespan once it is built, and serves every other request with it, each waiting until it is ready. A build that
fails is logged and stops the server (a request that waited for it gets a 503); a server stopped while the app is
still being built stops at once (the build's thread is a daemon).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOG = logging.getLogger("conformance.reference.toolserver")
HEALTH_PATH = "/healthz"


class DeferredApp:
    def __init__(self, build: Callable[[], ASGIApp]) -> None:
        self._build = build
        self._app: ASGIApp | None = None
        self._ready: asyncio.Event | None = None
        self._failed = False
        self._shutdown: asyncio.Event | None = None
        self._inner: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] == "http" and scope["path"] == HEALTH_PATH and scope["method"] == "GET":
            await JSONResponse({"status": "ok"})(scope, receive, send)  # as the app's own health check answers
            return
        if self._app is None:
            assert self._ready is not None, "served before its lifespan started"
            await self._ready.wait()
        if self._app is None:
            if scope["type"] == "http":
                await JSONResponse({"error": "the tool server failed to start"}, 503)(scope, receive, send)
            return
        await self._app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        self._ready, self._shutdown = asyncio.Event(), asyncio.Event()
        self._inner = asyncio.create_task(self._start())
        await send({"type": "lifespan.startup.complete"})  # serving (its health check) from now on
        message = await receive()
        assert message["type"] == "lifespan.shutdown"
        self._shutdown.set()
        if self._app is None:
            self._inner.cancel()  # stopped while still being built: the build's daemon thread is left to the exit
            self._ready.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._inner
        await send({"type": "lifespan.shutdown.complete"})

    async def _start(self) -> None:
        """Build the app in a thread, then run its lifespan until the server shuts down."""
        assert self._ready is not None and self._shutdown is not None
        try:
            app = await _in_daemon_thread(self._build)
        except Exception:
            LOG.exception("the tool server's app could not be built")
            self._fail()
            return
        if self._shutdown.is_set():  # stopped while it was being built: nothing to start, nothing waits for it
            self._ready.set()
            return
        started = asyncio.Event()
        shutdown = self._shutdown
        outcome: dict[str, Any] = {}

        async def inner_receive() -> Message:
            if not started.is_set():
                return {"type": "lifespan.startup"}
            await shutdown.wait()
            return {"type": "lifespan.shutdown"}

        async def inner_send(message: Message) -> None:
            outcome[message["type"]] = message
            if message["type"].startswith("lifespan.startup."):
                started.set()

        async def run_lifespan() -> None:
            await app({"type": "lifespan", "asgi": {"version": "3.0"}}, inner_receive, inner_send)

        lifespan = asyncio.create_task(run_lifespan())
        started_or_ended = asyncio.create_task(started.wait())
        await asyncio.wait({lifespan, started_or_ended}, return_when=asyncio.FIRST_COMPLETED)
        started_or_ended.cancel()
        if "lifespan.startup.complete" not in outcome:
            LOG.error("the tool server's app failed to start: %s", outcome.get("lifespan.startup.failed", {}))
            if lifespan.done() and lifespan.exception() is not None:
                LOG.error("its lifespan raised", exc_info=lifespan.exception())
            self._fail()
            return
        self._app = app
        self._ready.set()
        await lifespan  # until the server shuts down (inner_receive then says so)

    def _fail(self) -> None:
        self._failed = True
        assert self._ready is not None
        self._ready.set()
        os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's own shutdown: the stack sees the service gone


def _in_daemon_thread(build: Callable[[], ASGIApp]) -> asyncio.Future[ASGIApp]:
    """``build()`` in a daemon thread (a server stopped meanwhile exits without waiting for it), as a future of
    the running loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[ASGIApp] = loop.create_future()

    def built(result: ASGIApp) -> None:
        if not future.done():  # not cancelled meanwhile
            future.set_result(result)

    def failed(error: BaseException) -> None:
        if not future.done():
            future.set_exception(error)

    def run() -> None:
        try:
            result = build()
        except BaseException as exc:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(failed, exc)
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(built, result)

    threading.Thread(target=run, name="toolserver-app-build", daemon=True).start()
    return future
