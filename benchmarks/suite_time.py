"""Wall time of the project's own test suite, run exactly as CI runs it (issue 19: at most 4 minutes on 2 cores).

    python3 benchmarks/suite_time.py [--runs N] [-- EXTRA PYTEST ARGS]

Runs ``python3 run.py test`` (set-up is idempotent and not timed when it has nothing to do), prints one line per run
with the wall time, the CPU the process tree reported (user + system of waited-for descendants: a lower bound, the
matrix's fork server is not waited for) and the load average before and after, since another job on the same cores
slows the suite down; then the median. Extra arguments go to pytest, e.g. ``-- tests/matrix`` or ``-- -n 0``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(extra: list[str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    code = subprocess.call([sys.executable, str(ROOT / "run.py"), "test", *extra], cwd=ROOT)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("extra", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    walls: list[float] = []
    worst = 0
    for run in range(1, args.runs + 1):
        load_before = os.getloadavg()[0]
        wall, cpu, code = one_run(args.extra)
        walls.append(wall)
        worst = worst or code
        print(
            f"run {run}: {wall:.1f} s wall ({wall / 60:.2f} min), {cpu:.1f} s CPU reported, exit {code}, "
            f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            flush=True,
        )
    print(f"median {statistics.median(walls):.1f} s over {len(walls)} run(s); goal: 240 s on 2 cores")
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
