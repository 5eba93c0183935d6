"""The host's cookie jars: the user's browser keeps its cookies (one jar per case run at once), the host's backend
keeps none; httpx's own cookie behaviour otherwise, on its public names only (the methods of ``httpx.Cookies``). An
answer without ``Set-Cookie``/``Set-Cookie2`` is not handed to the jar (it would learn nothing from it); which
cookies go where is decided by ``http.cookiejar``'s policy.
"""

from __future__ import annotations

import copy
import http.cookiejar
import itertools
import math
import time
import urllib.request
from typing import Any

import httpx

from conformance.core import _context


class _CountingJar(http.cookiejar.CookieJar):
    """``http.cookiejar.CookieJar`` that numbers its states: every change (a cookie set, cleared or expired) gives it a
    new ``version``, never given before."""

    def __init__(self) -> None:
        super().__init__()
        self.version = next(_VERSIONS)

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        super().set_cookie(cookie)
        self.version = next(_VERSIONS)

    def clear(self, domain: str | None = None, path: str | None = None, name: str | None = None) -> None:
        super().clear(domain, path, name)
        self.version = next(_VERSIONS)


_VERSIONS = itertools.count()
_SENT_MEMO = 256  # (jar state, URL) pairs remembered per jar


class LeanCookies(httpx.Cookies):
    """httpx's jar, which reads an answer only when it sets a cookie, and remembers the ``Cookie`` header it chose
    for a URL until it changes or one of its cookies expires (a login sends many requests to the same pages)."""

    learns = True  # False: a jar that never learns a cookie (the caller need not hand it any answer)

    def __init__(self, cookies: Any = None) -> None:
        super().__init__()
        self.jar = _CountingJar()
        if cookies is not None:
            self.update(cookies)
        self._sent: dict[tuple[int, tuple[Any, ...]], tuple[str | None, float]] = {}

    def header_for(self, url: httpx.URL) -> str | None:
        """The ``Cookie`` header ``http.cookiejar`` adds to a request for ``url`` (as ``set_cookie_header`` adds it to
        an httpx request that has none), or None: no cookie of the jar goes there."""
        jar = self.jar
        version = getattr(jar, "version", None)  # (a jar handed over from elsewhere is asked every time)
        key = (version or 0, (url.scheme, url.host, url.port, url.raw_path))
        found = self._sent.get(key) if version is not None else None
        if found is not None and int(time.time()) < found[1]:  # http.cookiejar's clock and test (Cookie.is_expired)
            return found[0]
        probe = urllib.request.Request(str(url))
        jar.add_cookie_header(probe)
        value = probe.get_header("Cookie")
        if version is not None:
            expires = min((c.expires for c in jar if c.expires is not None), default=math.inf)
            if len(self._sent) >= _SENT_MEMO:
                self._sent.clear()
            self._sent[key] = (value, expires)
        return value

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


class NoCookies(LeanCookies):
    """The jar of a client that keeps no cookies (the host's backend): nothing learnt, nothing to add to a request.
    A ``Cookie`` header the caller sets itself is still sent."""

    learns = False

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def __bool__(self) -> bool:
        return False  # no jar of this client is merged into a request


class Jars:
    """The jar of a client: a :class:`LeanCookies`, or with ``keep_cookies=False`` a :class:`NoCookies` (the host's
    backend, which never holds the user's browser cookies).

    A jar that keeps cookies is the user's browser: cases run at once (``conformance.host.fanout``) are separate
    browsers, each case's jar a copy of this one when it first needs it (a case's login does not log another out);
    ``lanes=False``: one jar whatever runs (a client of its own, such as the async one)."""

    def __init__(self, *, keep_cookies: bool = True, lanes: bool = True, cookies: Any = None) -> None:
        self._type: type[LeanCookies] = LeanCookies if keep_cookies else NoCookies
        self._lanes = lanes and keep_cookies
        self._shared = self._type(cookies)

    def replace(self, cookies: Any) -> None:
        self._shared = self._type(cookies)

    def jar(self) -> LeanCookies:
        """This case's jar (the client's own outside a case run at once)."""
        if not self._lanes:
            return self._shared
        own = _context.lane_state()
        if own is None:
            return self._shared
        jar = own.get(id(self))
        if jar is None:
            jar = own[id(self)] = self._type()
            for cookie in self._shared.jar:
                jar.jar.set_cookie(copy.copy(cookie))
        return jar
