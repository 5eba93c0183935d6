"""An async MCP client session as the host makes it, for ``async def`` checks and vendors' async tests.

It is the session :class:`~conformance.host.mcp.McpSession` opens (the same SDK client, httpx settings, TLS, bearer
token, redacting recording transport), without the portal thread: the caller's event loop drives it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from mcp.client.session import ClientSession

from conformance.host.http import HostHTTP
from conformance.host.mcp import McpSession


@asynccontextmanager
async def host_client_session(
    host: HostHTTP,
    url: str,
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """``async with host_client_session(host_http, url, token=...) as session``: initialized, ready for
    ``list_tools()`` / ``call_tool()``; every exchange is recorded into the running check, redacted."""
    host.guard.check(url)
    connection = McpSession(host, url, token=token, headers=headers)
    async with connection._connect() as session:  # the host's own connection recipe, on this loop
        await session.initialize()
        yield session


__all__ = ["host_client_session"]
