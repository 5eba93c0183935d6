"""HostHTTP's httpx client with the same cookie behaviour as httpx's, minus the work that cannot change anything.

httpx runs the stdlib cookie jar on every exchange: it copies the client's jar into each request (twice: once to
merge, once in ``Request``), then builds urllib stand-ins of the request to compute its ``Cookie`` header, and of
the request and response to read ``Set-Cookie`` from every answer. Over a run that was about a tenth of the harness's
own CPU. Here the jar's header is computed from the jar itself (no copy), not at all when the jar is
empty, and an answer without ``Set-Cookie``/``Set-Cookie2`` is not handed to the jar (it would learn nothing from
it). Which cookies go where is still decided by ``http.cookiejar``'s policy, unchanged.
"""

from __future__ import annotations

import copy
import urllib.request
from typing import Any

import httpx

from conformance.core import _context

# The step httpx's redirect loop sends each request with (httpx 0.28); were it renamed, httpx's own loop runs.
_SINGLE_REQUEST = hasattr(httpx.Client, "_send_single_request")


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
    """``httpx.Client`` whose jar is a :class:`LeanCookies`, consulted once per request without being copied, and
    which leaves ``response.next_request`` unset when it does not follow redirects. ``keep_cookies=False``: a
    :class:`NoCookies` jar (the host's backend, which never holds the user's browser cookies).

    Only requests that pass no ``cookies=`` of their own take the short way (HostHTTP never passes any); the others
    get httpx's own merge.

    A jar that keeps cookies is the user's browser: cases run at once (``conformance.host.fanout``) are separate
    browsers, each case's jar a copy of this one when it first needs it (a case's login does not log another out),
    sharing the client's connections."""

    def __init__(self, *, cookies: Any = None, keep_cookies: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._jar_type: type[LeanCookies] = LeanCookies if keep_cookies else NoCookies
        self._lean = self._jar_type(cookies)
        self._urls: dict[str, tuple[httpx.URL, httpx.URL]] = {}  # URL string -> (base URL then, parsed URL)

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

    def _merge_url(self, url: Any) -> httpx.URL:
        # A run requests the same URLs again and again: each string is parsed (validated, percent-encoded) once per
        # base URL. httpx.URL is immutable, so one parsed URL can serve every request to it.
        if type(url) is not str:
            return super()._merge_url(url)
        known = self._urls.get(url)
        if known is not None and known[0] is self._base_url:
            return known[1]
        merged = super()._merge_url(url)
        if len(self._urls) >= 1024:
            self._urls.clear()
        self._urls[url] = (self._base_url, merged)
        return merged

    def _merge_cookies(self, cookies: Any = None) -> Any:
        # None: build_request adds the jar's header itself (httpx would copy the whole jar into every request).
        return None if cookies is None else super()._merge_cookies(cookies)

    def _send_handling_redirects(
        self, request: httpx.Request, follow_redirects: bool, history: list[httpx.Response]
    ) -> httpx.Response:
        if follow_redirects or not _SINGLE_REQUEST:
            return super()._send_handling_redirects(request, follow_redirects, history)
        # Not following: httpx would still build the next request of every redirect (its URL, headers and the jar's
        # cookies) for ``response.next_request``, which HostHTTP never reads (it follows redirects itself, through
        # the guard). The same steps otherwise: hooks, one request, its history.
        for hook in self.event_hooks["request"]:
            hook(request)
        response = self._send_single_request(request)
        try:
            for hook in self.event_hooks["response"]:
                hook(response)
            response.history = list(history)
        except BaseException:
            response.close()
            raise
        return response

    def build_request(self, method: str, url: Any, **kwargs: Any) -> httpx.Request:
        request = super().build_request(method, url, **kwargs)
        if kwargs.get("cookies") is None:
            self._jar().set_cookie_header(request)
        return request
