"""Preflight (`conformance doctor`, `pytest --preflight`): one line per problem, in seconds, before any check."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from conformance.cli._main import main
from tests._checks_run import run_checks
from tests._serving import serve_http

PLATFORM_KEY = "pk-test-preflight-0123456789"
COMPRESSION_KEY = "ck-test-preflight-9876543210"


class _Handler(BaseHTTPRequestHandler):
    """A tool server with its PRM and AS metadata, a platform and a compression API, on one loopback origin."""

    def _send(self, status: int, body: object = None, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization", "")
        if self.path == "/.well-known/oauth-protected-resource/mcp":
            self._send(200, {"resource": f"{self.base}/mcp", "authorization_servers": [self.base]})
        elif self.path == "/.well-known/oauth-authorization-server":
            self._send(200, {"issuer": self.base, "authorization_endpoint": f"{self.base}/authorize"})
        elif self.path.startswith("/v1/campaigns"):
            self._send(200 if auth == f"Bearer {PLATFORM_KEY}" else 401, {"data": []})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        auth = self.headers.get("Authorization", "")
        if self.path in ("/mcp", "/broken/mcp"):
            challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource{self.path}"'
            self._send(401, {"error": "unauthorized"}, {"WWW-Authenticate": challenge})
        elif self.path == "/shrink":
            good = "Basic " + base64.b64encode(f"api:{COMPRESSION_KEY}".encode()).decode()
            self._send(400 if auth == good else 401, {"error": "Input missing"})
        else:
            self._send(404, {"error": "not found"})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with serve_http(_Handler) as origin:
        yield origin


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    import os

    for name in list(os.environ):
        if name.startswith("CONFORMANCE_"):
            monkeypatch.delenv(name)
    return monkeypatch


@pytest.fixture
def in_tmp(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    clean_env.chdir(tmp_path)  # no conformance.toml but the test's own
    return clean_env


def _doctor(origin: str, mcp: str = "/mcp") -> list[str]:
    return [
        "doctor",
        "--allow-insecure-loopback",
        "--target-url",
        f"{origin}{mcp}",
        "--platform-url",
        origin,
        "--compression-url",
        origin,
    ]


def test_doctor_all_ready(origin: str, in_tmp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    in_tmp.setenv("CONFORMANCE_PLATFORM_API_KEY", PLATFORM_KEY)
    in_tmp.setenv("CONFORMANCE_COMPRESSION_API_KEY", COMPRESSION_KEY)
    in_tmp.setenv("CONFORMANCE_TEST_USER", "alice")
    in_tmp.setenv("CONFORMANCE_TEST_PASSWORD", "correct horse")
    assert main(_doctor(origin)) == 0
    out = capsys.readouterr().out
    assert "PROBLEM" not in out and out.rstrip().endswith("ready: no problem found")
    assert "tool_server: protected resource metadata at" in out and "(challenge)" in out
    assert "tool_server: authorization server metadata at" in out
    assert "platform: reachable, API key accepted (GET → 200)" in out
    assert "compression: reachable, API key accepted (POST → 400)" in out


def test_doctor_says_each_problem_in_one_line(
    origin: str, in_tmp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = "pk-wrong-key-0000000000"
    in_tmp.setenv("CONFORMANCE_PLATFORM_API_KEY", wrong)  # rejected; compression key and test account unset
    assert main(_doctor(origin, "/broken/mcp")) == 1
    out = capsys.readouterr().out
    problems = [line for line in out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 4, out
    assert any("tool_server: discovery: no protected resource metadata found" in p for p in problems)
    assert any("CONFORMANCE_TEST_USER is not set" in p for p in problems)
    assert any("platform: API key rejected: GET" in p and "→ 401" in p for p in problems)
    assert any("compression: no API key: set CONFORMANCE_COMPRESSION_API_KEY" in p for p in problems)
    assert wrong not in out
    assert out.rstrip().endswith("4 problem(s)")


def test_doctor_unreachable_and_no_target(in_tmp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    in_tmp.setenv("CONFORMANCE_PLATFORM_API_KEY", PLATFORM_KEY)
    assert main(["doctor", "--allow-insecure-loopback", "--platform-url", "http://127.0.0.1:1"]) == 1
    assert "PROBLEM platform: unreachable:" in capsys.readouterr().out
    assert main(["doctor", "--suite", "compression", "--platform-url", "http://127.0.0.1:1"]) == 1
    assert "no target set for the selected suites" in capsys.readouterr().out


CHECK = """
from conformance import observe, rule

@rule("TOK-01")
def test_ran(tmp_path_factory):
    (tmp_path_factory.getbasetemp().parent / "ran").write_text("yes")
    observe("ran")
"""


def test_pytest_preflight_stops_before_the_first_check(
    origin: str, pytester: pytest.Pytester, clean_env: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_checks=CHECK)
    args = ("--allow-insecure-loopback", "--platform-url", origin)
    clean_env.setenv("CONFORMANCE_PLATFORM_API_KEY", "pk-wrong-key-0000000000")
    result = run_checks(pytester, *args, "--preflight", "test_checks.py")
    assert result.ret == 4
    assert "conformance preflight: PROBLEM platform: API key rejected" in result.stderr.str()
    assert not result.report_path.exists()  # nothing decided: no report
    assert "1 passed" not in result.stdout.str()
    clean_env.setenv("CONFORMANCE_PLATFORM_API_KEY", PLATFORM_KEY)
    result = run_checks(pytester, *args, "--preflight", "test_checks.py")
    assert "PROBLEM" not in result.stderr.str()
    result.assert_outcomes(passed=1)  # the run went on
    assert result.report["results"]


def test_a_throttling_or_garbled_target_is_a_problem_line_not_a_crash(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Throttling(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(429)
            self.send_header("Retry-After", "86400")  # longer than any run may wait
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # not HTTP at all
            self.wfile.write(b"\x00garbage\r\n\r\n")

        def log_message(self, *args: object) -> None:
            pass

    with serve_http(Throttling) as url:
        clean_env.chdir(tmp_path)
        clean_env.setenv("CONFORMANCE_PLATFORM_API_KEY", PLATFORM_KEY)
        clean_env.setenv("CONFORMANCE_COMPRESSION_API_KEY", COMPRESSION_KEY)
        code = main(["doctor", "--allow-insecure-loopback", "--platform-url", url, "--compression-url", url])
    assert code == 1
    out = capsys.readouterr().out
    problems = [line for line in out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 2, out
    assert any("platform: answered 429" in p for p in problems)
    assert PLATFORM_KEY not in out and COMPRESSION_KEY not in out
