#!/usr/bin/env python3
"""Plugin import and collection overhead of the bundled suites.

    .venv/bin/python benchmarks/collect_overhead.py [--runs 5]

Times (wall clock, median of N runs) three commands in fresh processes:
  1. `python -c "import conformance.plugin"`                       import cost of the plugin
  2. `pytest --collect-only -q -p no:conformance` on an empty dir     pytest alone (baseline)
  3. `pytest --collect-only -q --target-url ... ` of all suites      pytest + plugin + bundled suites
and prints the top import-time entries of the plugin from `python -X importtime`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time


def timed(command: list[str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=False, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as empty:
        commands = {
            "import conformance.plugin": [py, "-c", "import conformance.plugin"],
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
            [py, "-X", "importtime", "-c", "import conformance.plugin"],
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
