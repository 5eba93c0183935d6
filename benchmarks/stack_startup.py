"""How long `running_stack()` takes to come up (CA, every service started and healthy) and to stop.

    .venv/bin/python benchmarks/stack_startup.py [--runs N] [--services toolserver,platform,...] [--mutant NAME]

Prints one line per run and the median; target: under 5 s for the whole stack once dependencies are installed.
"""

from __future__ import annotations

import argparse
import statistics
import time

from conformance.reference.stack import running_stack


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
            names = ", ".join(f"{p.spec.name} {p.ready_s:.1f}" for p in stack.processes if p.ready_s is not None)
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
