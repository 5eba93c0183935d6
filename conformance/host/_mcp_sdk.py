"""The parts of the ``mcp`` SDK the host uses (the client session, its streamable HTTP transport, its error, the
protocol types), imported without first running the ``mcp`` and ``mcp.client`` package ``__init__`` modules when
shortcut ``mcp-inits`` is on (``conformance.core._shortcuts.import_mcp_client``).

Those two only re-export names, but to do so they import the whole SDK: the server side (starlette, uvicorn,
sse-starlette, python-multipart, the MCPServer framework and its pydantic models), the stdio transports, the
high-level ``Client``, none of it used by the host. The client modules are the same either way, so the SDK parses
and validates exactly what it did; ``mcp.Client``, ``from mcp import ClientSession`` ... still get the full package.
"""

from __future__ import annotations

from conformance.core._shortcuts import import_mcp_client

import_mcp_client(("mcp.client.session", "mcp.client.streamable_http", "mcp.shared.exceptions"))

import mcp_types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

__all__ = ["ClientSession", "MCPError", "streamable_http_client", "types"]
