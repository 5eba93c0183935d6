"""Wall time of the platform and campaigns suites against the reference platform sandbox.

    .venv/bin/python benchmarks/platform_suites.py [--repeat 1]

Starts only the platform service (as the stack does: child process, TLS), runs ``pytest --suite
platform,campaigns`` in a fresh process like ``conformance demo`` does, and prints the wall time of the run, the
harness's own duration and the slowest rules.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.reference.stack import running_stack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with running_stack(services=["platform"]) as stack, tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
        env.update(stack.settings)
        for run in range(args.repeat):
            report_dir = Path(tmp) / f"run{run}"
            command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
            command += ["--suite", "platform,campaigns", "--report-dir", str(report_dir)]
            started = time.perf_counter()
            completed = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - started
            report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
            statuses = [r["status"] for r in report["results"]]
            summary = {s: statuses.count(s) for s in sorted(set(statuses))}
            print(
                f"run {run + 1}: exit {completed.returncode}, wall {wall:.1f} s, harness {report['duration_s']:.1f} s"
            )
            print(f"  results: {summary}")
            slowest = sorted(report["results"], key=lambda r: -(r.get("duration_s") or 0))[:5]
            print("  slowest: " + ", ".join(f"{r['rule']} {r['duration_s']:.1f}s" for r in slowest))


if __name__ == "__main__":
    main()
