"""Hostile loopback targets: one server that answers every request in one hostile way (a mode), for the battery in
tests/test_hostile_targets.py and the measurements of benchmarks/hostile_bounds.py.

Each mode is what a target may do to a harness that trusts it: a body without end, a gzip bomb, a byte now and
then, JSON that is not, redirects in a loop or to internal addresses, ``{}`` or HTML for everything, a header of
100 KB, header bytes that are not UTF-8.
"""

from __future__ import annotations

import contextlib
import functools
import time
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests._serving import running

Answer = Callable[[BaseHTTPRequestHandler], None]
ZEROS = b"\x00" * (1 << 20)


@functools.lru_cache(maxsize=4)
def gzip_bomb(inflated_mib: int) -> bytes:
    """``inflated_mib`` MiB of zeros, gzipped (about 1/1000 of that on the wire)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    parts = [packer.compress(ZEROS) for _ in range(inflated_mib)]
    return b"".join(parts) + packer.flush()


def _head(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str | bytes]) -> None:
    """Status line and headers as raw bytes (a value may be bytes that are not UTF-8)."""
    lines = [f"HTTP/1.1 {status} Hostile\r\n".encode()]
    for name, value in headers.items():
        raw = value if isinstance(value, bytes) else value.encode("latin-1")
        lines.append(name.encode() + b": " + raw + b"\r\n")
    handler.wfile.write(b"".join(lines) + b"\r\n")


def _send(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str | bytes], body: bytes) -> None:
    _head(handler, status, {**headers, "Content-Length": str(len(body))})
    if handler.command != "HEAD":
        handler.wfile.write(body)


def huge_body(handler: BaseHTTPRequestHandler) -> None:
    """A gigabyte announced and sent until the harness hangs up."""
    handler.close_connection = True
    _head(handler, 200, {"Content-Type": "application/json", "Content-Length": str(1 << 30)})
    handler.wfile.write(b'{"pad": "')
    for _ in range(1024):
        handler.wfile.write(b"x" * (1 << 20))


def bomb(inflated_mib: int) -> Answer:
    body = gzip_bomb(inflated_mib)
    return lambda h: _send(h, 200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, body)


def slow_drip(interval_s: float) -> Answer:
    """A JSON answer whose body comes one byte every ``interval_s`` (never slower than a read timeout)."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.close_connection = True
        body = b'{"drip": "' + b"." * 10_000 + b'"}'
        _head(handler, 200, {"Content-Type": "application/json", "Content-Length": str(len(body))})
        for byte in body:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(interval_s)

    return answer


def redirect_loop(handler: BaseHTTPRequestHandler) -> None:
    _send(handler, 302, {"Location": handler.path}, b"")


def redirect_internal(handler: BaseHTTPRequestHandler) -> None:
    internal = ("http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/admin")
    _send(handler, 307, {"Location": internal[len(handler.path) % len(internal)]}, b"")


def huge_header(handler: BaseHTTPRequestHandler) -> None:
    """A 100 KB challenge (about all an HTTP/1.1 client takes in one header block), on every answer."""
    challenge = 'Bearer realm="' + "r" * 100_000 + '", error="invalid_token"'
    status = 401 if handler.headers.get("Authorization") is None else 200
    _send(handler, status, {"Content-Type": "application/json", "WWW-Authenticate": challenge}, b"{}")


def bad_utf8_headers(handler: BaseHTTPRequestHandler) -> None:
    headers: dict[str, str | bytes] = {
        "Content-Type": b"application/json; charset=\xff\xfe",
        "WWW-Authenticate": b'Bearer realm="\xc3\x28\xa0\xa1", resource_metadata="http://x/\xff"',
        "Location": b"/\xe2\x28\xa1",
        "X-RateLimit-Remaining-Requests": b"\xf0\x28\x8c\xbc",
    }
    _send(handler, 401, headers, b"{}")


MODES: dict[str, Answer] = {
    "huge-body": huge_body,
    "gzip-bomb": bomb(64),
    "slow-drip": slow_drip(0.2),
    "invalid-json": lambda h: _send(h, 200, {"Content-Type": "application/json"}, b'{"unterminated": [1, '),
    "redirect-loop": redirect_loop,
    "redirect-internal": redirect_internal,
    "empty-object": lambda h: _send(h, 200, {"Content-Type": "application/json"}, b"{}"),
    "html": lambda h: _send(h, 200, {"Content-Type": "text/html"}, b"<!doctype html><html><body>hi</body></html>"),
    "huge-header": huge_header,
    "bad-utf8-headers": bad_utf8_headers,
}


class _Handler(BaseHTTPRequestHandler):
    server: HostileServer
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= 64 * 1024 * 1024:
            self.rfile.read(length)
        with contextlib.suppress(OSError):  # the harness hung up first, as it should
            self.server.answer(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


class HostileServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answer: Answer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the harness hanging up mid-answer is what it should do

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextlib.contextmanager
def hostile(answer: Answer) -> Iterator[str]:
    """A server answering every request with ``answer`` until the block ends; yields its origin."""
    server = HostileServer(answer)
    with running(server, "hostile-mode"):
        yield server.base
