"""Wall time of ``conformance demo`` (goal: <= 10 s on 2 cores, stack start <= 1.5 s), split into the
stack's start, the pytest run and the stop, median of N runs.

    .venv/bin/python benchmarks/demo_time.py [--runs 3] [-- extra demo arguments]

The split is read from the demo's own output: it prints ``# reference stack up in ...`` once the stack is healthy
(stack start = CLI start-up + services healthy; a demo that starts pytest only then prints ``$ python -m pytest ...``
at that moment instead, and that line is the mark), pytest's last line ends the run, the process exit ends the
stop. pytest's own start overlaps the stack's where the demo starts it as soon as the services are launched.
Figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _cores import cores  # a sibling script, not a package

STACK_UP = "# reference stack up"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(extra: list[str], report_dir: Path) -> tuple[float, float, float, float, int, float]:
    command = [sys.executable, "-m", "conformance", "demo", "--report-dir", str(report_dir), *extra]
    cpu0 = children_cpu()
    started = time.perf_counter()
    command_line = stack_up = None
    last_line = started
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.perf_counter()
            if line.startswith("$ ") and command_line is None:
                command_line = now
            if line.startswith(STACK_UP) and stack_up is None:
                stack_up = now
            last_line = now
        code = proc.wait()
    pytest_began = stack_up or command_line or started
    ended = time.perf_counter()
    # CPU of the demo and every process it waited for: pytest and the stack's services.
    cpu = children_cpu() - cpu0
    return ended - started, pytest_began - started, last_line - pytest_began, ended - last_line, code, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="extra `conformance demo` arguments (after --)")
    args = parser.parse_args()
    rows = []
    print(f"before: {cores()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            wall, stack, tests, stop, code, cpu = one_run(args.extra, Path(tmp) / f"run{run}")
            rows.append((wall, stack, tests, stop, cpu))
            print(
                f"run {run + 1}: exit {code}, wall {wall:.1f} s = stack start {stack:.1f} s + pytest {tests:.1f} s"
                f" + stop {stop:.1f} s; CPU (user+sys, all processes) {cpu:.1f} s",
                flush=True,
            )
    wall, stack, tests, stop, cpu = (statistics.median(r[i] for r in rows) for i in range(5))
    print(
        f"median of {len(rows)}: wall {wall:.1f} s (goal <= 10 s), stack start {stack:.1f} s (goal <= 1.5 s),"
        f" pytest {tests:.1f} s, stop {stop:.1f} s, CPU {cpu:.1f} s"
    )
    print(f"after: {cores()}")


if __name__ == "__main__":
    main()
