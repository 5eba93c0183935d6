"""The host's one HTTP client. Every check talks to targets through it.

It adds what a well-behaved host does and what a reviewer needs: explicit timeouts, TLS verification (with an
optional local CA bundle), a response size cap, the URL guard, the retry policy, and an exchange recorder that
attaches each request and response, redacted at capture, to the running check.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
import ssl
import threading
import time
import urllib.request
import zlib
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypedDict, Unpack
from urllib.parse import urljoin

import httpx

from conformance.core import _budget, _context
from conformance.core._exceptions import ResponseTooLarge, TargetError, TargetTooSlow, TargetUnreachable
from conformance.core.targets import TIMEOUTS
from conformance.host._cookies import Jars
from conformance.host._decode import ACCEPT_ENCODING, BoundedBody
from conformance.host._guard import UrlGuard, host_of, is_loopback_host
from conformance.host._pace import Pacer
from conformance.host._redact import SECRET_HEADERS, Redactor, is_secret_name, redactor_for
from conformance.host._retry import DEFAULT_RETRY, NO_RETRY, USER_ACTION_CODES, RetryPolicy, parse_retry_after
from conformance.host._wire import AsyncWire, Wire, parsed_url
from conformance.host.exchange import BODY_EXCERPT_CHARS, RESPONSE_EXTENSION, now_stamp, record_exchange
from conformance.host.fanout import DEFAULT_CONCURRENCY, cases_at_once

MAX_REDIRECTS = 10
USER_AGENT = "conformance-host/0.1"
_UNSET: Any = object()


class RequestOptions(TypedDict, total=False):
    """The options of one logical request: ``HostHTTP.request`` and ``AsyncHostHTTP.request`` take the same."""

    headers: Mapping[str, str] | None
    params: Any
    json: Any  # absent: no JSON body (None sends the JSON null)
    data: Any
    content: bytes | str | None
    retry: RetryPolicy | None  # absent: the client's policy; None: no retry
    follow_redirects: bool  # default False; each hop is checked by the guard, credentials stay on their origin
    metadata_driven: bool  # the URL came from a target's answer: the guard refuses internal addresses
    timeout: float | None  # this request's timeout instead of the client's
    pace: bool  # default True; False spends the target's request budget to the last request (an RL-* window)


class Send(NamedTuple):
    """A step of :func:`request_steps`: send this request (``started``: when the logical request began)."""

    method: str
    url: str
    kwargs: dict[str, Any]
    started: float


class Pause(NamedTuple):
    """A step of :func:`request_steps`: wait this long for a target's rate limit (already counted by the pacer);
    answer None."""

    seconds: float


class _Client(Protocol):
    guard: UrlGuard
    redactor: Redactor
    retry: RetryPolicy | None
    total_timeout: float
    max_response_bytes: int
    timeout: httpx.Timeout


def request_steps(
    client: _Client, method: str, url: str, options: RequestOptions, *, pacer: Pacer | None
) -> Generator[Send | Pause | float | httpx.Response, httpx.Response | None, None]:
    """One logical request as steps, for HostHTTP and its async twin alike (they only do the I/O): it yields a
    :class:`Send` (answer with the response), a float (sleep that long, answer None), a :class:`Pause` (sleep that
    long for the pace, answer None), and last the final response. A caller that stops early (the send raised)
    closes the steps, so that the pacer no longer counts the request in flight.

    Guarded redirects, the retry policy within the total time, and the run's pace (rate-limit budgets and throttle
    waits, when ``pacer`` is given) live here once.
    """
    policy = options.get("retry", client.retry)
    headers, params = options.get("headers"), options.get("params")
    body: dict[str, Any] = {name: options[name] for name in ("json", "data", "content") if name in options}
    started = time.monotonic()
    attempt = hops = throttled = 0
    resent = False
    waited = 0.0  # counted apart from the clock so that an injected sleep still respects the bounds
    while True:
        client.guard.check(url, metadata_driven=options.get("metadata_driven", False) or hops > 0)
        kwargs: dict[str, Any] = {"headers": headers, "params": params, **body}
        if options.get("timeout") is not None:
            kwargs["timeout"] = options["timeout"]
        budget = _budget.seconds_left()
        if budget is not None:  # the check's requests share its time budget: this one gets what is left of it
            if budget <= 0:
                _budget.check(_shown(client, method, url))
            kwargs["timeout"] = _within(kwargs.get("timeout", client.timeout), budget)
        if pacer is not None:
            key = pacer.key(url, headers)
            paused = time.monotonic()
            pause, _ = pacer.reserve(key, pace=options.get("pace", True))  # the one gate every request passes
            if pause > 0:
                yield Pause(pause)
            started += time.monotonic() - paused  # waiting for a window is not the request's time
        try:
            response = yield Send(method, url, kwargs, started)
        except BaseException as exc:  # no answer (the send raised, the caller closed the steps)
            if pacer is not None:
                pacer.abandon(key)
            if resent or not resends(method, exc):
                raise
            resent = True
            note(RESENT.format(method=method))
            continue
        assert response is not None
        if resent:
            response.extensions[RESENT_EXTENSION] = True
        if pacer is not None:
            pacer.observe(key, response)
            shown = functools.partial(_shown, client, method, url)  # redacted only if a message needs it
            throttle_wait = pacer.retry_delay(response, throttled, shown)
            if throttle_wait is not None:
                note(f"throttled ({response.status_code}): retrying after {throttle_wait:.2f}s")
                pacer.count_wait(throttle_wait, f"{response.status_code}, Retry-After followed")
                yield Pause(throttle_wait)
                started += throttle_wait
                throttled += 1
                continue
        if options.get("follow_redirects", False) and response.is_redirect and hops < MAX_REDIRECTS:
            url, method, headers, drop_body = redirect_hop(response, method, headers)
            params = None  # the Location is the whole next URL (the caller's parameters are in it, or not)
            hops += 1
            if drop_body:
                body = {}
            continue
        spent = max(time.monotonic() - started, waited)
        wait = policy.delay(response, attempt, spent) if policy is not None else None
        budget = _budget.seconds_left()
        if wait is None or spent + wait > client.total_timeout or (budget is not None and wait >= budget):
            yield response
            return
        note(f"retrying after {wait:.2f}s (status {response.status_code}, attempt {attempt + 1})")
        yield wait
        waited += wait
        attempt += 1


# A request the host sends once more when its connection dropped before the answer was complete: a safe one (it
# changes nothing on the server), once, as HTTP/1.1 lets a client (RFC 9112 §9.3.1, RFC 9110 §9.2.2). A server
# that drops it again is unreachable as before; both attempts are in the evidence.
RESENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
RESENT = "the connection closed before the answer to {method} was complete: sent once more (RFC 9112 §9.3.1)"
RESENT_EXTENSION = "conformance.resent"  # set on the answer to a request sent once more: see was_resent()


def resends(method: str, exc: BaseException) -> bool:
    """Whether the host sends a request again after ``exc`` (see ``RESENT_METHODS``)."""
    return method.upper() in RESENT_METHODS and isinstance(exc, TargetUnreachable) and exc.dropped


def was_resent(response: httpx.Response) -> bool:
    """Whether ``response`` answers a request sent once more after its connection dropped. The server may have acted
    on the first copy although it never answered it: a GET the server treats as a step of its own (a login's resume
    URL) then finds that step spent, and the answer is the drop's consequence, not the server's answer to the step."""
    return bool(response.extensions.get(RESENT_EXTENSION))


def _within(timeout: float | httpx.Timeout, seconds: float) -> httpx.Timeout:
    """``timeout`` with none of its parts longer than ``seconds``."""
    given = httpx.Timeout(timeout)
    parts = {"connect": given.connect, "read": given.read, "write": given.write, "pool": given.pool}
    return httpx.Timeout(**{k: seconds if v is None else min(v, seconds) for k, v in parts.items()})


class Transfer:
    """One request's transfer, for HostHTTP and its async twin (which only read the stream): the request built, the
    body read under the size cap and the total time, and the evidence recorded whatever the outcome."""

    def __init__(self, client: _Client, wire: Wire | AsyncWire, step: Send) -> None:
        self.client, self.started = client, step.started
        self.request = wire.build_request(step.method, parsed_url(step.url), **step.kwargs)
        self.method, self.url = step.method, step.url
        self.sent_at, self.stamp = time.monotonic(), now_stamp()
        self.bounded: BoundedBody  # made by begin(), once the answer's headers say how its body is coded
        self.body = bytearray()
        self.drop_encoding = False

    @property
    def shown(self) -> str:
        """The request in an error message (redacted when one is needed, not for every request)."""
        return _shown(self.client, self.method, self.url)

    def begin(self, response: httpx.Response) -> bool:
        """The answer's headers are in: its body is read (and decoded, layer by layer) under the size cap. True when
        the transport handed the body over already read and decoded (an in-memory transport): read it decoded."""
        predecoded = response.is_stream_consumed
        encoding = None if predecoded else response.headers.get("content-encoding")
        self.bounded = BoundedBody(encoding, self.client.max_response_bytes)
        self.body = self.bounded.body
        self.drop_encoding = self.bounded.decoded or predecoded
        return predecoded

    def read(self, chunk: bytes) -> None:
        """One raw chunk off the wire (never decoded beforehand: see :mod:`conformance.host._decode`)."""
        try:
            self.bounded.feed(chunk)
        except ResponseTooLarge as exc:
            raise ResponseTooLarge(f"{self.shown}: {exc}") from None
        except zlib.error as exc:
            raise httpx.DecodingError(f"the body does not decode as its Content-Encoding says ({exc})") from None
        now = time.monotonic()
        if now - self.started > self.client.total_timeout:
            raise TargetUnreachable(f"{self.shown}: no complete response within {self.client.total_timeout:g}s")
        if _budget.spent(now):
            _budget.check(self.shown, now)

    def failed(self, exc: TargetError | httpx.HTTPError) -> Exception:
        """The exception to raise for ``exc``, carrying the exchange (an httpx error becomes TargetUnreachable, or
        TargetTooSlow when it is a timeout the check's time budget shortened)."""
        if isinstance(exc, httpx.TimeoutException) and (budget := _budget.cut_short_by()) is not None:
            exc = TargetTooSlow(f"{self.shown}: {describe_http_error(exc)} as {budget} ran out")
        if isinstance(exc, TargetError):
            exc.exchange = self._record(None, error=str(exc))
            # The traceback of ``exc`` holds this transfer in a cycle (frames and exceptions) that lives until the
            # collector's next full pass: the body it read (up to the cap) is freed now, its evidence recorded.
            self.body.clear()
            return exc
        message = self.client.redactor.scrub(f"{self.shown}: {describe_http_error(exc)}")
        failure = TargetUnreachable(message, exchange=self._record(None, error=message))
        failure.dropped = isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError))
        self.body.clear()
        return failure

    def done(self, response: httpx.Response) -> httpx.Response:
        """The answer, its body read: the check's evidence for it is on its extensions (``exchange_of``)."""
        decoded = bytes(self.body)
        # A decoded body drops its Content-Encoding so httpx does not decode it twice (one it could not bound stays as
        # sent, and says so). The new answer copies the headers as received (their bytes, not decoded and encoded
        # again: half the cost of building it); the evidence reads them as received.
        headers = response.headers
        if self.drop_encoding and "content-encoding" in headers:
            headers = httpx.Headers(headers)
            del headers["content-encoding"]
        # ``httpx.Response(content=decoded)``, in its steps: the body's stream, its Content-Length unless the answer
        # has one, the body read. The same lines have the same encoding, which the evidence read: set before httpx
        # reads the headers (the Content-Length looked up, the decoder chosen), or it reads every line again.
        final = httpx.Response(
            status_code=response.status_code,
            headers=headers,
            stream=httpx.ByteStream(decoded),
            request=self.request,
            extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1")},
        )
        if headers is response.headers:
            final.headers.encoding = headers.encoding
        if decoded:
            final.headers.setdefault("Content-Length", str(len(decoded)))
        final.read()
        recorded = self._record(response, error=None, body=decoded)
        if recorded is not None:  # e.g. the evidence of an InvalidResponse about this answer
            final.extensions[RESPONSE_EXTENSION] = recorded
        return final

    def _record(
        self, response: httpx.Response | None, *, error: str | None, body: bytes | None = None
    ) -> dict[str, Any] | None:
        if body is None and response is not None:
            body = bytes(self.body)  # (done() passes the copy it made: a large body is not copied twice)
        redactor, request = self.client.redactor, self.request
        return record_httpx_exchange(
            redactor, request, response, body, sent_at=self.sent_at, stamp=self.stamp, error=error
        )


def _shown(client: _Client, method: str, url: str) -> str:
    """A request as error and throttle messages show it: its method and its URL, redacted."""
    return f"{method} {client.redactor.url(url)}"


def note(text: str) -> None:
    """A note on the running check's record (what the host did besides sending: retries, throttle waits)."""
    record = _context.current()
    if record is not None:
        record.notes.append(text)


@functools.cache
def environment_proxies() -> tuple[tuple[str, str | None], ...]:
    """The proxies the environment names (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) as httpx
    mounts (URL pattern, proxy URL or None: no proxy), read once per process: the host's clients are made while
    checks run at once, and reading the environment while pytest changes it (it sets and removes a variable around
    each check) can fail. The same mapping httpx makes of them."""
    found = urllib.request.getproxies()
    mounts: list[tuple[str, str | None]] = []
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            url = found[scheme]
            mounts.append((f"{scheme}://", url if "://" in url else f"http://{url}"))
    for host in (h.strip() for h in found.get("no", "").split(",")):
        if host == "*":
            return ()
        if not host:
            continue
        if "://" in host:
            mounts.append((host, None))
        elif _is_ip(host) or host.lower() == "localhost":
            mounts.append((f"all://[{host}]" if ":" in host else f"all://{host}", None))
        else:
            mounts.append((f"all://*{host}", None))
    return tuple(mounts)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def ssl_context(
    ca_bundle: Path | None = None, *, verify: bool = True, client_cert: tuple[str, str] | None = None
) -> ssl.SSLContext:
    """System trust plus the optional CA bundle (the embedded stack's local CA) and client certificate.

    One context per trust setting, shared by every client of the run: building one parses the system trust store,
    which is costly (docs/performance.md), and a run builds many clients. The files'
    modification times are part of the key, so a regenerated CA or certificate gets a fresh context.
    Shared: callers never mutate the result (load a client certificate by passing ``client_cert``).
    """
    stamps = tuple(_stamp(f) for f in (ca_bundle, *(client_cert or ())))
    return _build_context(ca_bundle, verify, client_cert, stamps)


def own_ssl_context(ca_bundle: Path | None = None) -> ssl.SSLContext:
    """A context like ``ssl_context(ca_bundle)`` but of the caller's own (not shared, not cached): for a check that
    presents several client certificates one after another, loading each into it just before its connection
    (building a context is costly, the system trust store; a connection copies the certificate it was opened with,
    so loading the next one leaves it as it was)."""
    return _build_context.__wrapped__(ca_bundle, True, None, ())


def _stamp(path: str | Path | None) -> tuple[int, int] | None:
    try:
        info = os.stat(path) if path is not None else None
    except OSError:
        return None  # loading it fails below, as it did before
    return (info.st_mtime_ns, info.st_size) if info is not None else None


def _unverified_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


@functools.lru_cache(maxsize=32)
def _build_context(
    ca_bundle: Path | None, verify: bool, client_cert: tuple[str, str] | None, stamps: tuple[Any, ...]
) -> ssl.SSLContext:
    # Unverified: a client context that verifies nothing, and so loads no system trust store it would never read.
    context = ssl.create_default_context() if verify else _unverified_context()
    if ca_bundle is not None:
        context.load_verify_locations(cafile=str(ca_bundle))
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
        tls_context: ssl.SSLContext | None = None,
        user_agent: bool = False,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        self.timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        )
        self.total_timeout = total_timeout
        self.max_response_bytes = max_response_bytes
        self.ca_bundle = ca_bundle
        self.guard = guard or UrlGuard()
        self.redactor = redactor or Redactor()
        self._reached: set[tuple[str, str, int]] = set()  # where unreachable() connected (scheme, host, port)
        self.retry = retry
        self.client_cert = client_cert
        self.pacer = pacer  # the run's pace (rate-limit budgets, throttle waits); None: answers as they come
        # How many independent cases of a check may be in flight at once (conformance.host.fanout); 1: one by one.
        self.concurrency = max(1, concurrency)
        self._sleep = sleep
        # Two user agents, as a real host has: this client is the host's backend (discovery, registration, token
        # requests, MCP calls, document fetches), which keeps no cookies; ``browser`` is the user's browser (login
        # and consent pages, front-channel redirects), with its own cookie jar. ``user_agent``: this is the browser.
        self.is_browser = user_agent
        self._browser: HostHTTP | None = None
        self._browser_lock = threading.Lock()  # checks running at once may each be first to need the browser
        self._sibling: dict[str, Any] = {
            "connect_timeout": connect_timeout,
            "read_timeout": read_timeout,
            "total_timeout": total_timeout,
            "max_response_bytes": max_response_bytes,
            "ca_bundle": ca_bundle,
            "guard": self.guard,
            "redactor": self.redactor,
            "retry": retry,
            "transport": transport,
            "sleep": sleep,
            "client_cert": client_cert,
            "pacer": pacer,
            "tls_context": tls_context,
            "concurrency": concurrency,
        }
        # ``tls_context``: the verified context to use instead of the shared one (see own_ssl_context).
        context = tls_context or ssl_context(ca_bundle, client_cert=client_cert)
        mounts: dict[str, httpx.BaseTransport | None] = {}
        if transport is None:
            for pattern, proxy in environment_proxies():
                mounts[pattern] = None if proxy is None else httpx.HTTPTransport(proxy=proxy, verify=context)
        if transport is None and self.guard.allow_insecure_loopback:
            # Self-signed TLS is tolerated on loopback only; everything else is verified. The client certificate
            # is presented there too: an mTLS check against a loopback target must send the one it names.
            insecure = httpx.HTTPTransport(verify=ssl_context(ca_bundle, verify=False, client_cert=client_cert))
            for host in ("127.0.0.1", "localhost", "[::1]"):
                mounts[f"all://{host}"] = insecure
        # The environment's proxies are read once (environment_proxies), nothing else of it.
        self._client = Wire(
            transport if transport is not None else httpx.HTTPTransport(verify=context, trust_env=False),
            mounts=mounts,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
            timeout=self.timeout,
            jars=Jars(keep_cookies=user_agent),
        )

    @property
    def browser(self) -> HostHTTP:
        """The user's browser beside this backend client: the same settings, recording and redaction, its own
        cookie jar (the authorization server's login session); the browser of a browser is itself."""
        if self.is_browser:
            return self
        if self._browser is None:
            with self._browser_lock:
                if self._browser is None:
                    self._browser = HostHTTP(**self._sibling, user_agent=True)
        return self._browser

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
            "concurrency": cases_at_once(settings.get("concurrency")),
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    def close(self) -> None:
        self._client.close()
        if self._browser is not None:
            self._browser.close()

    def clear_cookies(self) -> None:
        """Forget the user-agent session (cookies the login pages set), as a fresh browser profile would."""
        if self.is_browser:
            self._client.cookies.clear()
        elif self._browser is not None:
            self._browser.clear_cookies()

    def unreachable(self, url: str) -> str | None:
        """Why nothing answers at ``url`` (its host unresolvable, the connection refused or never accepted, the TLS
        handshake failed), or None once a connection (and, for https, a TLS handshake) succeeded. No HTTP request
        is sent: an answer of any kind, or a server that stalls after connecting, is the target's to be judged. Where
        it connected once it is not asked again (the run's head start asks first, the target's fixture then)."""
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            return f"not a URL ({exc})"
        host, scheme = parsed.host, parsed.scheme
        port = parsed.port or (443 if scheme == "https" else 80)
        if (scheme, host, port) in self._reached:
            return None
        why = self._unreachable(scheme, host, port)
        if why is None:
            self._reached.add((scheme, host, port))
        return why

    def _unreachable(self, scheme: str, host: str, port: int) -> str | None:
        timeout = self.timeout.connect or TIMEOUTS.connect
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except socket.gaierror as exc:
            return f"the host name {host!r} does not resolve ({exc.strerror or exc})"
        except ConnectionRefusedError:
            return f"connection refused at {host}:{port} (nothing listens there)"
        except TimeoutError:
            return f"no connection to {host}:{port} within {timeout:g}s"
        except OSError as exc:
            return f"could not connect to {host}:{port} ({exc.strerror or exc})"
        with sock:
            if scheme != "https":
                return None
            insecure = self.guard.allow_insecure_loopback and is_loopback_host(host)
            context = ssl_context(self.ca_bundle, verify=not insecure, client_cert=self.client_cert)
            try:
                with context.wrap_socket(sock, server_hostname=host):
                    return None
            except ssl.SSLCertVerificationError as exc:
                return f"TLS certificate not trusted ({exc.verify_message}); pass --ca-bundle for a private CA"
            except ssl.SSLError as exc:
                return f"TLS handshake failed ({exc.reason or exc})"
            except TimeoutError:
                return None  # it accepted the connection: a stalled handshake is the target's to be judged
            except OSError as exc:
                return f"TLS handshake failed ({exc.strerror or exc})"

    def __enter__(self) -> HostHTTP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ------------------------------------------------------------------------------------------

    def request(self, method: str, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        """Send one logical request (with retries and guarded redirects); return the final response.

        ``options`` are :class:`RequestOptions`. Raises :class:`TargetUnreachable`, :class:`ResponseTooLarge` or
        :class:`UrlRefused` (all TargetError), and :class:`Throttled` when a check of a rule other than RL-* cannot
        get past a throttled answer (see _pace).
        """
        steps = request_steps(self, method, url, options, pacer=self.pacer)
        try:
            step = steps.send(None)
            while not isinstance(step, httpx.Response):
                if isinstance(step, Send):
                    try:
                        reply = self._send(*step)
                    except TargetUnreachable as exc:  # the steps decide: sent once more, or raised
                        step = steps.throw(exc)
                        continue
                else:
                    if isinstance(step, Pause):
                        assert self.pacer is not None  # only the pacer pauses
                        self.pacer.sleep(step.seconds)
                    else:
                        self._sleep(step)
                    reply = None
                step = steps.send(reply)
        finally:
            steps.close()
        return step

    def _send(self, method: str, url: str, kwargs: dict[str, Any], started: float) -> httpx.Response:
        transfer = Transfer(self, self._client, Send(method, url, kwargs, started))
        try:
            response = self._client.send(transfer.request)
            try:
                if transfer.begin(response):
                    for chunk in response.iter_bytes():
                        transfer.read(chunk)
                else:  # the transport's raw stream, read as ``iter_raw`` reads it (its chunks as they come)
                    for chunk in response.stream:  # type: ignore[union-attr]
                        if chunk:
                            transfer.read(chunk)
            finally:
                response.close()
        except (ResponseTooLarge, TargetUnreachable, TargetTooSlow, httpx.HTTPError) as exc:
            raise transfer.failed(exc) from None
        return transfer.done(response)

    # -- shortcuts -----------------------------------------------------------------------------------------

    def get(self, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        return self.request("GET", url, **options)

    def post(self, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        return self.request("POST", url, **options)

    def put(self, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        return self.request("PUT", url, **options)

    def patch(self, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        return self.request("PATCH", url, **options)

    def delete(self, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        return self.request("DELETE", url, **options)

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
