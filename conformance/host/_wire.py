"""The host's HTTP plumbing: requests built and sent through an httpx transport's public ``handle_request``.

``httpx.Client`` wraps every send in layers the host does not use (authentication flows, hooks, redirect handling:
it builds the next request of every 3xx answer even when nothing follows it) and copies its cookie jar twice per
request. The host follows its own redirects (``conformance.host.http.request_steps``), so it keeps of the client
only what it needs, done as the client does it:

- the base headers (httpx's own: ``Accept``, ``Connection``, then the host's ``User-Agent`` and
  ``Accept-Encoding``), the caller's merged over them;
- the timeout, as the request's ``timeout`` extension;
- Basic credentials from a URL's user information;
- the mounts (the environment's proxies, the loopback transports), matched as ``httpx.Client`` matches them
  (:class:`Mount`: the same patterns, the same precedence);
- the cookie jar (``conformance.host._cookies``): its ``Cookie`` header on the way out, ``Set-Cookie`` learnt from
  each answer; a jar of the backend learns nothing.

Answers come back streamed, their ``request`` set; the caller reads and closes them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import httpx

from conformance.host._cookies import Jars, LeanCookies

# The headers httpx.Client sends with every request, in its order, before the host's own.
_HTTPX_BASE = (("Accept", "*/*"), ("Connection", "keep-alive"))

T = TypeVar("T", httpx.BaseTransport, httpx.AsyncBaseTransport)
_MERGED = 512  # sets of merged headers a wire keeps


class Mount:
    """A mount's URL pattern, matched as ``httpx.Client`` matches its mounts: ``all://`` or a scheme, a host (exact,
    ``*.domain`` for its subdomains, ``*domain`` for it and its subdomains), a port."""

    def __init__(self, pattern: str) -> None:
        if pattern and ":" not in pattern:
            raise ValueError(f'a mount is a URL pattern ("{pattern}://"), not {pattern!r}')
        url = httpx.URL(pattern)
        self.pattern = pattern
        self.scheme = "" if url.scheme == "all" else url.scheme
        self.host = "" if url.host == "*" else url.host
        self.port = url.port
        self.host_regex: re.Pattern[str] | None
        if not url.host or url.host == "*":
            self.host_regex = None
        elif url.host.startswith("*."):
            self.host_regex = re.compile(f"^.+\\.{re.escape(url.host[2:])}$")
        elif url.host.startswith("*"):
            self.host_regex = re.compile(f"^(.+\\.)?{re.escape(url.host[1:])}$")
        else:
            self.host_regex = re.compile(f"^{re.escape(url.host)}$")

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.host and self.host_regex is not None and not self.host_regex.match(host):
            return False
        return self.port is None or self.port == port

    @property
    def priority(self) -> tuple[int, int, int]:
        """httpx's order: a pattern with a port first, then the longer host, then the longer scheme."""
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))


class _Plumbing(Generic[T]):
    """What the sync and async wires share: the request built, its transport chosen, the jar."""

    def __init__(
        self,
        transport: T,
        *,
        mounts: Mapping[str, T | None] | None,
        headers: Mapping[str, str],
        timeout: httpx.Timeout,
        jars: Jars,
    ) -> None:
        self._transport: T = transport
        ordered = sorted(((Mount(p), t) for p, t in (mounts or {}).items()), key=lambda item: item[0].priority)
        self._mounts: list[tuple[Mount, T]] = [(m, transport if t is None else t) for m, t in ordered]
        base = httpx.Headers(_HTTPX_BASE)
        base.update(headers)
        self.headers = base
        self._timeout = timeout.as_dict()
        self.jars = jars
        self.closed = False
        self._routes: dict[tuple[str, str, int | None], T] = {}  # (scheme, host, port): its transport
        # The base headers with a caller's over them, per caller's headers (a dict's items in their order): a run
        # sends the same few sets again and again (a check's bearer token, a JSON-RPC call's). Never changed once
        # made (a request copies its headers, a Cookie is added to a copy); dropped whole when full.
        self._merged: dict[tuple[tuple[str, str], ...], httpx.Headers] = {}

    @property
    def cookies(self) -> LeanCookies:
        """The jar of the running case (a browser's), or the backend's jar that keeps nothing."""
        return self.jars.jar()

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self.jars.replace(cookies)

    def build_request(
        self,
        method: str,
        url: httpx.URL,
        *,
        headers: Mapping[str, str] | None = None,
        params: Any = None,
        timeout: float | httpx.Timeout | None = None,
        **body: Any,
    ) -> httpx.Request:
        """The request ``httpx.Client.build_request`` builds (no base URL, no per-request cookies): the base headers
        with the caller's over them, the jar's cookies, the timeout (the client's, or this one)."""
        if params is not None:
            url = httpx.URL(url, params=params)
        merged = self.merged_with(headers) if headers else self.headers
        jar = self.jars.jar()
        if jar and "cookie" not in merged:  # (a Cookie header the caller sets is sent as it is)
            cookie = jar.header_for(url)
            if cookie is not None:
                merged = httpx.Headers(merged)  # (the merged headers are shared: the Cookie goes on a copy)
                merged["Cookie"] = cookie  # as httpx.Cookies.set_cookie_header adds it
        extensions = {"timeout": self._timeout if timeout is None else httpx.Timeout(timeout).as_dict()}
        request = httpx.Request(method, url, headers=merged, extensions=extensions, **body)
        url = request.url
        if url.userinfo and (url.username or url.password):  # httpx.Client makes them Basic credentials
            request = next(httpx.BasicAuth(url.username, url.password).sync_auth_flow(request))
        return request

    def merged_with(self, headers: Mapping[str, str]) -> httpx.Headers:
        """The base headers with ``headers`` over them (``httpx.Headers.update``), made once per dict of headers."""
        key = tuple(headers.items()) if type(headers) is dict else None  # (a multi-dict's items join its values)
        try:
            found = self._merged.get(key) if key is not None else None
        except TypeError:  # a value that is no key (a list): merged each time
            key = found = None
        if found is None:
            found = httpx.Headers(self.headers)
            found.update(headers)
            if key is not None:
                if len(self._merged) >= _MERGED:
                    self._merged.clear()
                self._merged[key] = found
        return found

    def transport_for(self, url: httpx.URL) -> T:
        """The transport of ``url``: the first mount whose pattern matches, else the client's own."""
        key = (url.scheme, url.host, url.port)
        found = self._routes.get(key)
        if found is None:
            found = next((t for mount, t in self._mounts if mount.matches(*key)), self._transport)
            if len(self._routes) < 256:
                self._routes[key] = found
        return found

    def answered(self, request: httpx.Request, response: httpx.Response) -> httpx.Response:
        response.request = request
        jar = self.jars.jar()
        if jar.learns:
            jar.extract_cookies(response)
        return response

    def check_open(self) -> None:
        """Refuse to send once closed, as httpx.Client does."""
        if self.closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")

    def transports(self) -> list[T]:
        """Every transport of the wire, each once (closed with it)."""
        seen = {id(self._transport): self._transport}
        seen.update((id(t), t) for _, t in self._mounts)
        return list(seen.values())


class Wire(_Plumbing[httpx.BaseTransport]):
    """The synchronous wire of HostHTTP."""

    def send(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through its transport; the answer's body is still to be read (then close it)."""
        self.check_open()
        try:
            response = self.transport_for(request.url).handle_request(request)
        except httpx.RequestError as exc:  # as httpx.Client says which request failed
            exc.request = request
            raise
        return self.answered(request, response)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for transport in self.transports():
                transport.close()


class AsyncWire(_Plumbing[httpx.AsyncBaseTransport]):
    """The asynchronous wire of AsyncHostHTTP."""

    async def send(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through its transport; the answer's body is still to be read (then close it)."""
        self.check_open()
        try:
            response = await self.transport_for(request.url).handle_async_request(request)
        except httpx.RequestError as exc:
            exc.request = request
            raise
        return self.answered(request, response)

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            for transport in self.transports():
                await transport.aclose()


@functools.lru_cache(maxsize=1024)
def parsed_url(url: str) -> httpx.URL:
    """``httpx.URL(url)``, parsed once per URL: httpx parses and checks a URL character by character in Python, and a
    run sends to the same URLs again and again (a URL is immutable: each request wraps its own)."""
    return httpx.URL(url)


__all__ = ["AsyncWire", "Mount", "Wire", "parsed_url"]
