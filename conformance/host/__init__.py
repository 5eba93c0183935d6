"""The host: what the harness does as an assistant host, with no verdicts and no pytest.

The public host API is named here (httpx's ``__init__`` is the model); the modules beside it (``oauth``,
``login``, ``mcp``, ``challenge``, ...) are public too, for the protocol details. Modules whose names start
with ``_`` are private: import their names from here. Names load on first use, so that importing one host module
does not load them all (the MCP SDK alone takes most of a second).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from conformance.core._exceptions import (
    InvalidResponse,
    LimitReached,
    ResponseTooLarge,
    TargetError,
    TargetThrottled,
    TargetUnreachable,
    UrlRefused,
)

if TYPE_CHECKING:
    from conformance.host._guard import UrlGuard, host_of, is_loopback_host
    from conformance.host._json import NestedTooDeep
    from conformance.host._json import loads as parse_json
    from conformance.host._pace import Pacer, parse_duration
    from conformance.host._redact import (
        CRAFTED,
        REDACTED,
        Redactor,
        redactor_for,
        scrub_log_file,
        scrub_log_records,
        shown_url,
    )
    from conformance.host._retry import DEFAULT_RETRY, NO_RETRY, USER_ACTION_CODES, RetryPolicy, parse_retry_after
    from conformance.host.asmeta import AsMetadata, discover_as_metadata
    from conformance.host.discovery import PrmDiscovery, discover_prm
    from conformance.host.exchange import BODY_EXCERPT_CHARS, Exchange, exchange_of, record_exchange
    from conformance.host.fields import json_field, json_get
    from conformance.host.http import USER_AGENT, HostHTTP, ssl_context
    from conformance.host.mcp import McpSessionError, raw_call
    from conformance.host.mcp_session import McpSession
    from conformance.host.publisher import Publisher

# public name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    **{n: ("conformance.host._guard", n) for n in ("UrlGuard", "host_of", "is_loopback_host")},
    "NestedTooDeep": ("conformance.host._json", "NestedTooDeep"),
    "parse_json": ("conformance.host._json", "loads"),
    **{n: ("conformance.host._pace", n) for n in ("Pacer", "parse_duration")},
    **{
        n: ("conformance.host._redact", n)
        for n in ("CRAFTED", "REDACTED", "Redactor", "redactor_for", "scrub_log_file", "scrub_log_records", "shown_url")
    },
    **{
        n: ("conformance.host._retry", n)
        for n in ("DEFAULT_RETRY", "NO_RETRY", "USER_ACTION_CODES", "RetryPolicy", "parse_retry_after")
    },
    **{n: ("conformance.host.asmeta", n) for n in ("AsMetadata", "discover_as_metadata")},
    **{n: ("conformance.host.discovery", n) for n in ("PrmDiscovery", "discover_prm")},
    **{
        n: ("conformance.host.exchange", n)
        for n in ("BODY_EXCERPT_CHARS", "Exchange", "exchange_of", "record_exchange")
    },
    **{n: ("conformance.host.fields", n) for n in ("json_field", "json_get")},
    **{n: ("conformance.host.http", n) for n in ("USER_AGENT", "HostHTTP", "ssl_context")},
    **{n: ("conformance.host.mcp", n) for n in ("McpSessionError", "raw_call")},
    "McpSession": ("conformance.host.mcp_session", "McpSession"),
    "Publisher": ("conformance.host.publisher", "Publisher"),
}

__all__ = [
    "BODY_EXCERPT_CHARS",
    "CRAFTED",
    "DEFAULT_RETRY",
    "NO_RETRY",
    "REDACTED",
    "USER_ACTION_CODES",
    "USER_AGENT",
    "AsMetadata",
    "Exchange",
    "HostHTTP",
    "InvalidResponse",
    "LimitReached",
    "McpSession",
    "McpSessionError",
    "NestedTooDeep",
    "Pacer",
    "PrmDiscovery",
    "Publisher",
    "Redactor",
    "ResponseTooLarge",
    "RetryPolicy",
    "TargetError",
    "TargetThrottled",
    "TargetUnreachable",
    "UrlGuard",
    "UrlRefused",
    "discover_as_metadata",
    "discover_prm",
    "exchange_of",
    "host_of",
    "is_loopback_host",
    "json_field",
    "json_get",
    "parse_duration",
    "parse_json",
    "parse_retry_after",
    "raw_call",
    "record_exchange",
    "redactor_for",
    "scrub_log_file",
    "scrub_log_records",
    "shown_url",
    "ssl_context",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
