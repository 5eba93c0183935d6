"""Where the CPU of the project's own tests goes, by test and by module: one ``-n 0`` session over the given test
paths with the ``_test_cpu`` plugin (the CPU of the session's whole process tree in each test's set-up, call and
teardown, a module's shared fixtures counted against its first test), then the costliest tests and the modules' sums.

    .venv/bin/python benchmarks/test_cpu.py [--top 30] [--venv .venv-lowest] [--] TEST_PATH... [PYTEST ARGS...]

The session's own start (imports, collection) is in no test: the table's total is below the session's CPU, printed
beside it. Waiting (a sleep, a rate-limit window) costs no CPU and shows as wall only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_time import become_subreaper, reap_orphans

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--venv", default=".venv", help="the virtualenv to run in (.venv-lowest: the lowest pass)")
    parser.add_argument("pytest_args", nargs="*")
    args, more = parser.parse_known_args()
    args.pytest_args += more
    become_subreaper()
    out = Path(tempfile.mkdtemp(prefix="test-cpu-")) / "tests.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as run.py runs the suite
    env |= {"BENCH_TEST_CPU": str(out), "PYTHONPATH": str(ROOT / "benchmarks")}
    command = [str(ROOT / args.venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:anyio"]
    command += ["-p", "_test_cpu", "-n", "0", "-q", *args.pytest_args]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    session_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.is_file() else []
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    print(f"session: {wall:.1f} s wall, {session_cpu:.1f} s CPU, load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"outcome: {lines[-1] if lines else done.stderr[-300:]}")
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for row in rows:
        module = modules[row["test"].partition("::")[0]]
        module[0] += row["cpu_s"]
        module[1] += row["wall_s"]
        module[2] += 1
    print(f"\n{'CPU s':>7} {'wall s':>7} {'tests':>5}  module")
    for name, (cpu, wall_s, count) in sorted(modules.items(), key=lambda kv: -kv[1][0]):
        print(f"{cpu:7.1f} {wall_s:7.1f} {count:5d}  {name}")
    print(f"{sum(m[0] for m in modules.values()):7.1f} in the tests\n\n{'CPU s':>7} {'wall s':>7}  test")
    for row in sorted(rows, key=lambda r: -r["cpu_s"])[: args.top]:
        print(f"{row['cpu_s']:7.2f} {row['wall_s']:7.2f}  {row['test']}")
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
