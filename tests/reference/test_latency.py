"""A stack served with a round-trip time (``--latency``) answers no sooner than it: every service, each request, and
a new connection's first request once more; a bad duration is a usage error.

These measure that the delay happened (a lower bound), never how fast anything is."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http import server
from pathlib import Path

import httpx
import pytest

from conformance.cli._main import main
from conformance.reference._latency import delayed_handler, parse_latency
from tests._forked import forked_stack
from tests.reference.conftest import https_client

LATENCY_S = 0.1


def _timed_get(client: httpx.Client, url: str) -> float:
    started = time.monotonic()
    assert client.get(url).is_success, url
    return time.monotonic() - started


def test_every_service_of_the_stack_answers_no_sooner_than_its_latency(tmp_path: Path) -> None:
    # The stack's Python services forked from the fork server (tests/_forked.py): how they start is not judged here.
    with forked_stack(data_dir=tmp_path, latency_s=LATENCY_S) as stack:
        names = {spec.name for spec in stack.services}
        assert {"idp", "toolserver", "platform", "compression"} <= names
        for spec in stack.services:
            with https_client(stack) as client:
                first = _timed_get(client, spec.health_url)  # a new connection: its round trip, then the request's
                again = _timed_get(client, spec.health_url)
            assert first >= 2 * LATENCY_S, (spec.name, first)
            assert again >= LATENCY_S, (spec.name, again)


class _Ok(server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def delayed_server() -> Iterator[str]:
    httpd = server.ThreadingHTTPServer(("127.0.0.1", 0), delayed_handler(_Ok, LATENCY_S))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_delayed_handler_waits_once_per_connection_and_once_per_answer(delayed_server: str) -> None:
    with httpx.Client() as client:
        first = _timed_get(client, delayed_server)
        again = _timed_get(client, delayed_server)
    assert first >= 2 * LATENCY_S
    assert again >= LATENCY_S


def test_no_latency_leaves_the_handler_as_it_is() -> None:
    assert delayed_handler(_Ok, 0.0) is _Ok


@pytest.mark.parametrize(
    ("text", "seconds"), [("50ms", 0.05), ("150 ms", 0.15), ("0.15s", 0.15), ("50", 0.05), ("0", 0.0), ("2S", 2.0)]
)
def test_a_latency_is_read_in_milliseconds_or_seconds(text: str, seconds: float) -> None:
    assert parse_latency(text) == pytest.approx(seconds)


@pytest.mark.parametrize("command", ["up", "demo"])
@pytest.mark.parametrize("value", ["fast", "-50ms", "50us", "", "6s", "nan"])
def test_a_bad_latency_is_a_usage_error(command: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--latency", value])
    assert exited.value.code == 2  # argparse's usage error, before any stack starts
    assert "--latency" in capsys.readouterr().err
