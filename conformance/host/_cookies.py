"""The host's cookie jars: the user's browser keeps its cookies (one jar per case run at once), the host's backend
keeps none; httpx's own cookie behaviour otherwise, on its public names only (the methods of ``httpx.Cookies``). An
answer without ``Set-Cookie``/``Set-Cookie2`` is not handed to the jar (it would learn nothing from it); which
cookies go where is decided by ``http.cookiejar``'s policy.
"""

from __future__ import annotations

import copy
import email.message
import urllib.request
from typing import Any

import httpx

from conformance.core import _context


class _Answer:
    """An answer as ``http.cookiejar`` reads one: its header lines (``info()``)."""

    def __init__(self, info: email.message.Message) -> None:
        self._info = info

    def info(self) -> email.message.Message:
        return self._info


class LeanCookies(httpx.Cookies):
    """httpx's jar, which reads an answer only when it sets a cookie; ``http.cookiejar`` is handed only what its
    policy reads (the request's URL, the answer's ``Set-Cookie`` lines), not copies of whole requests and answers."""

    learns = True  # False: a jar that never learns a cookie (the caller need not hand it any answer)

    def header_for(self, url: httpx.URL) -> str | None:
        """The ``Cookie`` header ``http.cookiejar`` adds to a request for ``url`` (as ``set_cookie_header`` adds it to
        an httpx request that has none), or None: no cookie of the jar goes there."""
        probe = urllib.request.Request(str(url))
        self.jar.add_cookie_header(probe)
        return probe.get_header("Cookie")

    def extract_cookies(self, response: httpx.Response) -> None:
        """What ``httpx.Cookies.extract_cookies`` learns from an answer: ``http.cookiejar`` reads its ``Set-Cookie`` and
        ``Set-Cookie2`` headers and, of its request, the URL (the request's other headers and the answer's other
        lines are no part of its policy, and are not copied for it)."""
        headers = response.headers
        cookies, cookies2 = headers.get_list("set-cookie"), headers.get_list("set-cookie2")
        if not cookies and not cookies2:
            return
        info = email.message.Message()
        for value in cookies:
            info["Set-Cookie"] = value  # (an append, as in httpx's compatibility answer)
        for value in cookies2:
            info["Set-Cookie2"] = value
        self.jar.extract_cookies(_Answer(info), urllib.request.Request(str(response.request.url)))  # type: ignore[arg-type]


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
