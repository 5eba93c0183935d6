"""The parts of the ``mcp`` SDK the reference tool server uses (the low-level server, its streamable HTTP session
manager, its transport security settings, the protocol types), imported without first running the ``mcp`` and
``mcp.server`` package ``__init__`` modules when shortcut ``mcp-inits`` is on
(``conformance.core._shortcuts.import_mcp_server``).

Those two only re-export names, but to do so they import the client side and the high-level ``MCPServer`` framework
with its pydantic models, none of it used here: the tool server's start is its imports, the longest of the stack's.
The server modules are the same either way; ``from mcp import ...`` still gets the full package.
"""

from __future__ import annotations

from conformance.core._shortcuts import import_mcp_server

import_mcp_server(
    ("mcp.types", "mcp.server.lowlevel", "mcp.server.streamable_http_manager", "mcp.server.transport_security")
)

import mcp.types as mt  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager  # noqa: E402
from mcp.server.transport_security import TransportSecuritySettings  # noqa: E402

__all__ = ["Server", "StreamableHTTPASGIApp", "StreamableHTTPSessionManager", "TransportSecuritySettings", "mt"]
