"""Harness runs for the matrix, forked from a server process that has already imported the heavy libraries.

A matrix makes well over a hundred harness runs; about half of each run's CPU is importing pytest, Hypothesis,
httpx, jsonschema, the MCP SDK... A ``multiprocessing`` fork server imports those once and forks a fresh process
per run, which then does what ``python -m pytest`` does (``_child.run_pytest``). The project's own package is
preloaded too, last (``_preload``: what a run still does itself, and why no state leaks, is said there). Runs pass
``--assert=plain``: checks decide with expect()/fail(), never bare asserts, and preloaded plugin distributions could
not be rewritten anyway.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.testing import RunResult
from tests.matrix._child import run_pytest

# Imported once by the fork server; a module that is missing is skipped by multiprocessing.
PRELOAD = [
    "pytest",
    "_pytest.assertion",
    "_pytest.python",
    "_pytest.terminal",
    "_pytest.junitxml",
    "hypothesis",
    "hypothesis.strategies",
    "hypothesis.stateful",
    "httpx",
    "httpcore",
    "h11",
    "h2",
    "anyio",
    "jsonschema",
    "jwt",
    "cryptography.x509",
    "pydantic",
    "mcp",
    "mcp.client.session",
    "mcp.client.streamable_http",
    "starlette",
    "uvicorn",
    "PIL.Image",
    "boto3",
    "botocore.session",
    "rich",
    "jinja2",
    "tests.matrix._child",
    "tests.matrix._preload",  # last: it freezes the collector's view of everything above
]
HARNESS_ARGS = ("-p", "no:cacheprovider", "--assert=plain")
# Settings of the session running the matrix that a run must not inherit.
DROPPED_PREFIXES = ("CONFORMANCE_", "PYTEST_XDIST_", "PYTEST_CURRENT_TEST")

_lock = threading.Lock()
_context: multiprocessing.context.ForkServerContext | None = None


def fork_context() -> multiprocessing.context.ForkServerContext:
    global _context
    with _lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(PRELOAD)
            _context = context
        return _context


def stop_fork_server() -> None:
    """Stop this process's fork server, if it started, and wait for it (its runs' CPU is then accounted to us)."""
    with _lock:
        if _context is not None:
            from multiprocessing import forkserver

            forkserver._forkserver._stop()  # the method CPython's own tests use; a no-op when none is running


def run_env(env: Mapping[str, str] | None) -> dict[str, str]:
    merged = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED_PREFIXES)}
    merged.update(env or {})
    return merged


def run_harness(
    args: Sequence[str], report_dir: Path, *, env: Mapping[str, str] | None = None, timeout: float = 600
) -> RunResult:
    """What ``conformance.testing.run_harness`` does, in a forked process; the report must exist afterwards."""
    output = report_dir / "output.txt"
    argv = [*HARNESS_ARGS, "--report-dir", str(report_dir), *args]
    process = fork_context().Process(
        target=run_pytest, args=(argv, run_env(env), str(report_dir), str(output)), name="harness-run", daemon=False
    )
    with _lock:  # multiprocessing's bookkeeping of children is not meant for concurrent starts
        process.start()
    process.join(timeout)
    if process.exitcode is None:
        process.kill()
        process.join(10)
        raise AssertionError(f"harness run did not end within {timeout:.0f} s (killed); output:\n{_tail(output)}")
    report_path = report_dir / "report.json"
    if not report_path.is_file():
        raise AssertionError(f"no report written (exit {process.exitcode})\noutput:\n{_tail(output)}")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    text = output.read_text(encoding="utf-8", errors="replace")
    return RunResult(int(process.exitcode), text, "", report)


def _tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""
