"""The matrix fixture: every selected case run once per session, several at a time, results shared by the tests."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.testing import RunResult
from tests.matrix.harness import run_harness, stop_fork_server
from tests.matrix.plan import Case
from tests.matrix.stacks import STACKS, SharedServices

RUN_TIMEOUT_S = 600


def workers() -> int:
    """Runs in flight in this process: about 1.5 per core over all xdist workers (a run waits on its stack for
    part of its time); ``MATRIX_WORKERS`` overrides."""
    if os.environ.get("MATRIX_WORKERS"):
        return max(1, int(os.environ["MATRIX_WORKERS"]))
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(2, math.ceil(1.5 * (os.cpu_count() or 2) / processes))


def run_case(case: Case, root: Path, shared: SharedServices) -> RunResult:
    """Start the case's stack, run its suites once; a second try only when the stack itself could not start."""
    start = STACKS[case.target]
    for attempt in (1, 2):
        started = False
        try:
            with start(case, root / "stacks" / f"{case.id}-{attempt}", shared) as settings:
                started = True
                report_dir = root / "reports" / f"{case.id}-{attempt}"
                report_dir.mkdir(parents=True)
                args = ["--suite", ",".join(case.suites), "-q"]
                return run_harness(args, report_dir, env=settings, timeout=RUN_TIMEOUT_S)
        except Exception:
            if started or attempt == 2:
                raise
    raise AssertionError("unreachable")


class Matrix:
    """Runs cases on a thread pool. The first request for a case submits every selected case of its xdist group
    (without xdist: every selected case), so that a worker keeps its pool full."""

    def __init__(self, root: Path, selected: list[Case]) -> None:
        self._root = root
        self._selected = selected
        self._prefetch_all = "PYTEST_XDIST_WORKER" not in os.environ
        self._pool = ThreadPoolExecutor(workers(), thread_name_prefix="matrix")
        self._shared = SharedServices(root)
        self._futures: dict[str, Future[RunResult]] = {}
        self._lock = threading.Lock()

    def result(self, case: Case) -> RunResult:
        with self._lock:
            if case.id not in self._futures:
                batch = [c for c in self._selected if self._prefetch_all or c.group == case.group]
                batch = list({c.id: c for c in [case, *batch] if c.id not in self._futures}.values())
                self._shared.prepare(batch)  # in this (the main) thread: shared services outlive the pool's runs
                for c in batch:
                    self._futures[c.id] = self._pool.submit(run_case, c, self._root, self._shared)
        return self._futures[case.id].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._shared.close()
        stop_fork_server()


def selected_cases(session: pytest.Session) -> list[Case]:
    """The cases the collected tests ask about (``-k idp-code-reuse`` runs just that one), in collection order."""
    seen: dict[str, Case] = {}
    for item in session.items:
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        if isinstance(case, Case):
            seen.setdefault(case.id, case)
    return list(seen.values())


@pytest.fixture(scope="session")
def matrix(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    runs = Matrix(tmp_path_factory.mktemp("matrix"), selected_cases(request.session))
    try:
        yield runs
    finally:
        runs.close()
