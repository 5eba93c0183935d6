"""``pytest ARGS`` in a process forked from the matrix's fork server (tests/matrix/harness.py), for the tests that
are not about the process boundary itself.

A fresh ``python -m pytest`` spends most of a short run importing pytest, httpx, Hypothesis, the MCP SDK... The
fork server has imported them once; a forked run then does exactly what ``python -m pytest`` does
(``pytest.main``, the run's own cwd and environment, both output streams to one file) and its exit code is
``pytest.main``'s. Runs pass ``--assert=plain`` (the checks decide with expect()/fail(), and preloaded modules
could not be rewritten anyway). What a forked run cannot show, and the tests that keep a real ``python -m
pytest`` for it: start-up of a fresh interpreter (imports in the run's environment, warnings printed at import),
stdout apart from stderr, the exit status of the real process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _pytest.pytester import RunResult as PytesterResult

from conformance.reference._service import ServiceSpec
from conformance.reference.stack import Stack, running_stack
from conformance.testing import RunResult
from tests.matrix.harness import (
    DROPPED_PREFIXES,
    HARNESS_ARGS,
    ForkedService,
    fork_pytest,
    forked_service,
    run_env,
    stop_fork_server,
)

_stop_registered: list[bool] = []


@dataclass(frozen=True)
class Forked:
    exit_code: int
    output: str  # stdout and stderr, interleaved as written

    @property
    def lines(self) -> list[str]:
        return self.output.splitlines()


def _stop_at_exit() -> None:
    if not _stop_registered:  # the fork server is stopped (and its runs' CPU accounted to us) when we exit
        # multiprocessing's own exit handler removes the directory of the fork server's socket: registered first,
        # it runs after ours (atexit runs the last registered first), which would otherwise find no socket to unlink
        import multiprocessing.util  # noqa: F401

        atexit.register(stop_fork_server)
        _stop_registered.append(True)


def forked_module(argv: Sequence[str], env: Mapping[str, str], log: Path) -> ForkedService:
    """``python -m MODULE ARGS`` (``argv`` = [MODULE, *ARGS]) forked from the fork server, which has imported most
    of what a Python server needs (the ``mcp`` SDK, starlette, uvicorn): exactly ``env``, both streams to ``log``,
    its own session and process group (what ``subprocess.Popen(start_new_session=True)`` gives; stop it by
    group), SIGTERM when the fork server dies."""
    _stop_at_exit()
    spec = ServiceSpec(name=argv[0], argv=[sys.executable, "-m", *argv], health_url="")
    handle = forked_service(spec, dict(env), log)
    assert isinstance(handle, ForkedService)
    return handle


@contextlib.contextmanager
def forked_stack(**options: Any) -> Iterator[Stack]:
    """``running_stack(**options)`` whose Python services are forked from the fork server (``forked_service``, as
    the matrix starts them: each still its own process group with its own log, answering its health check), for
    the tests that need a stack, not a proof of how the stack starts its processes (tests/reference/test_stack.py).
    The IdP (node) starts as the stack starts it."""
    _stop_at_exit()
    with running_stack(launcher=forked_service, **options) as stack:
        yield stack


def forked_pytest(
    args: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    drop: tuple[str, ...] = DROPPED_PREFIXES,
) -> Forked:
    """``pytest -p no:cacheprovider --assert=plain ARGS`` run in ``cwd`` with this environment less the variables
    starting with one of ``drop`` (by default CONFORMANCE_, PYTEST_XDIST_, PYTEST_CURRENT_TEST), plus ``env``."""
    _stop_at_exit()
    fd, name = tempfile.mkstemp(prefix="forked-pytest-", suffix=".txt")
    os.close(fd)
    output = Path(name)
    try:
        code = fork_pytest([*HARNESS_ARGS, *args], run_env(env, drop), cwd, output, timeout, f"pytest {list(args)}")
        return Forked(code, output.read_text(encoding="utf-8", errors="replace"))
    finally:
        output.unlink(missing_ok=True)


def runpytest_forked(pytester: pytest.Pytester, *args: str, env: Mapping[str, str] | None = None) -> PytesterResult:
    """What ``pytester.runpytest_subprocess(*args)`` gives, from a forked run in ``pytester.path`` (the output is
    all in ``outlines``; ``errlines`` is empty)."""
    basetemp = pytester.path / "forked-basetemp"  # as runpytest_subprocess gives its run
    run = forked_pytest([f"--basetemp={basetemp}", *args], pytester.path, env=env)
    return PytesterResult(run.exit_code, run.lines, [], 0.0)


def forked_harness(
    args: Sequence[str],
    report_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    cwd: Path | None = None,
) -> RunResult:
    """What ``conformance.testing.run_harness`` gives (stdout holds both streams, stderr is empty), from a forked
    run; the report must exist afterwards."""
    run = forked_pytest(["--report-dir", str(report_dir), *args], cwd or report_dir, env=env, timeout=timeout)
    report_path = report_dir / "report.json"
    if not report_path.is_file():
        raise AssertionError(f"no report written (exit {run.exit_code})\noutput:\n{run.output[-4000:]}")
    return RunResult(run.exit_code, run.output, "", json.loads(report_path.read_text(encoding="utf-8")))
