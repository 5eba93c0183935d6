#!/usr/bin/env python3
"""Plugin import and collection overhead of the bundled suites, or of the project's own test suite.

    .venv/bin/python benchmarks/collect_overhead.py [--runs 5]
    .venv/bin/python benchmarks/collect_overhead.py --tests [--runs 5] [--workers 3] [--root CHECKOUT] [--bytecode]

Without ``--tests``, times (wall clock, median of N runs) three commands in fresh processes:
  1. `python -c "import conformance.pytest.plugin"`                       import cost of the plugin
  2. `pytest --collect-only -q -p no:conformance` on an empty dir     pytest alone (baseline)
  3. `pytest --collect-only -q --target-url ... ` of all suites      pytest + plugin + bundled suites
and prints the top import-time entries of the plugin from `python -X importtime`.

With ``--tests``, what collecting the project's own tests costs (every xdist worker collects all of them
before it runs any), alternating the two commands, each run's wall and CPU (user + system of the whole process tree)
and the medians:
  1. `pytest tests --collect-only -q -n 0`                          one process collecting the suite
  2. `pytest tests -n WORKERS -k <nothing>`                          start to the first test: every worker collects
                                                                     all tests, then the selection leaves none to run
in ``--root`` (default: this checkout; give a second checkout to compare with another commit, run by this
interpreter). Imports compile from source when ``PYTHONDONTWRITEBYTECODE`` is set (it is printed): assertion
rewriting of the test modules and of every plugin distribution (Hypothesis...) included. ``--bytecode`` unsets it
and caches bytecode in a temporary ``PYTHONPYCACHEPREFIX`` (warmed by one untimed run) to show that share.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=False, capture_output=True)
    return time.perf_counter() - start


def tree_run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall, CPU of the whole process tree (this process is the children's subreaper), last line of output."""
    from suite_time import reap_orphans  # benchmarks/ is on sys.path (project_tests)

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - start
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return wall, cpu, lines[-1] if lines else f"exit {done.returncode}"


def project_tests(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from suite_time import become_subreaper

    become_subreaper()
    root = Path(args.root).resolve()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if args.bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = cache
        print(f"{root}, PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '(unset)')}", flush=True)
        pytest = [sys.executable, "-m", "pytest", "tests", "-p", "no:cacheprovider"]
        commands = {
            "collect, one process (-n 0)": [*pytest, "--collect-only", "-q", "-n", "0"],
            f"start to first test (-n {args.workers})": [*pytest, "-q", "-n", str(args.workers), "-k", "no_such_test"],
        }
        if args.bytecode:
            tree_run(commands["collect, one process (-n 0)"], root, env)
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for run in range(args.runs):
            for name, command in commands.items():
                wall, cpu, last = tree_run(command, root, env)
                seen[name].append((wall, cpu))
                print(f"  run {run + 1} {name:34s} {wall:5.1f} s wall {cpu:5.1f} s CPU  {last}", flush=True)
        for name, rows in seen.items():
            wall = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            print(f"median {name:34s} {wall:5.1f} s wall {cpu:5.1f} s CPU", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tests", action="store_true", help="the project's own test suite (see above)")
    parser.add_argument("--workers", type=int, default=3, help="with --tests: xdist workers (run.py test uses 3)")
    parser.add_argument("--root", default=str(ROOT), help="with --tests: the checkout whose tests are collected")
    parser.add_argument("--bytecode", action="store_true", help="with --tests: cache bytecode (see above)")
    args = parser.parse_args()
    if args.tests:
        project_tests(args)
        return
    py = sys.executable
    with tempfile.TemporaryDirectory() as empty:
        commands = {
            "import conformance.pytest.plugin": [py, "-c", "import conformance.pytest.plugin"],
            "pytest --collect-only (no plugin, empty dir)": [
                py,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-p",
                "no:conformance",
                "-p",
                "no:cacheprovider",
            ],
            "pytest --collect-only of the bundled suites": [
                py,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-p",
                "no:cacheprovider",
                "--target-url",
                "https://127.0.0.1:1/mcp",
                "--platform-url",
                "https://127.0.0.1:1",
                "--compression-url",
                "https://127.0.0.1:1",
                "--report-dir",
                empty + "/r",
            ],
        }
        for name, command in commands.items():
            times = [timed(command, empty) for _ in range(args.runs)]
            print(f"{name:50s} median {statistics.median(times) * 1000:7.0f} ms  (min {min(times) * 1000:.0f})")
        collected = (
            subprocess.run(
                commands["pytest --collect-only of the bundled suites"],
                cwd=empty,
                capture_output=True,
                text=True,
                check=False,
            )
            .stdout.strip()
            .splitlines()
        )
        print("collected:", collected[-1] if collected else "?")
        trace = subprocess.run(
            [py, "-X", "importtime", "-c", "import conformance.pytest.plugin"],
            capture_output=True,
            text=True,
            check=False,
        ).stderr.splitlines()
        rows = []
        for line in trace[1:]:
            parts = line.split("|")
            if len(parts) == 3:
                rows.append((int(parts[1]), parts[2].rstrip()))
        rows.sort(reverse=True)
        print("largest cumulative imports (us):")
        for cumulative, name in rows[:10]:
            print(f"  {cumulative:9d} {name}")


if __name__ == "__main__":
    main()
