"""Where a certification's wall time goes, and two checkouts compared on it ("the harness waits on servers,
not on itself"). Per suite group, against one embedded reference stack started from this checkout, each run's wall
time is split into the harness's CPU (the pytest process tree), the services' CPU over the same run, the waits the
target asked for (its rate limits: ``throttle.waited_s`` of report.json) and the rest: time nobody computed and no
target asked for -- the harness waiting on itself (poll intervals, sleeps, stalls), plus loopback latency and, on a
busy machine, waiting for a core.

    .venv/bin/python benchmarks/wait_ab.py [BASE_CHECKOUT] [--rounds 5]
        [--suites auth,profile platform,campaigns compression]

With BASE_CHECKOUT (e.g. ``git worktree add /tmp/base <commit>``), the runs alternate between it and this checkout
(each run puts its checkout first on PYTHONPATH) and the medians of both are printed; without it, this checkout
alone. Medians of alternating runs: the machine's load moves both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.reference.stack import running_stack

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness_cpu import children_cpu, group_cpu  # a sibling script, not a package

HERE = Path(__file__).resolve().parent
FIGURES = ("wall", "harness CPU", "services CPU", "target-asked waits", "rest")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, nargs="?")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--suites", nargs="*", default=["auth,profile", "platform,campaigns", "compression"])
    args = parser.parse_args()
    trees = {"this": HERE.parent} | ({"base": args.base.resolve()} if args.base else {})
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    rows: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    with tempfile.TemporaryDirectory() as tmp, running_stack() as stack:
        pgids = [os.getpgid(p.process.pid) for p in stack.processes]
        for round_ in range(args.rounds):
            for suites in args.suites:
                order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
                for name, tree in order:
                    report_dir = Path(tmp) / f"report-{name}-{suites}-{round_}"
                    env = {**env0, **stack.settings, "PYTHONPATH": str(tree)}
                    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--suite", suites]
                    cpu0, served0, started = children_cpu(), group_cpu(pgids), time.perf_counter()
                    subprocess.run([*command, "--report-dir", str(report_dir)], env=env, cwd=tmp, capture_output=True)
                    wall = time.perf_counter() - started
                    cpu, served = children_cpu() - cpu0, group_cpu(pgids) - served0
                    report = json.loads((report_dir / "report.json").read_text())
                    asked = float(report.get("throttle", {}).get("waited_s", 0.0))
                    figures = (wall, cpu, served, asked, wall - cpu - served - asked)
                    rows.setdefault((suites, name), []).append(figures)
                    shown = ", ".join(f"{label} {value:.2f}" for label, value in zip(FIGURES, figures, strict=True))
                    print(f"round {round_ + 1} {suites} {name}: {shown}; {report['verdict']['reason']}", flush=True)
    print(f"== medians of {args.rounds} runs (seconds)")
    for (suites, name), figures in rows.items():
        medians = [statistics.median(f[i] for f in figures) for i in range(len(FIGURES))]
        shown = ", ".join(f"{label} {value:.2f}" for label, value in zip(FIGURES, medians, strict=True))
        print(f"{suites:20} {name:5} ({trees[name]}): {shown}")


if __name__ == "__main__":
    main()
