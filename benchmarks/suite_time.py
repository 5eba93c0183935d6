"""Wall and CPU time of the project's own test suite, run exactly as CI runs it (at most 4 minutes on 2
cores).

    python3 benchmarks/suite_time.py [--runs N] [--record] [-- EXTRA PYTEST ARGS]

Runs ``python3 run.py test`` (set-up is idempotent and not timed when it has nothing to do), prints one line per run
with the wall time, the CPU of the whole process tree (user + system: this process makes itself the child
subreaper, so servers and fork servers that outlive their parents are reaped and counted too) and the load average
before and after, since another job on the same cores slows the suite down; then the median. ``--record`` also
writes tests/durations.json, the seconds each unit of work took (tests/conftest.py hands out the costliest first).
Extra arguments go to pytest, e.g. ``-- tests/matrix`` or ``-- -n 0``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--record", action="store_true", help="write tests/durations.json from the last run")
    parser.add_argument("--scopes-from", type=Path, help=argparse.SUPPRESS)  # used by --record, in .venv
    parser.add_argument("extra", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    if args.scopes_from:
        print(json.dumps(scope_seconds(args.scopes_from), indent=1))
        return 0
    counted = "whole tree" if become_subreaper() else "waited-for children only"
    walls: list[float] = []
    worst = 0
    junit = Path(tempfile.mkdtemp(prefix="suite-time-")) / "junit.xml"
    extra = [*args.extra, f"--junitxml={junit}"] if args.record else args.extra
    for run in range(1, args.runs + 1):
        load_before = os.getloadavg()[0]
        wall, cpu, code = one_run(extra)
        walls.append(wall)
        worst = worst or code
        print(
            f"run {run}: {wall:.1f} s wall ({wall / 60:.2f} min), {cpu:.1f} s CPU ({counted}), exit {code}, "
            f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            flush=True,
        )
    print(f"median {statistics.median(walls):.1f} s over {len(walls)} run(s); goal: 240 s on 2 cores")
    if args.record and junit.is_file():
        target = ROOT / "tests" / "durations.json"
        # The scopes come from tests/conftest.py, which imports the test dependencies: read them in .venv.
        python = ROOT / ".venv" / "bin" / "python"
        scopes = subprocess.run(
            [str(python), __file__, "--scopes-from", str(junit)], check=True, capture_output=True, text=True
        ).stdout
        target.write_text(scopes, encoding="utf-8")
        print(f"wrote {target}")
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
