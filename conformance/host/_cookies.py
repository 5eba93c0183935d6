"""HostHTTP's httpx client: the user's browser keeps its cookies (one jar per case run at once), the host's backend
keeps none; httpx's own cookie behaviour otherwise, on its public names only (its ``cookies`` property, the methods
of ``httpx.Cookies``). An answer without ``Set-Cookie``/``Set-Cookie2`` is not handed to the jar (it would learn
nothing from it); which cookies go where is decided by ``http.cookiejar``'s policy.
"""

from __future__ import annotations

import copy
from typing import Any

import httpx

from conformance.core import _context


class LeanCookies(httpx.Cookies):
    """httpx's jar, which reads an answer only when it sets a cookie."""

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


class NoCookies(LeanCookies):
    """The jar of a client that keeps no cookies (the host's backend): nothing learnt, nothing to add to a request.
    A ``Cookie`` header the caller sets itself is still sent."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def __bool__(self) -> bool:
        return False  # httpx merges no jar of this client into a request


class CookieClient(httpx.Client):
    """``httpx.Client`` whose jar is a :class:`LeanCookies`; ``keep_cookies=False``: a :class:`NoCookies` jar (the
    host's backend, which never holds the user's browser cookies).

    A jar that keeps cookies is the user's browser: cases run at once (``conformance.host.fanout``) are separate
    browsers, each case's jar a copy of this one when it first needs it (a case's login does not log another out),
    sharing the client's connections."""

    def __init__(self, *, cookies: Any = None, keep_cookies: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._jar_type: type[LeanCookies] = LeanCookies if keep_cookies else NoCookies
        self._lean = self._jar_type(cookies)

    @property
    def cookies(self) -> httpx.Cookies:
        return self._jar()

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._lean = self._jar_type(cookies)

    def _jar(self) -> LeanCookies:
        if self._jar_type is NoCookies:
            return self._lean
        own = _context.lane_state()
        if own is None:
            return self._lean
        jar = own.get(id(self))
        if jar is None:
            jar = own[id(self)] = self._jar_type()
            for cookie in self._lean.jar:
                jar.jar.set_cookie(copy.copy(cookie))
        return jar
