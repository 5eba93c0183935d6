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
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.reference._service import ServiceSpec
from conformance.reference.stack import ServiceHandle, popen_service
from conformance.testing import RunResult
from tests.matrix._child import run_pytest, run_service

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
    # What every run still imported itself (modules a forked run added to sys.modules): pytest's default
    # plugins, xdist's and anyio's, anyio's backend, rich's tables, image formats, S3 transfers. Not Hypothesis'
    # pytest plugin: importing it counts the run's initialisation phase, which the run must do itself.
    "_pytest.warnings",
    "_pytest.unraisableexception",
    "_pytest.unittest",
    "_pytest.tracemalloc",
    "_pytest.threadexception",
    "_pytest.skipping",
    "_pytest.setupplan",
    "_pytest.setuponly",
    "_pytest.pastebin",
    "_pytest.helpconfig",
    "_pytest.faulthandler",
    "xdist.looponfail",
    "anyio._backends._asyncio",
    "anyio.pytest_plugin",
    "anyio.streams.tls",
    "rich._emoji_codes",
    "truststore",
    "httpcore2",
    "boto3.s3.transfer",
    "PIL.JpegImagePlugin",
    "PIL.GifImagePlugin",
    "PIL.PpmImagePlugin",
    # The reference services a tool-server case starts (forked_service), whose start-up is mostly these imports.
    "conformance.reference.stack",
    "conformance.reference.toolserver.app",
    "conformance.reference.toolserver.mtls_front",
    "conformance.reference.proxy.app",
    # The compression engine, which the sandboxes served in the matrix's own process fork from here (stacks.py).
    "conformance.reference.compression.workers",
    "tests.matrix._child",
    "tests.matrix._preload",  # last: it freezes the collector's view of everything above
]
HARNESS_ARGS = ("-p", "no:cacheprovider", "--assert=plain")
ROOT = Path(__file__).resolve().parents[2]  # where ``tests`` is importable from
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
            _start_in(ROOT)
            _context = context
        return _context


def _start_in(directory: Path) -> None:
    """Start the fork server with ``directory`` as its working directory. The server imports PRELOAD with the
    ``sys.path`` of a fresh ``python -c``, whose first entry is its working directory (CPython 3.11's forkserver is
    handed the parent's ``sys.path`` and does not apply it), and skips a module it cannot import: started from
    elsewhere (a pytester test's directory) it would preload nothing of ``tests.matrix``, so nothing of the project
    (``_preload``), and every run would import the project itself. Its children take their parent's ``sys.path``
    and working directory all the same. The process's working directory is ROOT for the moment the server takes
    to start (the tests' paths are absolute)."""
    from multiprocessing import forkserver

    previous = os.getcwd()
    os.chdir(directory)
    try:
        forkserver.ensure_running()
    finally:
        os.chdir(previous)


def stop_fork_server() -> None:
    """Stop this process's fork server, if it started, and wait for it (its runs' CPU is then accounted to us)."""
    global _context
    with _lock:
        if _context is not None:
            from multiprocessing import forkserver

            forkserver._forkserver._stop()  # the method CPython's own tests use; a no-op when none is running
            _context = None  # a later run starts it again, from ROOT


def run_env(env: Mapping[str, str] | None, drop: tuple[str, ...] = DROPPED_PREFIXES) -> dict[str, str]:
    """This process's environment less the variables starting with one of ``drop``, plus ``env``."""
    merged = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    merged.update(env or {})
    return merged


def fork_pytest(argv: Sequence[str], env: Mapping[str, str], cwd: Path, output: Path, timeout: float, what: str) -> int:
    """``pytest ARGV`` forked from the fork server in ``cwd`` with exactly ``env``, both streams to ``output``: its
    exit code. One that outlives ``timeout`` is killed and raises AssertionError (``what`` names it, with the
    output's tail)."""
    process = fork_context().Process(
        target=run_pytest, args=(list(argv), dict(env), str(cwd), str(output)), name="forked-pytest", daemon=False
    )
    with _lock:  # multiprocessing's bookkeeping of children is not meant for concurrent starts
        process.start()
    process.join(timeout)
    if process.exitcode is None:
        process.kill()
        process.join(10)
        raise AssertionError(f"{what} did not end within {timeout:.0f} s (killed); output:\n{_tail(output)}")
    return int(process.exitcode)


def run_harness(
    args: Sequence[str], report_dir: Path, *, env: Mapping[str, str] | None = None, timeout: float = 600
) -> RunResult:
    """What ``conformance.testing.run_harness`` does, in a forked process; the report must exist afterwards."""
    output = report_dir / "output.txt"
    argv = [*HARNESS_ARGS, "--report-dir", str(report_dir), *args]
    code = fork_pytest(argv, run_env(env), report_dir, output, timeout, "harness run")
    report_path = report_dir / "report.json"
    if not report_path.is_file():
        raise AssertionError(f"no report written (exit {code})\noutput:\n{_tail(output)}")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    text = output.read_text(encoding="utf-8", errors="replace")
    return RunResult(code, text, "", report)


def _tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


class ForkedService:
    """A service process forked by the fork server, as the stack sees it (what ``subprocess.Popen`` offers)."""

    def __init__(self, process: multiprocessing.process.BaseProcess, argv: Sequence[str]) -> None:
        self._process = process
        self._argv = list(argv)

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self._argv, timeout or 0.0)
        return self._process.exitcode


def forked_service(spec: ServiceSpec, env: dict[str, str], log_file: Path) -> ServiceHandle:
    """A launcher for ``running_stack``: a Python service (``python -m MODULE ...``) is forked from the fork server,
    which has already imported it and its libraries (the ``mcp`` SDK, starlette, uvicorn: most of its start-up);
    anything else (the IdP on node) starts as the stack would start it. The forked service leads its own process
    group, writes to its own log and gets SIGTERM when the fork server dies (which dies with this process)."""
    if spec.argv[:2] != [sys.executable, "-m"] or len(spec.argv) < 3:
        return popen_service(spec, env, log_file)
    module, args = spec.argv[2], spec.argv[3:]
    process = fork_context().Process(
        target=run_service,
        args=(module, args, env, str(spec.cwd) if spec.cwd else None, str(log_file)),
        name=f"service-{spec.name}",
        daemon=False,
    )
    with _lock:
        process.start()
    # Return once it leads its process group, as Popen(start_new_session=True) does: the stack stops it by group.
    assert process.pid is not None
    deadline = time.monotonic() + 10
    while process.exitcode is None and time.monotonic() < deadline:
        try:
            if os.getpgid(process.pid) == process.pid:
                break
        except ProcessLookupError:
            break
        time.sleep(0.001)
    return ForkedService(process, spec.argv)
