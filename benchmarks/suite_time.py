"""Wall and CPU time of the project's own test suite, run exactly as CI runs it (at most 4 minutes on 2
cores).

    python3 benchmarks/suite_time.py [--runs N] [--record] [-- EXTRA PYTEST ARGS]
    python3 benchmarks/suite_time.py --slices [NAME ...] [--workers N] [-- EXTRA PYTEST ARGS]

Runs ``python3 run.py test`` (set-up is idempotent and not timed when it has nothing to do), prints one line per run
with the wall time, the CPU of the whole process tree (user + system: this process makes itself the child
subreaper, so servers and fork servers that outlive their parents are reaped and counted too) and the load average
before and after, since another job on the same cores slows the suite down; then the median. ``--record`` also
writes tests/durations.json, the seconds each unit of work took (tests/conftest.py hands out the costliest first).
Extra arguments go to pytest, e.g. ``-- tests/matrix`` or ``-- -n 0``.

``--slices`` times parts of the suite instead, one pytest session each, invoked as run.py invokes it (``-p
no:cacheprovider -p no:anyio -n <cores + 1>``; ``--workers`` overrides): the mutant matrix per service (its cases'
tests, footprints included, named by node id from tests/matrix/plan.py), the modules sharing the demo run, and the
rest of the suite by directory; a NAME that is a test path (``tests/test_fleet.py``) is a slice of its own. With
``--record`` the units the slices timed replace theirs in tests/durations.json. It prints a table (wall, CPU of the
process tree, tests, exit, load average before and after) and the sums: the slices' CPU over the cores estimates the
whole suite's wall time when the cores are its own (high by each slice's own start-up: workers, fork server; low by
the end of a run, where cores idle).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from _cores import cores  # a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    with contextlib.suppress(OSError, AttributeError):
        return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return False


def reap_orphans(grace_s: float = 30.0) -> None:
    """Wait for descendants re-parented to us (their CPU is added to RUSAGE_CHILDREN when reaped)."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.1)


def one_run(extra: list[str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    code = subprocess.call([sys.executable, str(ROOT / "run.py"), "test", *extra], cwd=ROOT)
    wall = time.perf_counter() - began
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def scope_seconds(junit: Path) -> dict[str, float]:
    """Seconds per unit of work (tests/conftest.py's xdist_scope) from a JUnit XML report."""
    sys.path.insert(0, str(ROOT))
    from tests.conftest import xdist_scope
    from tests.matrix.plan import plan

    groups = {case.id: case.group for case in plan()}
    seconds: dict[str, float] = {}
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "").replace(".", "/") + ".py"
        scope = xdist_scope(f"{module}::{case.get('name', '')}", groups)
        seconds[scope] = seconds.get(scope, 0.0) + float(case.get("time") or 0)
    return {scope: round(value, 1) for scope, value in sorted(seconds.items())}


MATRIX = "tests/matrix/test_matrix.py"
DIRECTORIES = ("tests/host", "tests/reference", "tests/suites", "tests/thirdparty")


def slice_args() -> dict[str, list[str]]:
    """Each slice's pytest arguments (test paths or node ids), in .venv: the matrix's cases come from its plan."""
    sys.path.insert(0, str(ROOT))
    from tests.conftest import SHARED_FIXTURE_SCOPES
    from tests.matrix.plan import plan
    from tests.matrix.test_matrix import AUTH_PROBED

    slices: dict[str, list[str]] = {}
    probed = {case.id for case in AUTH_PROBED}
    for case in plan():
        if case.mutant is None:
            continue
        ids = slices.setdefault(f"matrix {case.mutant.service}", [])
        ids.append(f"{MATRIX}::test_mutant_fails_exactly_its_rules[{case.id}]")
        if case.id in probed:
            ids.append(f"{MATRIX}::test_mutant_differs_in_exactly_its_defect[{case.id}]")
    demo = sorted({module for modules in SHARED_FIXTURE_SCOPES.values() for module in modules})
    slices["demo run and its readers"] = demo
    for directory in DIRECTORIES:
        slices[directory] = [directory, *(f"--ignore={m}" for m in demo if m.startswith(directory + "/"))]
    rest = ["tests", f"--ignore={MATRIX}", *(f"--ignore={m}" for m in demo), *(f"--ignore={d}" for d in DIRECTORIES)]
    slices["the rest (tests/*.py, report, workflows, matrix)"] = rest
    return slices


def time_slice(name: str, tests: list[str], workers: int, extra: list[str], log: Path) -> dict[str, object]:
    """One slice as run.py runs the suite: its wall, the CPU of its process tree, its tests' outcome line (its whole
    output to ``log``, e.g. what ``-- --durations=30`` printed)."""
    python = ROOT / ".venv" / "bin" / "python"
    command = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:anyio", "-q", "-n", str(workers)]
    load_before = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as run.py runs it
    done = subprocess.run([*command, *tests, *extra], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    outcome = lines[-1].strip("= ") if lines else f"no output: {done.stderr.strip()[-200:]}"
    return {
        "slice": name, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "exit": done.returncode,
        "outcome": outcome, "load": f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}",
    }  # fmt: skip


def record(junits: list[Path], merge: bool) -> None:
    """tests/durations.json from these JUnit reports (``merge``: over the recorded file, the units timed here
    replaced). The scopes come from tests/conftest.py, which imports the test dependencies: read them in .venv."""
    target = ROOT / "tests" / "durations.json"
    python = ROOT / ".venv" / "bin" / "python"
    recorded: dict[str, float] = json.loads(target.read_text(encoding="utf-8")) if merge and target.is_file() else {}
    for junit in junits:
        if junit.is_file():
            scopes = subprocess.run(
                [str(python), __file__, "--scopes-from", str(junit)], check=True, capture_output=True, text=True
            ).stdout
            recorded.update(json.loads(scopes))
    target.write_text(json.dumps(dict(sorted(recorded.items())), indent=1), encoding="utf-8")
    print(f"wrote {target}")


def run_slices(names: list[str], workers: int, extra: list[str], recording: bool) -> int:
    python = ROOT / ".venv" / "bin" / "python"
    listed = subprocess.run([str(python), __file__, "--slice-args"], check=True, capture_output=True, text=True)
    slices: dict[str, list[str]] = json.loads(listed.stdout)
    for name in names:  # a test path is a slice of its own
        if name.startswith("tests/") and (ROOT / name.partition("::")[0]).exists():
            slices[name] = [name]
    unknown = [n for n in names if not any(n in s for s in slices)]
    if unknown:
        print(f"no slice matches {unknown}; slices: {', '.join(slices)}", file=sys.stderr)
        return 2
    chosen = [s for s in slices if not names or any(n in s for n in names)]
    counted = "whole tree" if become_subreaper() else "waited-for children only"
    logs = Path(tempfile.mkdtemp(prefix="suite-slices-"))
    print(f"{len(chosen)} slice(s), -n {workers}, {os.cpu_count()} cores, CPU counted over the {counted}", flush=True)
    print(f"each slice's output: {logs}/<slice>.txt", flush=True)
    print(f"before: {cores()}", flush=True)
    print(f"{'slice':50} {'wall s':>7} {'CPU s':>7}  exit  load        outcome", flush=True)
    rows, worst = [], 0
    for name in chosen:
        log = logs / (re.sub(r"[^\w.-]+", "_", name).strip("_") + ".txt")
        junit = log.with_suffix(".xml")
        row = time_slice(name, slices[name], workers, [*extra, f"--junitxml={junit}"] if recording else extra, log)
        rows.append(row)
        worst = worst or int(str(row["exit"]))
        print(
            f"{name:50} {row['wall_s']:>7} {row['cpu_s']:>7}  {row['exit']:>4}  {row['load']:10}  {row['outcome']}",
            flush=True,
        )
    wall = sum(float(str(r["wall_s"])) for r in rows)
    cpu = sum(float(str(r["cpu_s"])) for r in rows)
    count = len(os.sched_getaffinity(0))
    print(f"{'sum':50} {wall:>7.1f} {cpu:>7.1f}  (CPU / {count} cores = {cpu / count:.1f} s)")
    print(f"after: {cores()}", flush=True)
    if recording:
        record(sorted(logs.glob("*.xml")), merge=True)
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--record", action="store_true", help="write tests/durations.json from the last run")
    parser.add_argument("--slices", nargs="*", metavar="NAME", help="time slices (all, or those whose name has NAME)")
    parser.add_argument("--workers", type=int, default=(os.cpu_count() or 1) + 1, help="-n of the slices' runs")
    parser.add_argument("--scopes-from", type=Path, help=argparse.SUPPRESS)  # used by --record, in .venv
    parser.add_argument("--slice-args", action="store_true", help=argparse.SUPPRESS)  # used by --slices, in .venv
    parser.add_argument("extra", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    if args.scopes_from:
        print(json.dumps(scope_seconds(args.scopes_from), indent=1))
        return 0
    if args.slice_args:
        print(json.dumps(slice_args()))
        return 0
    if args.slices is not None:
        return run_slices(args.slices, args.workers, args.extra, args.record)
    counted = "whole tree" if become_subreaper() else "waited-for children only"
    walls: list[float] = []
    worst = 0
    junit = Path(tempfile.mkdtemp(prefix="suite-time-")) / "junit.xml"
    extra = [*args.extra, f"--junitxml={junit}"] if args.record else args.extra
    for run in range(1, args.runs + 1):
        print(f"before run {run}: {cores()}", flush=True)
        load_before = os.getloadavg()[0]
        wall, cpu, code = one_run(extra)
        walls.append(wall)
        worst = worst or code
        print(
            f"run {run}: {wall:.1f} s wall ({wall / 60:.2f} min), {cpu:.1f} s CPU ({counted}), exit {code}, "
            f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            flush=True,
        )
        print(f"after run {run}: {cores()}", flush=True)
    print(f"median {statistics.median(walls):.1f} s over {len(walls)} run(s); goal: 240 s on 2 cores")
    if args.record:
        record([junit], merge=False)
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
