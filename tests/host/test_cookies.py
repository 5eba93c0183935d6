"""HostHTTP's cookie jar (conformance.host._cookies, sent and learnt by conformance.host._wire): httpx's behaviour, a
jar per browser and none for the backend."""

from __future__ import annotations

import time

import httpx
import pytest

from conformance.host._cookies import Jars, LeanCookies
from conformance.host._wire import Wire
from conformance.host.http import HostHTTP


class _WireClient:
    """The host's wire with a browser's jar, as the sessions below drive an ``httpx.Client``."""

    def __init__(self) -> None:
        self.wire = Wire(httpx.MockTransport(_server), mounts=None, headers={}, timeout=httpx.Timeout(5), jars=Jars())

    @property
    def cookies(self) -> LeanCookies:
        return self.wire.cookies

    def get(
        self, url: str, headers: dict[str, str] | None = None, cookies: dict[str, str] | None = None
    ) -> httpx.Response:
        if cookies:  # per-request cookies: httpx's own merge, into a request the host never sends
            self.wire.cookies.update(cookies)
        try:
            return self.wire.send(self.wire.build_request("GET", httpx.URL(url), headers=headers))
        finally:
            if cookies:
                for name in cookies:
                    self.wire.cookies.delete(name)


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


def _session(client: httpx.Client | _WireClient) -> list[object]:
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
def test_the_client_sends_what_httpx_sends() -> None:
    expected = _session(httpx.Client(transport=httpx.MockTransport(_server)))
    assert expected[2] == {"cookie": "a=1"} and expected[3] == {"cookie": "b=2; a=1"}  # the scenario means something
    assert _session(_WireClient()) == expected


def _later_session(client: httpx.Client | _WireClient, monkeypatch: pytest.MonkeyPatch) -> list[object]:
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


def test_the_jar_sends_what_httpx_sends_over_https_and_time(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _later_session(httpx.Client(transport=httpx.MockTransport(_server)), monkeypatch)
    assert expected[1] == {"cookie": "e=5; s=6"} and expected[3] == {"cookie": "e=5"}  # Secure only over HTTPS
    assert expected[-1] == {"cookie": "s=6; a=1"}  # e= expired
    assert _later_session(_WireClient(), monkeypatch) == expected


def test_host_http_keeps_a_login_session_in_the_browsers_jar_only() -> None:
    with HostHTTP(transport=httpx.MockTransport(_server)) as http:
        browser = http.browser
        assert browser._client.cookies.learns and not http._client.cookies.learns
        assert browser.browser is browser
        browser.get("https://h/set")
        assert browser.get("https://h/a").json() == {"cookie": "a=1"}
        http.get("https://h/set")
        assert http.get("https://h/a").json() == {"cookie": None}  # the backend keeps none, learns none
        assert http.get("https://h/a", headers={"Cookie": "z=9"}).json() == {"cookie": "z=9"}  # its own header
        http.clear_cookies()
        assert browser.get("https://h/a").json() == {"cookie": None}


def test_redirects_keep_their_cookies_followed_or_not() -> None:
    client = _WireClient()
    assert client.get("http://h/redirect").status_code == 302
    assert client.get("http://h/a").json() == {"cookie": "r=3"}
    with HostHTTP(transport=httpx.MockTransport(_server)) as http:
        followed = http.browser.get("https://h/redirect", follow_redirects=True)
        assert followed.json() == {"cookie": "r=3"}
