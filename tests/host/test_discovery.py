"""The opening request (conformance.host.discovery.open_endpoint): the era a server/discover answer settles, and the
host's fall back to initialize, also when another request settled the era while this one was in flight."""

from __future__ import annotations

import json

import httpx

from conformance.host import mcp_era
from conformance.host._guard import UrlGuard
from conformance.host.discovery import open_endpoint
from conformance.host.http import HostHTTP

URL = "https://legacy.test/mcp"


def legacy_server(on_discover: object = None) -> HostHTTP:
    """A server that speaks only the legacy era: server/discover is an unknown method (400), initialize works.
    ``on_discover`` runs while the discover request is in flight."""
    host: list[HostHTTP] = []

    def handler(request: httpx.Request) -> httpx.Response:
        method = json.loads(request.content)["method"]
        if method == mcp_era.DISCOVER:
            if callable(on_discover):
                on_discover(host[0])
            return httpx.Response(400, json={"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "?"}})
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}})

    host.append(HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True)))
    return host[0]


def test_a_legacy_answer_settles_the_era_and_the_host_falls_back_to_initialize() -> None:
    http = legacy_server()
    response = open_endpoint(http, URL)
    assert response.status_code == 200 and json.loads(response.request.content)["method"] == "initialize"
    era = mcp_era.known(http, URL)
    assert era is not None and not era.modern


def test_the_fall_back_happens_when_another_request_settled_the_era_meanwhile() -> None:
    """Two opening requests at once: the other one settles the legacy era while this discover is in flight; this
    one still falls back to initialize instead of handing its caller the discover's 400."""
    http = legacy_server(on_discover=lambda host: mcp_era.remember(host, URL, mcp_era.legacy("another request")))
    response = open_endpoint(http, URL)
    assert response.status_code == 200 and json.loads(response.request.content)["method"] == "initialize"
