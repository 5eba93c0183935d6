"""The harness's own servers (CIMD publisher, JWKS forge, compression image server) never wake on a timer: their
serve loop sleeps until a connection or stop() arrives, so stop() does not wait for a poll interval to pass, as
with ``serve_forever(poll_interval=...)``, whose every stop waits for the loop's next wake-up."""

from __future__ import annotations

import selectors
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme

from conformance.host._serving import ServingThread
from conformance.host.forge import HarnessIssuer, JwksServer
from conformance.host.identity import HostKey
from conformance.host.publisher import Publisher
from conformance.suites.compression.client import ImageServer


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("serving-tls")
    ca = trustme.CA()
    ca_file, pem = directory / "ca.pem", directory / "server.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(pem))
    return ca_file, pem


@pytest.fixture
def timed_waits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """Every selector wait with a positive timeout made on a thread started during the test: (thread, timeout).
    Threads that were already running (the test's own, other fixtures' servers) are not the servers under test."""
    waits: list[tuple[str, float]] = []
    before = {t.ident for t in threading.enumerate()}
    for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector", "KqueueSelector"):
        cls = getattr(selectors, name, None)
        if cls is None:
            continue

        def spy(self: Any, timeout: float | None = None, _select: Callable[..., Any] = cls.select) -> Any:
            if threading.get_ident() not in before and timeout is not None and timeout > 0:
                waits.append((threading.current_thread().name, timeout))
            return _select(self, timeout)

        monkeypatch.setattr(cls, "select", spy)
    return waits


def _serving_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name in {"cimd-publisher", "jwks-server", "image-server"}}


def test_publisher_never_polls(timed_waits: list[tuple[str, float]], tls: tuple[Path, Path]) -> None:
    ca, pem = tls
    with Publisher(certfile=pem, keyfile=pem, key=HostKey.generate()) as publisher:
        identity = publisher.identity
        assert identity is not None
        with httpx.Client(verify=ssl.create_default_context(cafile=str(ca)), timeout=5) as client:
            assert client.get(identity.stable_document_url).status_code == 200
            assert client.get(identity.jwks_url).status_code == 200  # the same connection, kept alive
    assert not publisher.running and "cimd-publisher" not in _serving_threads()
    assert timed_waits == []


def test_jwks_server_never_polls(timed_waits: list[tuple[str, float]], tls: tuple[Path, Path]) -> None:
    ca, pem = tls
    with JwksServer(HarnessIssuer("https://harness-issuer.example"), certfile=pem, keyfile=pem) as server:
        answer = httpx.get(server.jwks_url, verify=ssl.create_default_context(cafile=str(ca)), timeout=5)
        assert answer.status_code == 200 and answer.json()["keys"]
    assert "jwks-server" not in _serving_threads()
    assert timed_waits == []


def test_image_server_never_polls(timed_waits: list[tuple[str, float]]) -> None:
    served = ImageServer({"/t/a.txt": (b"hello", "text/plain")}, "t")
    try:
        assert httpx.get(f"{served.base_url}/t/a.txt", timeout=5).content == b"hello"
        assert served.hits == ["/t/a.txt"]
    finally:
        served.close()
    assert "image-server" not in _serving_threads()
    assert timed_waits == []


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"hi")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def serving() -> Iterator[ServingThread]:
    thread = ServingThread(ThreadingHTTPServer(("127.0.0.1", 0), _Hello), "test-serving").start()
    yield thread
    thread.stop()


def test_stop_ends_the_loop_and_closes_the_server(serving: ServingThread) -> None:
    port = serving.server.server_address[1]
    for _ in range(3):  # a connection per request (HTTP/1.0): each wakes the loop once
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=5).text == "hi"
    serving.stop()
    assert not serving.alive and serving.server.socket.fileno() == -1
    serving.stop()  # twice is harmless
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/", timeout=5)


def test_a_connection_gone_before_accept_does_not_stall_the_loop(serving: ServingThread) -> None:
    """The selector saw the listening socket readable; whatever accept() then finds, the loop goes on."""
    import socket

    port = serving.server.server_address[1]
    probe = socket.create_connection(("127.0.0.1", port))
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST on close
    probe.close()
    assert httpx.get(f"http://127.0.0.1:{port}/", timeout=5).text == "hi"
    assert serving.alive
