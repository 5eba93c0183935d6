"""Wall and CPU time of the mutant matrix alone (tests/matrix), run as ``python3 run.py test`` runs it: the same
interpreter, ``-p no:cacheprovider`` and ``-n <cores + 1>`` xdist workers.

    .venv/bin/python benchmarks/matrix_time.py [--runs N] [-- EXTRA PYTEST ARGS]

``benchmarks/suite_time.py -- tests/matrix`` cannot time the matrix alone: run.py always passes ``tests`` too, so
pytest collects the whole suite. Extra arguments go to pytest, e.g. ``-- -n 0 -k 'ts-skip-scope or idp-code-reuse'``
(with ``MATRIX_WORKERS=1`` in the environment, the difference between two ``-k`` subsets is the marginal cost of a
case). Prints one line per run (CPU of the whole process tree, as suite_time.py counts it) and the medians.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_time import become_subreaper, reap_orphans  # a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / ".venv" / "bin" / "python"


def one_run(extra: list[str]) -> tuple[float, float, int]:
    workers = str((os.cpu_count() or 1) + 1)
    args = [str(PY), "-m", "pytest", "tests/matrix", "-q", "-p", "no:cacheprovider", "-n", workers, *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    code = subprocess.call(args, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("extra", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    counted = "whole tree" if become_subreaper() else "waited-for children only"
    walls, cpus, worst = [], [], 0
    for run in range(1, args.runs + 1):
        load = os.getloadavg()[0]
        wall, cpu, code = one_run(args.extra)
        walls.append(wall)
        cpus.append(cpu)
        worst = worst or code
        print(
            f"run {run}: {wall:.1f} s wall, {cpu:.1f} s CPU ({counted}), exit {code}, "
            f"load average {load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            flush=True,
        )
    print(f"median {statistics.median(walls):.1f} s wall, {statistics.median(cpus):.1f} s CPU over {len(walls)} run(s)")
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
