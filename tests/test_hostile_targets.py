"""Every bundled suite against targets that misbehave in every way we could think of.

The harness must come out of it with a complete, schema-valid report in which the target fails (never a harness
``error``, never an INTERNALERROR or a traceback as the verdict, never a hang), and the API keys it was given appear
in no output. One server stands for all three targets; its answers rotate through the misbehaviours per request,
or all stall, depending on the run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.rules import RULES
from conformance.testing import RunResult, run_harness

PLATFORM_KEY = "sk-hostile-platform-3f9a1c7e5d2b"
COMPRESSION_KEY = "hostile-compression-8e2d4c6a0b1f"

Answer = Callable[[BaseHTTPRequestHandler], None]


def _send(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    if "Content-Length" not in headers:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


def _json(status: int, body: bytes, **headers: str) -> Answer:
    return lambda h: _send(h, status, {"Content-Type": "application/json", **headers}, body)


def _reset(handler: BaseHTTPRequestHandler) -> None:
    handler.close_connection = True
    handler.connection.shutdown(2)  # no answer at all


def _lying_length(handler: BaseHTTPRequestHandler) -> None:
    handler.close_connection = True
    _send(handler, 200, {"Content-Type": "application/json", "Content-Length": "5000"}, b'{"partial": ')


WRONG_SHAPES = json.dumps(
    {
        "resource": 5,
        "authorization_servers": "not-a-list",
        "issuer": ["a"],
        "error": {"message": 3, "type": None},
        "data": {"id": 1},
        "has_more": "yes",
        "input_tokens": -1,
        "id": None,
        "tools": [None, 3, {"name": 7}],
        "output": {"url": "javascript:alert(1)"},
    }
).encode()

MISBEHAVIOURS: list[Answer] = [
    _json(200, b'{"unterminated'),
    _json(200, b"[]"),
    _json(200, b"null"),
    _json(200, WRONG_SHAPES, **{"Compression-Count": "many", "Image-Width": "-5", "Location": "javascript:x"}),
    lambda h: _send(h, 200, {"Content-Type": "text/html"}, b"<html><script>alert(1)</script>\xff\xfe</html>"),
    lambda h: _send(h, 200, {"Content-Type": "image/png", "Image-Height": "1e9"}, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
    _json(
        401,
        b'{"error": "invalid_token"}',
        **{"WWW-Authenticate": 'Bearer resource_metadata="http://169.254.169.254/latest, scope=, error="x'},
    ),
    _json(429, b'{"error": {}}', **{"Retry-After": "100000", "x-ratelimit-remaining-requests": "-3"}),
    _json(429, b"{}", **{"Retry-After": "Thu, 01 Jan 2099 00:00:00 GMT", "x-ratelimit-reset-requests": "forever"}),
    lambda h: _send(h, 302, {"Location": "http://169.254.169.254/latest/meta-data"}, b""),
    lambda h: _send(h, 307, {"Location": h.path}, b""),
    lambda h: _send(h, 500, {"Content-Type": "text/plain"}, b"boom"),
    lambda h: _send(h, 200, {"Content-Type": "text/event-stream"}, b"event: message\ndata: {not json}\n\n"),
    lambda h: _send(h, 200, {"Content-Type": "application/json"}, b'{"pad": "' + b"x" * 300_000 + b'"}'),
    _json(200, b"[" * 5000 + b"]" * 5000),
    _reset,
    _lying_length,
]


def _stall(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    handler.wfile.write(b'{"slow": ')
    handler.wfile.flush()
    time.sleep(30)  # far past the run's read timeout; the harness must give up on its own


class _Handler(BaseHTTPRequestHandler):
    server: _HostileServer

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= 64 * 1024 * 1024:
            self.rfile.read(length)
        with contextlib.suppress(OSError):  # the harness hung up first, as it may
            self.server.next_answer()(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HostileServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answers: list[Answer]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self._answers = itertools.cycle(answers)
        self._lock = threading.Lock()

    def next_answer(self) -> Answer:
        with self._lock:
            return next(self._answers)


@pytest.fixture
def hostile_server(request: pytest.FixtureRequest) -> Iterator[str]:
    server = _HostileServer(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _run_all_suites(base: str, report_dir: Path, *extra: str) -> RunResult:
    args = [
        "--target-url",
        f"{base}/mcp",
        "--platform-url",
        base,
        "--compression-url",
        base,
        "--allow-insecure-loopback",
        "--max-response-bytes",
        "100000",
        "--max-expiry-wait",
        "2",
        "-q",
        *extra,
    ]
    env = {"CONFORMANCE_PLATFORM_API_KEY": PLATFORM_KEY, "CONFORMANCE_COMPRESSION_API_KEY": COMPRESSION_KEY}
    # The timeout guards against a hang; it is not a performance target.
    return run_harness(args, report_dir, env=env, timeout=420)


def _assert_target_failed_and_harness_held(result: RunResult, report_dir: Path) -> None:
    schema_path = Path(__file__).parents[1] / "conformance" / "schemas" / "report.schema.json"
    jsonschema.validate(result.report, json.loads(schema_path.read_text()))
    output = result.stdout + result.stderr
    assert "INTERNALERROR" not in output and "Traceback" not in output, output[-3000:]
    assert result.exit_code == 1, output[-3000:]
    assert result.report["verdict"]["accepted"] is False
    statuses = result.statuses()
    assert set(statuses) == set(RULES), sorted(set(RULES) ^ set(statuses))
    errors = [r for r in result.report["results"] if r["status"] == "error"]
    assert not errors, "\n".join(f"{r['rule']}: {r['message']}"[:600] for r in errors)
    decided = {rule for rule, status in statuses.items() if status in ("failed", "warning")}
    assert {"AUTH-PRM-01", "TOK-01", "IMG-SHRINK-01"} <= decided, statuses
    for name in ("report.json", "report.html", "junit.xml"):
        text = (report_dir / name).read_text(encoding="utf-8", errors="replace")
        assert PLATFORM_KEY not in text and COMPRESSION_KEY not in text, name
    assert PLATFORM_KEY not in output and COMPRESSION_KEY not in output


@pytest.mark.parametrize("hostile_server", [MISBEHAVIOURS], indirect=True, ids=["misbehaving"])
def test_a_misbehaving_target_fails_without_breaking_the_harness(hostile_server: str, tmp_path: Path) -> None:
    result = _run_all_suites(hostile_server, tmp_path)
    _assert_target_failed_and_harness_held(result, tmp_path)


@pytest.mark.parametrize("hostile_server", [[_stall]], indirect=True, ids=["stalling"])
def test_a_stalling_target_is_timed_out(hostile_server: str, tmp_path: Path) -> None:
    result = _run_all_suites(hostile_server, tmp_path, "--read-timeout", "0.5", "--total-timeout", "2")
    _assert_target_failed_and_harness_held(result, tmp_path)
    shrink = next(r for r in result.report["results"] if r["rule"] == "IMG-SHRINK-01")
    assert "timed out" in shrink["message"] or "no complete response" in shrink["message"], shrink["message"]
