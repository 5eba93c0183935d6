"""The tool server answers its health check while its app (the mcp SDK's imports) is still being built; every
other request waits for the app, whose lifespan runs once it is built and ends with the server's."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from conformance.reference.toolserver._deferred import DeferredApp


class _Server:
    """The ASGI server's side of the lifespan protocol, driven by hand."""

    def __init__(self, app: DeferredApp) -> None:
        self.app = app
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> dict[str, Any]:
        async def run() -> None:
            await self.app({"type": "lifespan", "asgi": {"version": "3.0"}}, self.inbox.get, self.outbox.put)

        self.task = asyncio.create_task(run())
        await self.inbox.put({"type": "lifespan.startup"})
        return await asyncio.wait_for(self.outbox.get(), 10)

    async def stop(self) -> dict[str, Any]:
        await self.inbox.put({"type": "lifespan.shutdown"})
        return await asyncio.wait_for(self.outbox.get(), 10)


def test_health_answers_before_the_app_is_built_and_requests_wait_for_it() -> None:
    release = threading.Event()
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        events.append("started")
        yield
        events.append("stopped")

    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("served by the app")

    def build() -> Starlette:
        assert release.wait(10)  # the imports, still going on
        return Starlette(routes=[Route("/mcp", hello, methods=["POST"])], lifespan=lifespan)

    async def scenario() -> None:
        deferred = DeferredApp(build)
        server = _Server(deferred)
        assert await server.start() == {"type": "lifespan.startup.complete"}  # serving while the build goes on
        transport = httpx.ASGITransport(app=deferred)
        async with httpx.AsyncClient(transport=transport, base_url="https://toolserver") as client:
            health = await client.get("/healthz")
            assert (health.status_code, health.json()) == (200, {"status": "ok"})
            waiting = asyncio.create_task(client.post("/mcp"))
            await asyncio.sleep(0.05)
            assert not waiting.done() and events == []
            release.set()
            answer = await asyncio.wait_for(waiting, 10)
            assert (answer.status_code, answer.text) == (200, "served by the app")
            assert events == ["started"]
        assert await server.stop() == {"type": "lifespan.shutdown.complete"}
        assert events == ["started", "stopped"]

    asyncio.run(scenario())


def test_a_server_stopped_before_its_app_was_built_stops_at_once() -> None:
    """A stack stopped right after it came up does not wait for the tool server's imports: the build's thread is
    a daemon, and nothing is started with what it builds."""
    release = threading.Event()
    built: list[Starlette] = []

    def build() -> Starlette:
        assert release.wait(10)
        built.append(Starlette())
        return built[-1]

    async def scenario() -> None:
        deferred = DeferredApp(build)
        server = _Server(deferred)
        await server.start()
        assert await server.stop() == {"type": "lifespan.shutdown.complete"}  # the build still blocked
        transport = httpx.ASGITransport(app=deferred)
        async with httpx.AsyncClient(transport=transport, base_url="https://toolserver") as client:
            assert (await client.post("/mcp")).status_code == 503  # no app was started to serve it
        release.set()

    asyncio.run(scenario())
