"""The matrix fixture: every selected case run once per session, several at a time, results shared by the tests."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.testing import RunResult
from tests.matrix.harness import run_harness, stop_fork_server
from tests.matrix.plan import Case
from tests.matrix.stacks import STACKS, SharedServices, Started
from tests.reference.auth_probe import OWN_STACK, observe, observes

RUN_TIMEOUT_S = 600


def workers() -> int:
    """Runs in flight in this process: about 1.5 per core over all xdist workers (a run waits on its stack for
    part of its time); ``MATRIX_WORKERS`` overrides."""
    if os.environ.get("MATRIX_WORKERS"):
        return max(1, int(os.environ["MATRIX_WORKERS"]))
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(2, math.ceil(1.5 * (os.cpu_count() or 2) / processes))


@dataclass(frozen=True)
class CaseRun:
    """What a case yields: its harness run and, for an IdP or proxy mutant, what observe() saw on its stack (or the
    exception it raised, which the footprint test re-raises; the harness run still stands on its own)."""

    result: RunResult
    observation: dict[str, Any] | Exception | None = None
    service_logs: str = ""  # the tail of each service's log of the run's stack, for a failure's message


def service_logs(started: Started, lines: int = 25) -> str:
    """The tail of the log of each process of a case's reference stack (the IdP's errors, a service's traceback):
    what a case's failure message shows beside the run's own output, read before the stack's directory goes."""
    if started.stack is None:
        return ""
    return "\n".join(
        f"--- {proc.spec.name} log (last {lines} lines) ---\n{proc.log_tail(lines)}" for proc in started.stack.processes
    )


def observe_stack(started: Started) -> dict[str, Any] | Exception:
    """tests/reference/auth_probe.observe() on a case's stack, or what it raised."""
    try:
        if started.stack is None:
            raise AssertionError("an IdP or proxy mutant's case has no reference stack to observe")
        return observe(started.stack)
    except Exception as exc:
        return exc


def run_case(case: Case, root: Path, shared: SharedServices) -> CaseRun:
    """Start the case's stack, run its suites once; a second try only when the stack itself could not start.

    An IdP or proxy mutant's stack also serves tests/reference/auth_probe.observe(), once, BEFORE the harness run
    (so that its footprint does not start the same stack again). Neither disturbs the other: observe() uses fresh
    ScriptedClients, each registering a client of its own at the IdP (its own login session, codes, tokens, assertion
    jtis) and CIMD documents on a loopback origin of its own, and never calls the tool server; the harness run
    registers its own clients and identities. Every reference and mutant behaviour keeps its state per client, code,
    assertion or document URL (idp-dcr-client-forgotten forgets a client that got a token, idp-code-reuse and
    idp-code-consume-race one code, idp-jti-replay one assertion), so observe() sees what it saw on a fresh stack of
    its own, and the run meets the IdP as if alone (the flows of one finished before the other starts). A mutant
    whose state is shared by every client (auth_probe.OWN_STACK) is observed on a second stack after the run."""
    start = STACKS[case.target]
    probe = observes(case)
    own_stack = probe and case.id in OWN_STACK
    for attempt in (1, 2):
        started = False
        try:
            with start(case, root / "stacks" / f"{case.id}-{attempt}", shared) as running:
                started = True
                observation = observe_stack(running) if probe and not own_stack else None
                report_dir = root / "reports" / f"{case.id}-{attempt}"
                report_dir.mkdir(parents=True)
                # report.json is what the tests read; report.html and report.har would be written for no one.
                args = ["--suite", ",".join(case.suites), "-q", "--report-formats", "json"]
                result = run_harness(args, report_dir, env=run_settings(running), timeout=RUN_TIMEOUT_S)
                logs = service_logs(running)
                host_problems = shared.idp_host_problems()
                if host_problems:
                    logs += f"\n--- the IdP host's uncaught errors (every IdP of this worker) ---\n{host_problems}"
            if own_stack:
                observation = observe_alone(case, root, shared)
            return CaseRun(result, observation, logs)
        except Exception:
            if started or attempt == 2:
                raise
    raise AssertionError("unreachable")


def run_settings(started: Started) -> dict[str, str]:
    """The harness run's environment: the stack's settings and, for a stack served over TLS, OpenSSL's default trust
    store narrowed to the stack's own CA (SSL_CERT_FILE). A run only ever talks to its loopback stack, which that CA
    signs and which it trusts anyway (CONFORMANCE_CA_BUNDLE); the system store would make every TLS context the run
    builds parse every certificate of the system store, none of which it uses (two contexts per auth run, one per
    profile run).
    ``MATRIX_MCP_ERA`` (auto, legacy, modern) is the run's ``--mcp-era``: the reference tool server speaks both eras,
    so by default its cases run in the modern one, and ``MATRIX_MCP_ERA=legacy`` runs them in the legacy one."""
    settings = dict(started.settings)
    if os.environ.get("MATRIX_MCP_ERA"):  # the tool server's cases in that MCP era (default auto: the modern one)
        settings["CONFORMANCE_MCP_ERA"] = os.environ["MATRIX_MCP_ERA"]
    ca_bundle = settings.get("CONFORMANCE_CA_BUNDLE")
    return {**settings, "SSL_CERT_FILE": ca_bundle} if ca_bundle else settings


def observe_alone(case: Case, root: Path, shared: SharedServices) -> dict[str, Any] | Exception:
    """observe() on a stack of the case's own, started for it alone (auth_probe.OWN_STACK)."""
    try:
        with STACKS[case.target](case, root / "stacks" / f"{case.id}-observed", shared) as running:
            return observe_stack(running)
    except Exception as exc:  # the stack did not start: the footprint test says so, the harness run stands
        return exc


class Matrix:
    """Runs cases on a thread pool. The first request for a case submits every selected case of its xdist group
    (without xdist: every selected case), so that a worker keeps its pool full."""

    def __init__(self, root: Path, selected: list[Case]) -> None:
        self._root = root
        self._selected = selected
        self._prefetch_all = "PYTEST_XDIST_WORKER" not in os.environ
        self._pool = ThreadPoolExecutor(workers(), thread_name_prefix="matrix")
        self._shared = SharedServices(root, in_flight=workers())
        self._futures: dict[str, Future[CaseRun]] = {}
        self._lock = threading.Lock()

    def result(self, case: Case) -> RunResult:
        return self._run(case).result

    def service_logs(self, case: Case) -> str:
        """The tails of the case's stack's service logs (empty where its services run in this process)."""
        return self._run(case).service_logs

    def observation(self, case: Case) -> dict[str, Any]:
        """What observe() saw on the stack of ``case`` (an IdP or proxy mutant); raises what it raised."""
        observed = self._run(case).observation
        if observed is None:
            raise AssertionError(f"{case.id}: the matrix does not observe this case's stack")
        if isinstance(observed, Exception):
            raise observed
        return observed

    def _run(self, case: Case) -> CaseRun:
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
