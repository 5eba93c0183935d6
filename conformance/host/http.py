"""The host's one HTTP client. Every check talks to targets through it.

It adds what a well-behaved host does and what a reviewer needs: explicit timeouts, TLS verification (with an
optional local CA bundle), a response size cap, the URL guard, the retry policy, and an exchange recorder that
attaches each request and response, redacted at capture, to the running check.
"""

from __future__ import annotations

import functools
import os
import ssl
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx

from conformance import _context
from conformance._exceptions import ResponseTooLarge, TargetUnreachable
from conformance.host._guard import UrlGuard, host_of, is_loopback_host
from conformance.host._pace import Pacer
from conformance.host._redact import SECRET_HEADERS, Redactor, is_secret_name, redactor_for
from conformance.host._retry import DEFAULT_RETRY, NO_RETRY, USER_ACTION_CODES, RetryPolicy, parse_retry_after
from conformance.host.exchange import BODY_EXCERPT_CHARS, RESPONSE_EXTENSION, now_stamp, record_exchange
from conformance.targets import TIMEOUTS

MAX_REDIRECTS = 10
USER_AGENT = "conformance-host/0.1"
_UNSET: Any = object()


def ssl_context(
    ca_bundle: Path | None = None, *, verify: bool = True, client_cert: tuple[str, str] | None = None
) -> ssl.SSLContext:
    """System trust plus the optional CA bundle (the embedded stack's local CA) and client certificate.

    One context per trust setting, shared by every client of the run: building one parses the system trust store
    (about 10 ms of CPU each, over a second per auth+profile run when every client built its own). The files'
    modification times are part of the key, so a regenerated CA or certificate gets a fresh context.
    Shared: callers never mutate the result (load a client certificate by passing ``client_cert``).
    """
    stamps = tuple(_stamp(f) for f in (ca_bundle, *(client_cert or ())))
    return _build_context(ca_bundle, verify, client_cert, stamps)


def _stamp(path: str | Path | None) -> tuple[int, int] | None:
    try:
        info = os.stat(path) if path is not None else None
    except OSError:
        return None  # loading it fails below, as it did before
    return (info.st_mtime_ns, info.st_size) if info is not None else None


@functools.lru_cache(maxsize=32)
def _build_context(
    ca_bundle: Path | None, verify: bool, client_cert: tuple[str, str] | None, stamps: tuple[Any, ...]
) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_bundle is not None:
        context.load_verify_locations(cafile=str(ca_bundle))
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if client_cert is not None:
        context.load_cert_chain(*client_cert)
    return context


class HostHTTP:
    """Synchronous host client (httpx). Responses come back fully read (up to the size cap)."""

    def __init__(
        self,
        *,
        connect_timeout: float = TIMEOUTS.connect,
        read_timeout: float = TIMEOUTS.read,
        total_timeout: float = TIMEOUTS.total,
        max_response_bytes: int = 16 * 1024 * 1024,
        ca_bundle: Path | None = None,
        guard: UrlGuard | None = None,
        redactor: Redactor | None = None,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        transport: httpx.BaseTransport | None = None,
        sleep: Any = time.sleep,
        client_cert: tuple[str, str] | None = None,
        pacer: Pacer | None = None,
    ) -> None:
        self.timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        )
        self.total_timeout = total_timeout
        self.max_response_bytes = max_response_bytes
        self.ca_bundle = ca_bundle
        self.guard = guard or UrlGuard()
        self.redactor = redactor or Redactor()
        self.retry = retry
        self.client_cert = client_cert
        self.pacer = pacer  # the run's pace (rate-limit budgets, throttle waits); None: answers as they come
        self._sleep = sleep
        context = ssl_context(ca_bundle, client_cert=client_cert)
        mounts: dict[str, httpx.BaseTransport | None] = {}
        if transport is None and self.guard.allow_insecure_loopback:
            # Self-signed TLS is tolerated on loopback only; everything else is verified.
            insecure = httpx.HTTPTransport(verify=ssl_context(ca_bundle, verify=False))
            for host in ("127.0.0.1", "localhost", "[::1]"):
                mounts[f"all://{host}"] = insecure
        self._client = httpx.Client(
            timeout=self.timeout,
            verify=context,
            transport=transport,
            mounts=mounts or None,
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
        )

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> HostHTTP:
        trusted = {host_of(t.base_url) for t in settings.targets().values()}
        guard = UrlGuard(
            allow_insecure_loopback=bool(settings.get("allow_insecure_loopback")),
            allow_private_network=bool(settings.get("allow_private_network")),
            trusted_hosts=trusted,
        )
        kwargs: dict[str, Any] = {
            "connect_timeout": settings.get("connect_timeout", TIMEOUTS.connect),
            "read_timeout": settings.get("read_timeout", TIMEOUTS.read),
            "total_timeout": settings.get("total_timeout", TIMEOUTS.total),
            "max_response_bytes": settings.get("max_response_bytes", 16 * 1024 * 1024),
            "ca_bundle": settings.get("ca_bundle"),
            "guard": guard,
            "redactor": redactor_for(settings),
            "pacer": Pacer(float(settings.get("max_throttle_wait", 600.0))),
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    def close(self) -> None:
        self._client.close()

    def clear_cookies(self) -> None:
        """Forget the user-agent session (cookies the login pages set), as a fresh browser profile would."""
        self._client.cookies.clear()

    def __enter__(self) -> HostHTTP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ------------------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        params: Any = None,
        json: Any = _UNSET,
        data: Any = None,
        content: bytes | str | None = None,
        retry: RetryPolicy | None = _UNSET,
        follow_redirects: bool = False,
        metadata_driven: bool = False,
        timeout: float | None = None,
        pace: bool = True,
    ) -> httpx.Response:
        """Send one logical request (with retries and guarded redirects); return the final response.

        ``metadata_driven`` marks a URL taken from a target's answer (the guard then refuses internal addresses).
        ``pace=False`` spends the target's request budget to the last request (a rate-limit check's own window).
        Raises :class:`TargetUnreachable`, :class:`ResponseTooLarge` or :class:`UrlRefused` (all TargetError), and
        :class:`Throttled` when a check of a rule other than RL-* cannot get past a throttled answer (see _pace).
        """
        policy = self.retry if retry is _UNSET else retry
        started = time.monotonic()
        attempt = 0
        hops = 0
        waited = 0.0  # counted apart from the clock so that an injected sleep still respects the bounds
        throttled = 0
        while True:
            self.guard.check(url, metadata_driven=metadata_driven or hops > 0)
            kwargs: dict[str, Any] = {"headers": headers, "params": params, "data": data, "content": content}
            if json is not _UNSET:
                kwargs["json"] = json
            if timeout is not None:
                kwargs["timeout"] = timeout
            if self.pacer is not None:
                key = self.pacer.key(url, headers)
                paused = time.monotonic()
                if pace:
                    self.pacer.before(key)
                started += time.monotonic() - paused  # waiting for a window is not the request's time
                response = self._send(method, url, kwargs, started)
                self.pacer.observe(key, response)
                what = f"{method} {self.redactor.url(url)}"
                throttle_wait = self.pacer.retry_delay(response, throttled, what)
                if throttle_wait is not None:
                    self._note(f"throttled ({response.status_code}): retrying after {throttle_wait:.2f}s")
                    self.pacer.wait(throttle_wait, f"{response.status_code}, Retry-After followed")
                    started += throttle_wait
                    throttled += 1
                    continue
            else:
                response = self._send(method, url, kwargs, started)
            if follow_redirects and response.is_redirect and hops < MAX_REDIRECTS:
                url, method, headers, drop_body = redirect_hop(response, method, headers)
                params = None  # the Location is the whole next URL (the caller's parameters are in it, or not)
                hops += 1
                if drop_body:
                    json, data, content = _UNSET, None, None
                continue
            if policy is None:
                return response
            spent = max(time.monotonic() - started, waited)
            wait = policy.delay(response, attempt, spent)
            if wait is None or spent + wait > self.total_timeout:
                return response
            self._note(f"retrying after {wait:.2f}s (status {response.status_code}, attempt {attempt + 1})")
            self._sleep(wait)
            waited += wait
            attempt += 1

    def _send(self, method: str, url: str, kwargs: dict[str, Any], started: float) -> httpx.Response:
        request = self._client.build_request(method, url, **{k: v for k, v in kwargs.items() if k != "timeout"})
        if "timeout" in kwargs:
            request.extensions["timeout"] = httpx.Timeout(kwargs["timeout"]).as_dict()
        t0 = time.monotonic()
        stamp = now_stamp()
        try:
            response = self._client.send(request, stream=True)
            try:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body.extend(chunk)
                    if len(body) > self.max_response_bytes:
                        raise ResponseTooLarge(
                            f"{method} {self.redactor.url(url)}: response body exceeds {self.max_response_bytes} bytes"
                        )
                    if time.monotonic() - started > self.total_timeout:
                        raise TargetUnreachable(
                            f"{method} {self.redactor.url(url)}: no complete response within {self.total_timeout:.0f}s"
                        )
            finally:
                response.close()
        except (ResponseTooLarge, TargetUnreachable) as exc:
            exc.exchange = record_httpx_exchange(
                self.redactor, request, None, None, sent_at=t0, stamp=stamp, error=str(exc)
            )
            raise
        except httpx.HTTPError as exc:
            message = f"{method} {self.redactor.url(url)}: {describe_http_error(exc)}"
            recorded = record_httpx_exchange(self.redactor, request, None, None, sent_at=t0, stamp=stamp, error=message)
            raise TargetUnreachable(message, exchange=recorded) from None
        decoded = bytes(body)
        # The body is already decoded; drop Content-Encoding so httpx does not decode it twice.
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
        final = httpx.Response(
            status_code=response.status_code,
            headers=headers,
            content=decoded,
            request=request,
            extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1")},
        )
        recorded = record_httpx_exchange(self.redactor, request, response, decoded, sent_at=t0, stamp=stamp)
        if recorded is not None:  # the check's evidence for this answer (exchange_of), e.g. for InvalidResponse
            final.extensions[RESPONSE_EXTENSION] = recorded
        return final

    # -- evidence ------------------------------------------------------------------------------------------

    def _note(self, text: str) -> None:
        record = _context.current()
        if record is not None:
            record.notes.append(text)

    # -- shortcuts -----------------------------------------------------------------------------------------

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", url, **kwargs)

    def httpx_client_kwargs(self) -> dict[str, Any]:
        """Library-neutral settings for another HTTP client (e.g. the MCP SDK's) that must behave like this one:
        ``timeout`` (dict of seconds), ``verify`` (the shared ssl.SSLContext, without the client certificate: for one,
        call ``ssl_context(ca_bundle, client_cert=...)``), ``insecure_loopback`` (bool) and
        ``client_cert`` ((certfile, keyfile) or None)."""
        return {
            "timeout": self.timeout.as_dict(),
            "verify": ssl_context(self.ca_bundle),
            "insecure_loopback": self.guard.allow_insecure_loopback,
            "client_cert": self.client_cert,
        }


def record_httpx_exchange(
    redactor: Redactor,
    request: httpx.Request,
    response: httpx.Response | None,
    body: bytes | None,
    *,
    sent_at: float,
    stamp: str,
    error: str | None = None,
) -> dict[str, Any] | None:
    """An httpx request and its (streamed, already read) answer into the running check, for both HTTP clients.
    ``sent_at``: the monotonic clock when the request went out; ``stamp``: the wall-clock time then."""
    return record_exchange(
        redactor,
        method=request.method,
        url=str(request.url),
        request_headers=request.headers,
        request_body=request.content if isinstance(request.stream, httpx.ByteStream) else None,
        status=response.status_code if response is not None else None,
        response_headers=response.headers if response is not None else None,
        response_body=body,
        elapsed_s=time.monotonic() - sent_at,
        started_at=stamp,
        error=error,
    )


def describe_http_error(exc: httpx.HTTPError) -> str:
    """A transport failure in words a vendor can act on (both HTTP clients)."""
    if isinstance(exc, httpx.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout | httpx.PoolTimeout):
        return "timed out waiting for the response"
    if isinstance(exc, httpx.ConnectError):
        text = str(exc) or "connection failed"
        if "CERTIFICATE_VERIFY_FAILED" in text:
            return f"TLS certificate not trusted ({text}); pass --ca-bundle for a private CA"
        return f"could not connect ({text})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


__all__ = [
    "BODY_EXCERPT_CHARS",
    "DEFAULT_RETRY",
    "NO_RETRY",
    "USER_ACTION_CODES",
    "HostHTTP",
    "RetryPolicy",
    "UrlGuard",
    "host_of",
    "is_loopback_host",
    "parse_retry_after",
    "record_exchange",
    "ssl_context",
]


def _origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return ("", url, None)
    return parsed.scheme, parsed.host, parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)


def _without_credentials(headers: Mapping[str, str] | None) -> dict[str, str] | None:
    """The caller's headers minus those that carry a credential (Authorization, Cookie, API keys...)."""
    if headers is None:
        return None
    return {k: v for k, v in headers.items() if k.lower() not in SECRET_HEADERS and not is_secret_name(k)}


def redirect_hop(
    response: httpx.Response, method: str, headers: Mapping[str, str] | None
) -> tuple[str, str, Mapping[str, str] | None, bool]:
    """Where a followed redirect goes, for HostHTTP and its async twin: (url, method, headers, drop the body).

    Another origin gets no credentials (as httpx does); 301/302/303 turn the request into a bodiless GET, but HEAD.
    """
    url = urljoin(str(response.url), response.headers.get("location", ""))
    if _origin(url) != _origin(str(response.url)):
        headers = _without_credentials(headers)
    to_get = response.status_code in (301, 302, 303) and method.upper() != "HEAD"
    return url, "GET" if to_get else method, headers, to_get
