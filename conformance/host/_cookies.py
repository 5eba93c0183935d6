"""HostHTTP's httpx client: the user's browser keeps its cookies (one jar per case run at once), the host's backend
keeps none; with httpx's own cookie behaviour otherwise.

``CookieClient`` overrides only public names of httpx (its ``cookies`` property, ``Cookies``' methods). Shortcut
``cookies`` (``conformance.core._shortcuts.lean_client``) makes of it a client that also skips httpx's per-request
jar work: httpx copies the client's jar into each request (twice: once to merge, once in ``Request``), then builds
urllib stand-ins of the request to compute its ``Cookie`` header, and of the request and response to read
``Set-Cookie`` from every answer. The jar's header is then computed from the jar itself (no copy), not at all when
the jar is empty, and an answer without ``Set-Cookie``/``Set-Cookie2`` is not handed to the jar (it would learn
nothing from it). Which cookies go where is still decided by ``http.cookiejar``'s policy, unchanged.
"""

from __future__ import annotations

import copy
import urllib.request
from typing import Any

import httpx

from conformance.core import _context
from conformance.core._shortcuts import enabled, lean_client


class LeanCookies(httpx.Cookies):
    """httpx's jar, skipping the stdlib jar's passes that have nothing to do."""

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)

    def set_cookie_header(self, request: httpx.Request) -> None:
        if self:  # an empty jar adds no header
            self.jar.add_cookie_header(_JarRequest(request))


class NoCookies(LeanCookies):
    """The jar of a client that keeps no cookies (the host's backend): nothing learnt, no ``Cookie`` header added.
    A ``Cookie`` header the caller sets itself is still sent."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set_cookie_header(self, request: httpx.Request) -> None:
        return None

    def __bool__(self) -> bool:
        return False  # nothing to copy into a request, whatever it was given


class _JarRequest(urllib.request.Request):
    """The request as ``http.cookiejar`` reads it (URL, scheme, host, the Host and Cookie headers), answered from the
    httpx request's own headers: httpx's stand-in copies every header into a dict first (each copied header a
    lookup that decodes all of them), about a third of the jar's time per request."""

    def __init__(self, request: httpx.Request) -> None:
        self._request = request  # (before: urllib's __init__ may ask for the Host header)
        super().__init__(str(request.url), method=request.method)

    def has_header(self, header_name: str) -> bool:
        return header_name in self._request.headers or super().has_header(header_name)

    def get_header(self, header_name: str, default: Any = None) -> Any:
        return self._request.headers.get(header_name, super().get_header(header_name, default))

    def add_unredirected_header(self, key: str, val: str) -> None:
        super().add_unredirected_header(key, val)
        self._request.headers[key] = val


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


def cookie_client(*, keep_cookies: bool, **kwargs: Any) -> CookieClient:
    """HostHTTP's client: the lean one (shortcut ``cookies``) when it can be had, else :class:`CookieClient`."""
    lean = lean_client(CookieClient) if enabled("cookies") else None
    return (lean or CookieClient)(keep_cookies=keep_cookies, **kwargs)
