"""Wall time of the auth and profile suites against the reference IdP and tool server (the attack
tables add requests, not minutes; the bound is 1.5x the single-probe suites).

    .venv/bin/python benchmarks/auth_profile_suites.py [--repeat 3]

Starts the tool server and its IdP (as the stack does), runs ``pytest --suite auth,profile`` in a fresh process like
``conformance demo`` does, and prints the wall time, the harness's own duration, the verdict, the HTTP exchanges
made and the slowest rules.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    walls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, running_stack(services=["toolserver"]) as stack:
        env = {**base, **stack.settings}
        for run in range(args.repeat):
            report_dir = Path(tmp) / f"run{run}"
            command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
            command += ["--suite", "auth,profile", "--report-dir", str(report_dir)]
            started = time.perf_counter()
            completed = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - started
            walls.append(wall)
            report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
            statuses = [r["status"] for r in report["results"]]
            exchanges = sum(len(r.get("evidence") or []) for r in report["results"])
            print(
                f"run {run + 1}: exit {completed.returncode}, wall {wall:.1f} s, harness {report['duration_s']:.1f} s,"
                f" {exchanges} exchanges in evidence; {dict(sorted((s, statuses.count(s)) for s in set(statuses)))};"
                f" verdict: {report['verdict']['reason']}"
            )
            slowest = sorted(report["results"], key=lambda r: -(r.get("duration_s") or 0))[:5]
            print("  slowest: " + ", ".join(f"{r['rule']} {r['duration_s']:.1f}s" for r in slowest))
    print(f"median wall {statistics.median(walls):.1f} s over {len(walls)} run(s)")


if __name__ == "__main__":
    main()
