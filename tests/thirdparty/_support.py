"""Shared plumbing of the third-party target tests: loopback PKI, processes that always stop, a harness run as a
vendor would start it, and pinned verdict tables."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme

from conformance.core.rules import RULES
from conformance.testing import explain
from tests._forked import forked_module, forked_pytest
from tests.matrix.harness import ForkedService

HERE = Path(__file__).resolve().parent
TEST_USER, TEST_PASSWORD = "vendor.tester@example.com", "correct horse battery staple"


@dataclass(frozen=True)
class Pki:
    ca: Path
    cert: Path
    key: Path


def make_pki(directory: Path) -> Pki:
    """A throwaway CA and one certificate for 127.0.0.1/localhost (targets, and the harness's CIMD publisher)."""
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    pki = Pki(directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    ca.cert_pem.write_to_path(str(pki.ca))
    leaf.cert_chain_pems[0].write_to_path(str(pki.cert))
    leaf.private_key_pem.write_to_path(str(pki.key))
    return pki


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepting(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


@contextlib.contextmanager
def running(
    argv: list[str],
    *,
    ports: list[int],
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    module: str | None = None,
) -> Iterator[subprocess.Popen[bytes] | ForkedService]:
    """Start ``argv`` in its own process group, wait until every port accepts, and always stop the group. With
    ``module`` (``argv`` is ``[sys.executable, path of that module, *ARGS]``), ``python -m MODULE ARGS`` is forked
    from the preloaded fork server instead (tests/_forked.py): the same program, without paying an interpreter's
    start-up and the imports of the ``mcp`` SDK, starlette and uvicorn each time."""
    merged = {**os.environ, **(env or {})}
    process: subprocess.Popen[bytes] | ForkedService
    if module is not None:
        assert argv[0] == sys.executable and argv[1].endswith(module.replace(".", "/") + ".py"), (argv, module)
        process = forked_module([module, *argv[2:]], merged, log)
    else:
        with log.open("wb") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=merged, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while not all(_accepting(p) for p in ports):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{argv[:2]} did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@dataclass(frozen=True)
class HarnessRun:
    exit_code: int
    report: dict[str, Any]
    output: str

    def verdicts(self) -> dict[str, str]:
        return {r["rule"]: r["status"] for r in self.report["results"] if r["rule"].startswith(("AUTH-", "PROF-"))}

    def explain(self, rules: list[str]) -> str:
        lines = [
            f"{r['rule']}: {r['status']} | {r.get('message', '')[:300]}"
            for r in self.report["results"]
            if r["rule"] in rules
        ]
        return "\n".join(lines)


def run_harness(workdir: Path, args: list[str], env: Mapping[str, str] | None = None) -> HarnessRun:
    """``pytest --suite auth,profile ARGS`` from an empty directory, as a vendor runs the installed plugin: the
    bundled suites, settings from the command line and the test account from the environment. The run is forked
    from the preloaded fork server (tests/_forked.py): what is judged here is the verdicts, not the interpreter's
    start-up."""
    workdir.mkdir(parents=True, exist_ok=True)
    report_dir = workdir / "reports"
    account = {"CONFORMANCE_TEST_USER": TEST_USER, "CONFORMANCE_TEST_PASSWORD": TEST_PASSWORD, **(env or {})}
    args = ["-q", "--suite", "auth,profile", "--report-dir", str(report_dir), *args]
    done = forked_pytest(args, workdir, env=account, timeout=600, drop=("CONFORMANCE_", "PYTEST_"))
    report_file = report_dir / "report.json"
    if not report_file.is_file():
        raise AssertionError(f"the harness wrote no report (exit {done.exit_code}):\n{done.output[-4000:]}")
    return HarnessRun(done.exit_code, json.loads(report_file.read_text()), done.output)


# -- pinned verdict tables --------------------------------------------------------------------------------------

AUTH_PROFILE_RULES = [r.id for r in RULES.values() if r.suite in ("auth", "profile")]


@dataclass(frozen=True)
class Verdict:
    """The pinned status of one rule on one target configuration, with why (quoted from the contract or the RFC
    for every non-pass). ``known_wrong`` names the class of false verdict that still makes it wrong."""

    status: str
    reason: str
    known_wrong: str = ""
    # A row the harness decides wrongly today, awaiting its fix: ``status`` is what the harness should conclude,
    # ``today`` what it concludes now, ``awaits`` the harness behaviour to fix. The test pins ``today`` (so the fix,
    # which makes the row ``status``, fails it until the row drops ``awaits``: a strict expected failure).
    awaits: str = ""
    today: str = ""

    def __post_init__(self) -> None:
        assert bool(self.awaits) == bool(self.today), "a row awaiting a harness fix names both awaits and today"

    @property
    def pinned_status(self) -> str:
        return self.today or self.status


def passed() -> Verdict:
    return Verdict("passed", "")


def table(
    non_pass: Mapping[str, Verdict], *, rest: Verdict | None = None, passes: tuple[str, ...] = ()
) -> dict[str, Verdict]:
    """Every auth and profile rule: as listed in ``non_pass``; the others ``passed``, or, with ``rest``, the others
    ``rest`` except those named in ``passes`` (for a run that a failure blocks from some rule on)."""
    unknown = (set(non_pass) | set(passes)) - set(AUTH_PROFILE_RULES)
    assert not unknown, f"not auth/profile rules: {sorted(unknown)}"
    every = dict(non_pass)
    if rest is not None:
        every.update({r: rest for r in AUTH_PROFILE_RULES if r not in non_pass and r not in passes})
    for rule, verdict in every.items():
        assert verdict.reason.strip(), f"{rule}: a listed verdict needs its reason"
        assert verdict.status != "passed" or verdict.known_wrong or verdict.awaits, (
            f"{rule}: list a pass only when it is known wrong or awaits a harness fix"
        )
    return {rule: every.get(rule, passed()) for rule in AUTH_PROFILE_RULES}


@dataclass(frozen=True)
class Pinned:
    """A target configuration's pinned verdict table and overall verdict (report.json ``verdict.status``)."""

    rules: Mapping[str, Verdict]
    overall: str
    overall_known_wrong: str = ""
    overall_today: str = ""  # the overall verdict today while rows await harness fixes (see Verdict.awaits)


def assert_spoken(run: HarnessRun, spoken: list[str]) -> None:
    """The run spoke these MCP eras; else what it decided instead (a run that reached no tool server spoke none)."""
    actual = run.report["config"]["mcp_era_spoken"]
    assert actual == spoken, f"MCP eras spoken {actual}, wanted {spoken}\n{explain(run.report, run.output)}"


def assert_pinned(run: HarnessRun, pinned: Pinned) -> None:
    assert_verdicts(run, pinned.rules)
    status = run.report["verdict"]["status"]
    overall = pinned.overall_today or pinned.overall
    assert status == overall, f"overall verdict pinned {overall}, now {status}: {run.report['verdict']}"
    assert (run.exit_code == 0) == (status in ("ACCEPTED", "PASSED LOCALLY")), f"exit {run.exit_code} for {status}"


def assert_verdicts(run: HarnessRun, expected: Mapping[str, Verdict]) -> None:
    actual = run.verdicts()
    wanted = {rule: v.pinned_status for rule, v in expected.items()}
    changed = sorted(r for r in set(actual) | set(wanted) if actual.get(r) != wanted.get(r))
    detail = [f"{r}: pinned {wanted.get(r)}, now {actual.get(r)}" for r in changed]
    fixed = [
        f"{r}: now {actual.get(r)} as it should be (the harness fix for '{expected[r].awaits}' landed): drop its "
        "awaits/today"
        for r in changed
        if r in expected and expected[r].awaits and actual.get(r) == expected[r].status
    ]
    detail += fixed
    assert not changed, "verdicts changed:\n" + "\n".join(detail) + "\n\n" + run.explain(changed) + run.output[-1500:]
