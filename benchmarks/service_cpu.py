"""Each reference service's CPU for one certification of its suites: a stack of SERVICES is started once, then
``pytest --suite SUITES`` is run against it RUNS times (each a fresh process, as ``conformance demo`` runs one);
each service's CPU (user + system, from /proc, Linux only) is read before and after every run.

    .venv/bin/python benchmarks/service_cpu.py [--services toolserver] [--suites auth,profile] [--runs 4]

The first run meets services that have just started (a cold JIT, first imports, first connections): it is
printed but left out of the medians, which are what a warm service spends per certification (what the mutant
matrix's IdPs, one warm Node process for many stacks, come nearer to). Each run's verdict is printed too, so that a
change that makes a service cheaper by answering differently shows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.reference.stack import running_stack

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", default="toolserver", help="service packages, comma-separated")
    parser.add_argument("--suites", default="auth,profile")
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    per_service: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, running_stack(services=args.services.split(",")) as stack:
        env = {**base, **stack.settings}
        pids = {p.spec.name: p.process.pid for p in stack.processes}
        for run in range(args.runs):
            before = {name: process_cpu(pid) for name, pid in pids.items()}
            report_dir = Path(tmp) / f"run{run}"
            command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--suite", args.suites]
            command += ["--report-dir", str(report_dir), "--report-formats", "json"]
            subprocess.run(command, env=env, cwd=tmp, capture_output=True, check=False)
            spent = {name: process_cpu(pid) - before[name] for name, pid in pids.items()}
            report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
            statuses = [r["status"] for r in report["results"]]
            counts = dict(sorted((s, statuses.count(s)) for s in set(statuses)))
            print(f"run {run + 1}: " + ", ".join(f"{n} {c:.2f} s" for n, c in spent.items()) + f"; {counts}")
            if run:
                for name, cpu in spent.items():
                    per_service.setdefault(name, []).append(cpu)
    for name, values in per_service.items():
        print(f"{name}: median {statistics.median(values):.3f} s CPU per run (warm runs: {len(values)})")


if __name__ == "__main__":
    main()
