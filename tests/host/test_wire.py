"""The host's wire (conformance.host._wire) does what ``httpx.Client`` did for it: the same request built (headers
in the same order, body, timeout, cookies, Basic credentials from the URL), the same transport chosen among the
mounts, and answers handed back with their request."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from conformance.host._cookies import Jars
from conformance.host._wire import AsyncWire, Wire

HEADERS = {"User-Agent": "conformance-host/0.1", "Accept-Encoding": "gzip"}
TIMEOUT = httpx.Timeout(connect=3, read=7, write=7, pool=3)


def _echo(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, headers=[("set-cookie", "s=1; Path=/")], json={"cookie": request.headers.get("cookie")})


def _pair() -> tuple[httpx.Client, Wire]:
    client = httpx.Client(
        transport=httpx.MockTransport(_echo), headers=HEADERS, timeout=TIMEOUT, follow_redirects=False, trust_env=False
    )
    wire = Wire(httpx.MockTransport(_echo), mounts=None, headers=HEADERS, timeout=TIMEOUT, jars=Jars())
    return client, wire


def _shape(request: httpx.Request) -> tuple[Any, ...]:
    return (request.method, str(request.url), request.headers.raw, request.content, request.extensions)


CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "https://as.example/authorize?x=1", {}),
    ("GET", "https://as.example/login", {"headers": {"Accept": "text/html", "user-agent": "other"}}),
    ("POST", "https://as.example/token", {"data": {"grant_type": "code", "code": "abc"}}),
    ("POST", "https://rs.example/mcp", {"json": {"jsonrpc": "2.0"}, "headers": {"Authorization": "Bearer t"}}),
    ("PUT", "https://rs.example/v1/x", {"content": b"raw", "params": {"a": "b"}}),
    ("DELETE", "https://rs.example/v1/x", {"timeout": 1.5}),
    ("POST", "https://rs.example/empty", {"headers": {"Cookie": "z=9"}}),
    ("GET", "https://user:pa%20ss@rs.example/basic", {}),
]


@pytest.mark.parametrize(("method", "url", "kwargs"), CASES)
def test_the_wire_builds_the_request_httpx_client_builds(method: str, url: str, kwargs: dict[str, Any]) -> None:
    client, wire = _pair()
    for cookies in (False, True):  # with an empty jar, and one that holds a cookie for the host
        if cookies:
            client.cookies.set("s", "1", domain=httpx.URL(url).host)
            wire.cookies.set("s", "1", domain=httpx.URL(url).host)
        expected = client.build_request(method, url, **kwargs)
        if expected.url.userinfo:  # httpx.Client adds them in its authentication layer, when it sends
            expected = next(httpx.BasicAuth(expected.url.username, expected.url.password).sync_auth_flow(expected))
        assert _shape(wire.build_request(method, httpx.URL(url), **kwargs)) == _shape(expected)


def test_headers_merged_once_build_what_httpx_client_builds_every_time() -> None:
    """The base headers with a caller's over them are made once per dict of headers and shared: a Cookie the jar adds
    goes on a copy (never onto the next request elsewhere), and headers that are no plain dict are merged each time."""
    client, wire = _pair()
    client.cookies.set("s", "1", domain="as.example")
    wire.cookies.set("s", "1", domain="as.example")
    given: list[Any] = [
        {"Authorization": "Bearer t", "Accept": "application/json"},
        {"accept": "text/html"},
        httpx.Headers([("X-Twice", "a"), ("X-Twice", "b")]),
        httpx.Headers([("X-Twice", "a, b")]),
        {"X-List": ["a"]},  # no key: merged each time (httpx refuses the value, both ways)
    ]
    for _ in range(2):
        for headers in given:
            for url in ("https://as.example/login", "https://rs.example/mcp", "https://as.example/next"):
                try:
                    expected = _shape(client.build_request("GET", url, headers=headers))
                except TypeError:
                    with pytest.raises(TypeError):
                        wire.build_request("GET", httpx.URL(url), headers=headers)
                    continue
                assert _shape(wire.build_request("GET", httpx.URL(url), headers=headers)) == expected


def test_answers_carry_their_request_and_teach_the_jar() -> None:
    wire = _pair()[1]
    request = wire.build_request("GET", httpx.URL("https://h.example/a"))
    response = wire.send(request)
    assert response.request is request and response.json() == {"cookie": None}
    assert wire.send(wire.build_request("GET", httpx.URL("https://h.example/b"))).json() == {"cookie": "s=1"}
    backend = Wire(
        httpx.MockTransport(_echo), mounts=None, headers=HEADERS, timeout=TIMEOUT, jars=Jars(keep_cookies=False)
    )
    backend.send(backend.build_request("GET", httpx.URL("https://h.example/a")))
    assert not backend.cookies and backend.send(
        backend.build_request("GET", httpx.URL("https://h.example/b"))
    ).json() == {"cookie": None}
    wire.close()
    with pytest.raises(RuntimeError):
        wire.send(request)


MOUNTS = [
    "all://",
    "http://",
    "https://",
    "all://localhost",
    "all://127.0.0.1",
    "all://[::1]",
    "all://*.corp.example",
    "all://*internal.example",
    "https://exact.example",
    "all://exact.example:8443",
    "http://*",
]
URLS = [
    "http://a.example/",
    "https://a.example/",
    "https://localhost:9/",
    "http://127.0.0.1/",
    "https://[::1]:4/",
    "https://x.corp.example/",
    "https://corp.example/",
    "https://internal.example/",
    "https://y.internal.example/",
    "https://exact.example/",
    "http://exact.example/",
    "https://exact.example:8443/",
    "http://exact.example:8443/",
]


@pytest.mark.parametrize("patterns", [MOUNTS, MOUNTS[1:], MOUNTS[3:], list(reversed(MOUNTS[1:])), MOUNTS[5:9]])
def test_the_wire_routes_as_httpx_client_routes_its_mounts(patterns: list[str]) -> None:
    default = httpx.MockTransport(_echo)
    mounts: dict[str, httpx.BaseTransport | None] = {p: httpx.MockTransport(_echo) for p in patterns}
    mounts[patterns[-1]] = None  # a mount without a transport: the client's own
    client = httpx.Client(transport=default, mounts=mounts, trust_env=False)
    wire = Wire(default, mounts=mounts, headers={}, timeout=TIMEOUT, jars=Jars())
    for url in URLS:
        parsed = httpx.URL(url)
        assert wire.transport_for(parsed) is client._transport_for_url(parsed), url  # httpx's own choice
        assert wire.transport_for(parsed) is client._transport_for_url(parsed), url  # remembered, the same


def test_the_async_wire_sends_through_its_transport() -> None:
    async def echo(request: httpx.Request) -> httpx.Response:
        return _echo(request)

    async def scenario() -> list[Any]:
        wire = AsyncWire(
            httpx.MockTransport(echo), mounts=None, headers=HEADERS, timeout=TIMEOUT, jars=Jars(lanes=False)
        )
        seen = []
        for path in ("/a", "/b"):
            request = wire.build_request("GET", httpx.URL(f"https://h.example{path}"))
            response = await wire.send(request)
            await response.aread()
            seen.append((response.request is request, response.json()))
        await wire.aclose()
        return seen

    assert asyncio.run(scenario()) == [(True, {"cookie": None}), (True, {"cookie": "s=1"})]
