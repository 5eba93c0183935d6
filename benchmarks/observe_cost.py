"""What tests/reference/auth_probe.observe() costs per observed case of the mutant matrix (38 IdP and proxy
mutants), split between the probe (this process: its ScriptedClients and CIMD document server, all threads) and
the stack's services (the IdP's node process, the proxy): CPU and wall of each observe() on one running stack.

    .venv/bin/python benchmarks/observe_cost.py [--runs 5] [--mutant idp-code-reuse]

The first observe() is not counted (this process's first imports and TLS set-up); each counted one is a fresh set
of clients, as in the matrix. Prints the probes the mutant changed (its footprint) and the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """User + system CPU of one process so far (clock ticks: 10 ms resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mutant", default="idp-code-reuse", help="an IdP or proxy mutant (default idp-code-reuse)")
    options = parser.parse_args()
    from conformance.reference.stack import running_stack
    from tests.reference.auth_probe import changed_probes, observe

    service = options.mutant.split("-", 1)[0]
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_stack(
            mutants=[options.mutant], services=sorted({"toolserver", service}), data_dir=Path(tmp) / "stack"
        ) as stack,
    ):
        pids = {p.spec.name: p.process.pid for p in stack.processes}
        observe(stack)
        probe: list[float] = []
        wall: list[float] = []
        services: dict[str, list[float]] = {name: [] for name in pids}
        for _ in range(options.runs):
            before = {name: process_cpu(pid) for name, pid in pids.items()}
            cpu, began = time.process_time(), time.perf_counter()
            seen = observe(stack)
            probe.append(time.process_time() - cpu)
            wall.append(time.perf_counter() - began)
            for name, pid in pids.items():
                services[name].append(process_cpu(pid) - before[name])
    print(f"{options.mutant}: changed probes {sorted(changed_probes(seen))}")
    print(
        f"observe() median of {options.runs}: wall {statistics.median(wall) * 1000:.0f} ms, "
        f"probe CPU {statistics.median(probe) * 1000:.0f} ms, "
        + ", ".join(f"{name} CPU {statistics.median(v) * 1000:.0f} ms" for name, v in services.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
