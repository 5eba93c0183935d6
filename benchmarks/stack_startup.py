"""How long `running_stack()` takes to come up (CA, every service started and healthy) and to stop.

    .venv/bin/python benchmarks/stack_startup.py [--runs N] [--services toolserver,platform,...] [--mutant NAME]

Prints one line per run (each service: seconds until healthy / its process's CPU seconds by then, from /proc on
Linux) and the median; target: at most 1.5 s for the whole stack once dependencies are installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from conformance.reference.stack import running_stack

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--services", help="comma-separated service packages (default: all present)")
    parser.add_argument("--mutant", action="append", default=[])
    args = parser.parse_args()
    services = args.services.split(",") if args.services else None
    starts: list[float] = []
    for run in range(1, args.runs + 1):
        began = time.perf_counter()
        with running_stack(services=services, mutants=args.mutant) as stack:
            up = time.perf_counter() - began
            cpus = {p.spec.name: cpu_s(p.pid) for p in stack.processes}
            names = ", ".join(
                f"{p.spec.name} {p.ready_s:.2f}" + (f"/{cpu:.2f}" if (cpu := cpus[p.spec.name]) is not None else "")
                for p in stack.processes
                if p.ready_s is not None
            )
            stop_began = time.perf_counter()
        stop = time.perf_counter() - stop_began
        starts.append(up)
        print(f"run {run}: up in {up:.2f} s, stopped in {stop:.2f} s ({names})", flush=True)
    print(
        f"median start-up {statistics.median(starts):.2f} s over {len(starts)} runs "
        f"(min {min(starts):.2f}, max {max(starts):.2f})"
    )


if __name__ == "__main__":
    main()
