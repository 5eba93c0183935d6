"""An async MCP client session as the host makes it, for ``async def`` checks and vendors' async tests.

It is the session :class:`~conformance.host.mcp.McpSession` opens (the same SDK client, httpx settings, TLS, bearer
token, redacting recording transport), without the portal thread: the caller's event loop drives it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from conformance.host.http import HostHTTP
from conformance.host.mcp import McpSession

if TYPE_CHECKING:
    from mcp.client.session import ClientSession


@asynccontextmanager
async def host_client_session(
    host: HostHTTP,
    url: str,
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """``async with host_client_session(host_http, url, token=...) as session``: its era settled (``server/discover``
    or ``initialize``, as :class:`~conformance.host.mcp.McpSession` does), ready for ``list_tools()`` /
    ``call_tool()``; every exchange is recorded into the running check, redacted."""
    host.guard.check(url)
    connection = McpSession(host, url, token=token, headers=headers)
    async with connection._connect() as session:  # the host's own connection recipe, on this loop
        await connection._negotiate(session)
        yield session


class OwnedSession:
    """A :func:`host_client_session` entered and left by one task of its own.

    The SDK's transport holds anyio cancel scopes, which must be exited by the task that entered them; a pytest
    fixture's setup and teardown may run in different tasks. ``session = await owned.start()`` ... ``await
    owned.aclose()`` works from any tasks of the same loop.
    """

    def __init__(self, host: HostHTTP, url: str, *, token: str | None = None) -> None:
        self.host, self.url, self.token = host, url, token
        self._done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> ClientSession:
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()

        async def own() -> None:
            async with host_client_session(self.host, self.url, token=self.token) as session:
                ready.set_result(session)
                await self._done.wait()

        self._task = asyncio.create_task(own())
        waiting: set[asyncio.Future[Any]] = {ready, self._task}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():  # the task ended first: opening failed, say why
            ready.cancel()
            await self._task
            raise RuntimeError("the MCP session task ended before the session opened")
        return ready.result()

    async def aclose(self) -> None:
        self._done.set()
        if self._task is not None:
            await self._task


__all__ = ["OwnedSession", "host_client_session"]
