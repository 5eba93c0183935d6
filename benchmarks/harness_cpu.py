"""The harness's own share of a certification: per suite group, against one embedded reference stack
(what ``conformance up`` starts), the CPU time of the pytest process against its wall time, the services' CPU over
the same run, the time before the first check and the wall time per check after it.

    .venv/bin/python benchmarks/harness_cpu.py [--repeat 3] [--suites auth,profile platform,campaigns compression]

Each run is a fresh ``python -m pytest --suite ...`` process, as ``conformance demo`` starts it. Harness CPU is
``resource.getrusage(RUSAGE_CHILDREN)`` around that process (the services are still running, so never counted
there); the services' CPU is read from /proc for each service's process group (Linux). Goals: harness
CPU <= 30 % of wall, <= 0.8 s before the first check, per-check time below 16 ms. Figures depend on the machine's
load: run it on an idle machine to compare with the goals.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.reference.stack import running_stack

HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")


def group_cpu(pgids: list[int]) -> float:
    """CPU seconds (user + system) of every live process in these process groups."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) in pgids:  # fields after "(comm)": state ppid pgrp ...; utime stime are 12, 13
            total += int(fields[11]) + int(fields[12])
    return total / TICK


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--suites", nargs="*", default=["auth,profile", "platform,campaigns", "compression"])
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), base.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp, running_stack() as stack:
        pgids = [os.getpgid(p.process.pid) for p in stack.processes]
        env = {**base, **stack.settings}
        print(f"stack up: {', '.join(p.spec.name for p in stack.processes)}")
        for suites in args.suites:
            rows: list[tuple[float, float, float, float, float, int]] = []
            for run in range(args.repeat):
                times_file = Path(tmp) / f"times-{suites}-{run}"
                report_dir = Path(tmp) / f"report-{suites}-{run}"
                command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_first_check", "-q"]
                command += ["--suite", suites, "--report-dir", str(report_dir)]
                cpu0, served0 = children_cpu(), group_cpu(pgids)
                started = time.time()
                subprocess.run(
                    command,
                    env={**env, "BENCH_CHECK_TIMES": str(times_file)},
                    cwd=tmp,
                    capture_output=True,
                    check=False,
                )
                wall = time.time() - started
                cpu, served = children_cpu() - cpu0, group_cpu(pgids) - served0
                checks = [tuple(map(float, line.split())) for line in times_file.read_text().splitlines()]
                first = min(a for a, _ in checks) - started
                per_check = (max(b for _, b in checks) - min(a for a, _ in checks)) / len(checks)
                verdict = json.loads((report_dir / "report.json").read_text())["verdict"]["reason"]
                rows.append((wall, cpu, served, first, per_check, len(checks)))
                print(
                    f"{suites} run {run + 1}: wall {wall:.2f} s, harness CPU {cpu:.2f} s ({cpu / wall:.0%}),"
                    f" services CPU {served:.2f} s ({served / wall:.0%}), first check at {first:.2f} s,"
                    f" {len(checks)} checks, {per_check * 1000:.0f} ms/check; {verdict}",
                    flush=True,
                )
            wall, cpu, served, first, per_check = (statistics.median(r[i] for r in rows) for i in range(5))
            print(
                f"== {suites} (median of {len(rows)}): wall {wall:.2f} s,"
                f" harness CPU {cpu:.2f} s = {cpu / wall:.0%} of wall"
                f" (goal <= 30 %), services {served / wall:.0%}, first check at {first:.2f} s (goal <= 0.8 s),"
                f" {per_check * 1000:.0f} ms/check wall (goal < 16 ms harness)",
                flush=True,
            )


if __name__ == "__main__":
    main()
