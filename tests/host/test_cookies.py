"""HostHTTP's cookie jar (conformance.host._cookies, made lean by shortcut ``cookies`` of conformance.core._shortcuts):
httpx's behaviour, without its per-request jar work; and the same behaviour when the shortcut is off or cannot be
taken."""

from __future__ import annotations

import http.cookiejar
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conformance.core import _shortcuts
from conformance.host._cookies import CookieClient as PlainClient
from conformance.host.http import HostHTTP

CookieClient: Any = _shortcuts.lean_client(PlainClient)


def _server(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/set":
        return httpx.Response(200, headers=[("set-cookie", "a=1; Path=/"), ("set-cookie", "b=2; Path=/x")])
    if request.url.path == "/expire":
        return httpx.Response(200, headers=[("set-cookie", "a=; Path=/; Max-Age=0")])
    if request.url.path == "/later":  # a cookie that expires in 100 s, one for HTTPS only
        return httpx.Response(200, headers=[("set-cookie", "e=5; Path=/; Max-Age=100"), ("set-cookie", "s=6; Secure")])
    if request.url.path == "/redirect":
        return httpx.Response(302, headers=[("location", "/a"), ("set-cookie", "r=3; Path=/")])
    return httpx.Response(200, json={"cookie": request.headers.get("cookie")})


def _session(client: httpx.Client) -> list[object]:
    """What a server sees over a session: cookies set, scoped by path and host, an explicit header, expiry."""
    seen: list[object] = [client.get("http://h/a").json()]
    seen.append(client.get("http://h/set").status_code)
    seen += [client.get(url).json() for url in ("http://h/a", "http://h/x/y", "http://other/a")]
    seen.append(client.get("http://h/a", headers={"Cookie": "z=9"}).json())
    seen.append(client.get("http://h/redirect").status_code)
    seen.append(client.get("http://h/a").json())
    seen.append(client.get("http://h/expire").status_code)
    seen.append(client.get("http://h/a").json())
    seen.append(client.get("http://h/a", cookies={"c": "4"}).json())  # per-request cookies: httpx's own merge
    client.cookies.clear()
    seen.append(client.get("http://h/a").json())
    return seen


@pytest.mark.filterwarnings("ignore:Setting per-request cookies:DeprecationWarning")
def test_the_lean_client_sends_what_httpx_sends() -> None:
    expected = _session(httpx.Client(transport=httpx.MockTransport(_server)))
    assert expected[2] == {"cookie": "a=1"} and expected[3] == {"cookie": "b=2; a=1"}  # the scenario means something
    assert _session(CookieClient(transport=httpx.MockTransport(_server))) == expected


def _later_session(client: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Secure cookies, ports, queries and fragments, an explicit Host header, and the clock past a cookie's expiry."""
    clock = time.time()
    monkeypatch.setattr(time, "time", lambda: clock)
    seen: list[object] = [client.get("https://h/later").status_code]
    for url in ("https://h/a", "https://h/a?q=1", "http://h/a", "https://h/x/y#f", "https://h:444/a", "https://H/a"):
        seen.append(client.get(url).json())
    seen.append(client.get("https://h/a", headers={"Host": "other"}).json())
    seen.append(client.get("https://h/set").status_code)
    seen += [client.get("https://h/a").json(), client.get("https://h/x/z").json()]
    clock += 101  # e= has expired
    seen.append(client.get("https://h/a").json())
    monkeypatch.undo()
    return seen


def test_the_lean_jar_sends_what_httpx_sends_over_https_and_time(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _later_session(httpx.Client(transport=httpx.MockTransport(_server)), monkeypatch)
    assert expected[1] == {"cookie": "e=5; s=6"} and expected[3] == {"cookie": "e=5"}  # Secure only over HTTPS
    assert expected[-1] == {"cookie": "s=6; a=1"}  # e= expired
    assert _later_session(CookieClient(transport=httpx.MockTransport(_server)), monkeypatch) == expected


def test_the_stdlib_jar_runs_only_when_it_has_something_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"extract": 0, "header": 0}
    extract, header = http.cookiejar.CookieJar.extract_cookies, http.cookiejar.CookieJar.add_cookie_header

    def counted_extract(self: http.cookiejar.CookieJar, *args: object) -> None:
        calls["extract"] += 1
        extract(self, *args)  # type: ignore[arg-type]

    def counted_header(self: http.cookiejar.CookieJar, *args: object) -> None:
        calls["header"] += 1
        header(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(http.cookiejar.CookieJar, "extract_cookies", counted_extract)
    monkeypatch.setattr(http.cookiejar.CookieJar, "add_cookie_header", counted_header)
    client = CookieClient(transport=httpx.MockTransport(_server))
    client.get("http://h/a")
    assert calls == {"extract": 0, "header": 0}  # an empty jar and an answer without Set-Cookie
    client.get("http://h/set")
    assert calls == {"extract": 1, "header": 0}
    client.get("http://h/a")
    assert calls == {"extract": 1, "header": 1}  # one pass for the header, on the jar itself


def test_the_lean_client_is_there_for_this_httpx() -> None:
    assert CookieClient is not None and issubclass(CookieClient, PlainClient)


@pytest.fixture(params=["shortcut", "switched off", "httpx without the internals"])
def client_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    """The client HostHTTP gets: the lean one; the plain one (public overrides only) with the kill switch on, and
    when httpx's client lacks a method the lean one overrides (simulated: one more name it would need)."""
    monkeypatch.delenv(_shortcuts.ENV, raising=False)
    if request.param == "switched off":
        monkeypatch.setenv(_shortcuts.ENV, "1")
    if request.param == "httpx without the internals":
        monkeypatch.setattr(_shortcuts, "_CLIENT_INTERNALS", (*_shortcuts._CLIENT_INTERNALS, "_a_renamed_step"))
        _shortcuts.lean_client.cache_clear()
    yield CookieClient if request.param == "shortcut" else PlainClient
    _shortcuts.lean_client.cache_clear()


def test_host_http_keeps_a_login_session_in_the_browsers_jar_only(client_kind: type) -> None:
    with HostHTTP(transport=httpx.MockTransport(_server)) as http:
        browser = http.browser
        assert type(browser._client) is client_kind and type(http._client) is client_kind
        assert browser.browser is browser
        browser.get("https://h/set")
        assert browser.get("https://h/a").json() == {"cookie": "a=1"}
        http.get("https://h/set")
        assert http.get("https://h/a").json() == {"cookie": None}  # the backend keeps none, learns none
        assert http.get("https://h/a", headers={"Cookie": "z=9"}).json() == {"cookie": "z=9"}  # its own header
        http.clear_cookies()
        assert browser.get("https://h/a").json() == {"cookie": None}


def test_redirects_are_still_followed_when_asked() -> None:
    """Not following, the lean client builds no next request; asked to follow, it is httpx's own loop."""
    client = CookieClient(transport=httpx.MockTransport(_server))
    first = client.get("http://h/redirect")
    assert first.status_code == 302 and first.next_request is None
    followed = CookieClient(transport=httpx.MockTransport(_server)).get("http://h/redirect", follow_redirects=True)
    assert followed.json() == {"cookie": "r=3"} and [r.status_code for r in followed.history] == [302]


def test_a_url_string_is_parsed_once_per_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean client keeps each URL string's parsed httpx.URL (immutable) for the next request to it."""
    client = CookieClient(transport=httpx.MockTransport(_server))
    parsed: list[str] = []
    parse = httpx._urls.urlparse  # type: ignore[attr-defined]
    monkeypatch.setattr(httpx._urls, "urlparse", lambda url="", **kw: parsed.append(url) or parse(url, **kw))
    first, again = (client.build_request("GET", "https://h/a?q=1 2") for _ in range(2))
    assert parsed == ["https://h/a?q=1 2"] and again.url == first.url
    assert str(first.url) == str(httpx.Client().build_request("GET", "https://h/a?q=1 2").url)
    assert client.build_request("GET", "https://h/a", params={"p": "1"}).url == "https://h/a?p=1"  # params merged
    assert client.build_request("GET", "https://h/a").url == "https://h/a"  # the cached URL was not changed by it
    client.base_url = httpx.URL("https://b/api/")
    assert client.build_request("GET", "items").url == "https://b/api/items"
    client.base_url = httpx.URL("https://c/v2/")
    assert client.build_request("GET", "items").url == "https://c/v2/items"  # a new base URL: parsed again
