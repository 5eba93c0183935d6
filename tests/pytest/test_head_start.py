"""The run's first requests sent while pytest collects (conformance/pytest/_head_start.py).

A plugin of the pytester run holds collection open until the tool server has seen a request (or a bound passes),
and writes down what it saw: discovery reaching the server before collection ended is shown by that, never by
timing. The server answers every request 404 (no metadata): each check it reaches is blocked the same way.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests._checks_run import run_checks
from tests._serving import serve_http

WAITING_PLUGIN = """
import json, time
from pathlib import Path

SEEN = Path({seen!r})


def pytest_collection_modifyitems(config, items):
    wait = {wait!r}
    deadline = time.monotonic() + (30 if wait else 0)
    while not SEEN.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    Path("collection.json").write_text(json.dumps({{"seen": SEEN.exists()}}))
    first = [item for item in items if item.nodeid.endswith("test_prm.py::test_metadata_is_served")]
    items[:] = first
"""


class _Server:
    def __init__(self, seen: Path) -> None:
        self.seen = seen
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                with server.lock:
                    server.paths.append(self.path)
                    server.seen.touch()
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def tool_server(tmp_path: Path) -> Iterator[tuple[str, _Server]]:
    server = _Server(tmp_path / "seen")
    with serve_http(server.handler()) as origin:
        yield f"{origin}/mcp", server


def _run(pytester: pytest.Pytester, url: str, server: _Server, *, wait: bool, args: tuple[str, ...] = ()) -> dict:
    pytester.makepyfile(headwait=WAITING_PLUGIN.format(seen=str(server.seen), wait=wait))
    pytester.syspathinsert()
    checks = run_checks(
        pytester,
        "-p",
        "headwait",
        "--target-url",
        url,
        "--allow-insecure-loopback",
        "--suite",
        "auth",
        *args,
    )
    collection: dict = json.loads((pytester.path / "collection.json").read_text())
    collection["results"] = checks.results
    return collection


def test_discovery_reaches_the_tool_server_while_pytest_collects(
    pytester: pytest.Pytester, tool_server: tuple[str, _Server]
) -> None:
    url, server = tool_server
    found = _run(pytester, url, server, wait=True)
    assert found["seen"], "no request reached the tool server before collection ended"
    assert any(path.startswith("/mcp") or "oauth-protected-resource" in path for path in server.paths)
    # The discovery's record still goes to its first user, as any early work's does.
    (result,) = found["results"]
    assert result["rule"] == "AUTH-PRM-01"
    assert result["evidence"], "the discovery's exchanges are not in its first user's evidence"


def test_a_selection_of_checks_sends_nothing_before_the_checks_run(
    pytester: pytest.Pytester, tool_server: tuple[str, _Server]
) -> None:
    url, server = tool_server
    found = _run(pytester, url, server, wait=False, args=("-k", "metadata_is_served"))
    assert not found["seen"], "a run selecting checks with -k sent requests while collecting"
    (result,) = found["results"]
    assert result["evidence"]  # the fixture discovered the usual way, once its check was set up
