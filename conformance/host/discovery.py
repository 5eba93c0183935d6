"""Protected-resource metadata discovery (RFC 9728) in the order the host uses.

1. ``resource_metadata`` from the tool server's 401 challenge,
2. the path-suffixed well-known URL ``{origin}/.well-known/oauth-protected-resource{path}``,
3. the root well-known URL ``{origin}/.well-known/oauth-protected-resource``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from conformance.core._exceptions import InvalidResponse
from conformance.host import _json as target_json
from conformance.host import mcp_era
from conformance.host.challenge import Challenge, first_bearer_challenge
from conformance.host.exchange import exchange_of
from conformance.host.http import HostHTTP

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
MCP_PROTOCOL_VERSION = mcp_era.LEGACY_VERSION


def prm_urls(resource_url: str) -> list[str]:
    """Well-known PRM URLs for a resource: path-suffixed first (when the resource has a path), then root."""
    parts = urlsplit(resource_url)
    path = parts.path.rstrip("/")
    root = urlunsplit((parts.scheme, parts.netloc, PRM_WELL_KNOWN, "", ""))
    if path:
        return [urlunsplit((parts.scheme, parts.netloc, PRM_WELL_KNOWN + path, "", "")), root]
    return [root]


def initialize_request() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "conformance-host", "version": "0.1"},
        },
    }


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def opening_request(http: HostHTTP, mcp_url: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The request (payload, headers) a host opens an MCP endpoint with, in the era it speaks to it: ``initialize``
    in the legacy era; ``server/discover`` in the modern era, and while the era is not settled yet (what the SDK
    client's ``mode='auto'`` sends first)."""
    era = mcp_era.known(http, mcp_url)
    if era is not None and not era.modern:
        return initialize_request(), dict(MCP_HEADERS)
    version = era.version if era is not None else mcp_era.MODERN_VERSION
    headers = {**MCP_HEADERS, **mcp_era.modern_headers(mcp_era.DISCOVER, None, version)}
    return mcp_era.discover_request(version), headers


def open_endpoint(
    http: HostHTTP, mcp_url: str, headers: dict[str, str] | None = None, *, host: HostHTTP | None = None
) -> httpx.Response:
    """Send the opening request (:func:`opening_request`) with ``headers`` added (credentials) through ``http``
    and return its answer. A ``server/discover`` answer that settles the era is remembered for ``host`` (default
    ``http``); when it settles the legacy era, ``initialize`` follows, as a host falls back to it, and its answer
    is returned."""
    era_host = host or http
    unsettled = mcp_era.known(era_host, mcp_url) is None  # before sending: another request may settle it meanwhile
    payload, sent = opening_request(era_host, mcp_url)
    response = http.post(mcp_url, json=payload, headers={**sent, **(headers or {})}, retry=None)
    if payload["method"] == mcp_era.DISCOVER and unsettled:
        from conformance.host.jsonrpc import jsonrpc_messages, response_to

        messages = jsonrpc_messages(response.headers.get("content-type"), response.content)
        era = mcp_era.settle_from_discover(response.status_code, response.headers, response_to(messages, 1))
        if era is not None:
            mcp_era.remember(era_host, mcp_url, era)  # kept once: requests sent at once may both settle it
            settled = mcp_era.known(era_host, mcp_url)
            if not era.modern and settled is not None and not settled.modern:  # the host falls back to initialize
                return open_endpoint(http, mcp_url, headers, host=era_host)
    return response


def unauthenticated_probe(http: HostHTTP, mcp_url: str) -> httpx.Response:
    """What a host sends first: the opening request of the era (``initialize`` or ``server/discover``) without
    credentials."""
    return open_endpoint(http, mcp_url)


def challenge_of(response: httpx.Response) -> Challenge | None:
    """The first Bearer challenge of a response's WWW-Authenticate header(s), if it parses."""
    return first_bearer_challenge(response.headers.get_list("www-authenticate"))


def json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    """The response body as a JSON object, or an InvalidResponse naming what was wrong."""
    url, exchange = response.request.url, exchange_of(response)
    if response.status_code != 200:
        raise InvalidResponse(f"{what}: {url} answered {response.status_code}, expected 200", exchange=exchange)
    try:
        document = target_json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        ctype = response.headers.get("content-type", "none")
        raise InvalidResponse(f"{what}: {url} is not JSON (Content-Type {ctype})", exchange=exchange) from None
    if not isinstance(document, dict):
        raise InvalidResponse(f"{what}: {url} is JSON but not an object", exchange=exchange)
    return document


def opening_method(response: httpx.Response) -> str:
    """The JSON-RPC method of the request ``response`` answered (``initialize``, ``server/discover``...)."""
    try:
        method = target_json.loads(response.request.content).get("method")
    except (ValueError, AttributeError, RuntimeError):
        method = None
    return method if isinstance(method, str) else "request"


@dataclass
class PrmDiscovery:
    url: str
    document: dict[str, Any]
    via: str  # challenge, path-suffixed, root
    challenge: Challenge | None
    tried: list[str] = field(default_factory=list)
    # The exchange that fetched the document: the evidence of every rule judged on it, whichever check fetched it.
    exchanges: list[dict[str, Any]] = field(default_factory=list)


def discover_prm(http: HostHTTP, mcp_url: str) -> PrmDiscovery:
    """Find the protected-resource metadata the way a host does; raise InvalidResponse saying what each step gave."""
    tried: list[str] = []
    probe = unauthenticated_probe(http, mcp_url)
    challenge = challenge_of(probe) if probe.status_code == 401 else None
    candidates: list[tuple[str, str]] = []
    if challenge is not None and challenge.get("resource_metadata"):
        candidates.append(("challenge", str(challenge.get("resource_metadata"))))
    else:
        opening = f"unauthenticated {opening_method(probe)} → {probe.status_code}"
        tried.append(f"{opening}, no resource_metadata in a Bearer challenge")
    urls = prm_urls(mcp_url)
    candidates += [("path-suffixed" if len(urls) == 2 and i == 0 else "root", u) for i, u in enumerate(urls)]
    for via, url in candidates:
        response = http.get(url, headers={"Accept": "application/json"}, metadata_driven=via == "challenge")
        try:
            document = json_object(response, "protected resource metadata")
        except InvalidResponse as exc:
            tried.append(f"{via} {url}: {exc.message}")
            continue
        fetched = [e for e in (exchange_of(response),) if e is not None]
        return PrmDiscovery(url=url, document=document, via=via, challenge=challenge, tried=tried, exchanges=fetched)
    raise InvalidResponse("no protected resource metadata found; " + "; ".join(tried))
