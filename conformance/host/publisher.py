"""The HTTPS server the harness runs to publish its CIMD documents and JWKS, and to receive login callbacks.

Every fetch is recorded (client address, time, path, which document) so that checks can prove the authorization
server fetched the document and the JWKS; each is also added to the running check's
evidence as an inbound exchange. A stdlib ``ThreadingHTTPServer`` in a daemon thread: no event loop to share with
the checks, and start/stop are synchronous.

    with Publisher(key=key, certfile=cert, keyfile=key_pem) as pub:
        identity = pub.identity              # base_url = https://127.0.0.1:<port> unless public_base_url is given
        ... authorize with client_id = identity.stable_document_url ...
        assert pub.fetches(document="client")
"""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from conformance.core._exceptions import ConfigError
from conformance.host._redact import Redactor
from conformance.host._serving import ServingThread, https_server
from conformance.host.exchange import now_stamp, record_exchange
from conformance.host.identity import HostIdentity, HostKey

DocumentKind = Literal["client", "callback-client", "jwks", "callback", "unknown"]
CALLBACK_PAGE = (
    b"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Conformance host</title></head>"
    b"<body><p>The conformance harness received the authorization response. You can close this window.</p>"
    b"</body></html>"
)


@dataclass(frozen=True)
class Fetch:
    """One request the publisher answered."""

    at: float  # time.time()
    client: str  # "address:port" of the fetcher
    method: str
    path: str  # path and query as requested
    document: DocumentKind
    status: int
    callback_id: str | None = None
    user_agent: str | None = None


@dataclass(frozen=True)
class CallbackHit:
    """An authorization response delivered to the callback route (by a browser or the manual driver's user)."""

    url: str  # full URL as received (the public base plus path and query)
    path: str
    params: dict[str, str]
    at: float


@dataclass
class _Override:
    status: int
    body: bytes
    content_type: str = "application/json"


@dataclass
class Publisher:
    """Serve the host's documents over HTTPS on ``host:port`` (0 = a free port). Use as a context manager."""

    certfile: Path | str
    keyfile: Path | str
    key: HostKey | None = None
    identity: HostIdentity | None = None  # built on start() from public_base_url (or the bound address) when None
    host: str = "127.0.0.1"
    port: int = 0
    public_base_url: str | None = None
    redirect_base: str | None = None
    redactor: Redactor | None = None
    record_evidence: bool = True
    _fetches: list[Fetch] = field(default_factory=list, init=False, repr=False)
    _callbacks: list[CallbackHit] = field(default_factory=list, init=False, repr=False)
    _overrides: dict[str, _Override] = field(default_factory=dict, init=False, repr=False)
    _cond: threading.Condition = field(default_factory=threading.Condition, init=False, repr=False)
    _server: ThreadingHTTPServer | None = field(default=None, init=False, repr=False)
    _thread: ServingThread | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Any, redactor: Redactor | None = None, **overrides: Any) -> Publisher:
        """The publisher a run's settings describe (its certificate must be configured: ``publisher_certfile``
        and ``publisher_keyfile``); ``overrides`` set other fields (e.g. ``record_evidence``)."""
        from conformance.host.identity import load_or_generate_key

        fields: dict[str, Any] = {
            "certfile": settings.get("publisher_certfile"),
            "keyfile": settings.get("publisher_keyfile"),
            "key": load_or_generate_key(settings.get("client_key")),
            "host": settings.get("publisher_host", "127.0.0.1"),
            "port": int(settings.get("publisher_port", 0)),
            "public_base_url": settings.get("client_metadata_url"),
            "redirect_base": settings.get("redirect_base"),
            "redactor": redactor,
        }
        return cls(**{**fields, **overrides})

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> Publisher:
        if self._server is not None:
            return self
        for path in (self.certfile, self.keyfile):
            if not Path(path).is_file():
                raise ConfigError(f"publisher certificate/key file {path} does not exist")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(str(self.certfile), str(self.keyfile))
        server = https_server((self.host, self.port), _handler_for(self), context)
        self._server = server
        self.port = int(server.server_address[1])
        if self.identity is None:
            base = self.public_base_url or f"https://{_url_host(self.host)}:{self.port}"
            self.identity = HostIdentity(
                base_url=base, key=self.key or HostKey.generate(), redirect_base=self.redirect_base
            )
        self._thread = ServingThread(server, "cimd-publisher").start()  # stops at once, not at the next poll
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()  # closes the server
        else:
            server.server_close()

    def __enter__(self) -> Publisher:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        if self.identity is None:
            raise RuntimeError("publisher not started")
        return self.identity.base_url

    # -- what was fetched ------------------------------------------------------------------------------------

    def fetches(
        self, *, document: DocumentKind | None = None, since: float | None = None, path: str | None = None
    ) -> list[Fetch]:
        with self._cond:
            found = list(self._fetches)
        return [
            f
            for f in found
            if (document is None or f.document == document)
            and (since is None or f.at >= since)
            and (path is None or urlsplit(f.path).path == path)
        ]

    def fetched(self, url: str, *, since: float | None = None) -> list[Fetch]:
        """Fetches of one published URL (e.g. ``identity.stable_document_url``) answered 200."""
        path = urlsplit(url).path
        return [f for f in self.fetches(path=path, since=since) if f.status == 200]

    def clear(self) -> None:
        with self._cond:
            self._fetches.clear()
            self._callbacks.clear()

    def override(self, path: str, status: int, body: bytes | str | dict[str, Any] | None = None) -> None:
        """Answer ``path`` with a fixed status and body instead of the generated document (negative probes)."""
        if isinstance(body, dict):
            payload, ctype = json.dumps(body).encode(), "application/json"
        else:
            payload = body.encode() if isinstance(body, str) else (body or b"")
            ctype = "application/json" if payload[:1] in (b"{", b"[") else "text/plain"
        with self._cond:
            self._overrides[path] = _Override(status, payload, ctype)

    def drop_override(self, path: str) -> None:
        """Serve ``path`` as before its override."""
        with self._cond:
            self._overrides.pop(path, None)

    def clear_overrides(self) -> None:
        with self._cond:
            self._overrides.clear()

    # -- callbacks -------------------------------------------------------------------------------------------

    def callbacks(self) -> list[CallbackHit]:
        with self._cond:
            return list(self._callbacks)

    def wait_for_callback(
        self, timeout: float, *, since: float | None = None, state: str | None = None
    ) -> CallbackHit | None:
        """The first callback (after ``since``, with ``state`` when given) within ``timeout`` seconds, else None."""
        deadline = time.monotonic() + timeout

        def match() -> CallbackHit | None:
            for hit in self._callbacks:
                if (since is None or hit.at >= since) and (state is None or hit.params.get("state") == state):
                    return hit
            return None

        with self._cond:
            while True:
                hit = match()
                remaining = deadline - time.monotonic()
                if hit is not None or remaining <= 0:
                    return hit
                self._cond.wait(remaining)

    # -- serving (called from the handler threads) -----------------------------------------------------------

    def _route(self, path: str) -> tuple[DocumentKind, str | None]:
        identity = self.identity
        assert identity is not None
        route = urlsplit(path).path
        if route == urlsplit(identity.stable_document_url).path:
            return "client", None
        if route == urlsplit(identity.jwks_url).path:
            return "jwks", None
        segments = route.split("/")
        if len(segments) == 4 and segments[1] == "oauth" and segments[3] == "client.json":
            return "callback-client", segments[2]
        redirect = urlsplit(identity.redirect_uri()).path
        callback_base = urlsplit(identity.redirect_base or "").path
        if route == redirect or (callback_base and route.startswith(callback_base.rstrip("/") + "/")):
            return "callback", route[len(callback_base.rstrip("/")) + 1 :] or None
        return "unknown", None

    def _answer(self, method: str, path: str) -> tuple[DocumentKind, str | None, int, bytes, str]:
        kind, callback_id = self._route(path)
        identity = self.identity
        assert identity is not None
        with self._cond:
            override = self._overrides.get(urlsplit(path).path)
        if override is not None:
            return kind, callback_id, override.status, override.body, override.content_type
        if method not in ("GET", "HEAD"):
            return kind, callback_id, 405, b'{"error": "method not allowed"}', "application/json"
        if kind == "client":
            return kind, None, 200, _json(identity.client_document()), "application/json"
        if kind == "callback-client":
            try:
                document = identity.client_document(callback_id)
            except ValueError:
                return kind, callback_id, 404, b'{"error": "not found"}', "application/json"
            return kind, callback_id, 200, _json(document), "application/json"
        if kind == "jwks":
            return kind, None, 200, _json(identity.jwks()), "application/jwk-set+json"
        if kind == "callback":
            return kind, callback_id, 200, CALLBACK_PAGE, "text/html; charset=utf-8"
        return kind, None, 404, b'{"error": "not found"}', "application/json"

    def _record(
        self, fetch: Fetch, headers: dict[str, str], body: bytes, ctype: str, started: str, elapsed: float
    ) -> None:
        with self._cond:
            self._fetches.append(fetch)
            if fetch.document == "callback":
                query = urlsplit(fetch.path).query
                self._callbacks.append(
                    CallbackHit(
                        url=self.base_url + fetch.path,
                        path=urlsplit(fetch.path).path,
                        params=dict(parse_qsl(query, keep_blank_values=True)),
                        at=fetch.at,
                    )
                )
            self._cond.notify_all()
        if not self.record_evidence:
            return
        record_exchange(
            self.redactor or Redactor(),
            direction="inbound",
            peer=fetch.client,
            document=fetch.document,
            method=fetch.method,
            url=self.base_url + fetch.path,
            request_headers=headers,
            status=fetch.status,
            response_headers={"content-type": ctype},
            response_body=body if fetch.document != "callback" else None,
            elapsed_s=elapsed,
            started_at=started,
        )


def _json(document: dict[str, Any]) -> bytes:
    return json.dumps(document, indent=2).encode("utf-8")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _handler_for(publisher: Publisher) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "conformance-publisher/0.1"
        protocol_version = "HTTP/1.1"
        timeout = 10  # a stalled client must not hold a thread forever
        # Keep-alive, and an answer's head and body are two writes: with Nagle's algorithm on, the body waited for
        # the client's delayed ACK of the head, a stall on every document an authorization server fetched.
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            # The TLS handshake happens here, in the handler thread, so a bad client cannot block accept().
            self.tls_ok = True
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                self.tls_ok = False

        def handle(self) -> None:
            if self.tls_ok:
                # A peer that goes away mid-request needs no answer.
                with contextlib.suppress(ssl.SSLError, ConnectionError, TimeoutError):
                    super().handle()

        def _serve(self) -> None:
            started = now_stamp()
            t0 = time.monotonic()
            length = int(self.headers.get("Content-Length") or 0)
            if 0 < length <= 65536:
                self.rfile.read(length)  # drain a small body so keep-alive stays in sync
            elif length:
                self.close_connection = True
            kind, callback_id, status, body, ctype = publisher._answer(self.command, self.path)
            fetch = Fetch(
                at=time.time(),
                client=f"{self.client_address[0]}:{self.client_address[1]}",
                method=self.command,
                path=self.path,
                document=kind,
                status=status,
                callback_id=callback_id,
                user_agent=self.headers.get("User-Agent"),
            )
            # Record before answering: whoever gets the answer may immediately ask what was fetched.
            publisher._record(fetch, dict(self.headers.items()), body, ctype, started, time.monotonic() - t0)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store" if kind == "callback" else "max-age=60")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # fetches are recorded, not printed

    return Handler


__all__ = ["CallbackHit", "Fetch", "Publisher"]
