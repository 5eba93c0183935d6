"""Wall time of the platform and campaigns suites against the reference platform sandbox, without and with a
request limit.

    .venv/bin/python benchmarks/platform_suites.py [--repeat 1] [--limit 120] [--window 60] [--no-unlimited]

Starts only the platform service (as the stack does: child process, TLS), runs ``pytest --suite
platform,campaigns`` in a fresh process like ``conformance demo`` does, and prints the wall time of the run, the
harness's own duration, the time it waited for the sandbox's rate limits and the slowest rules. Then the same
against a sandbox started with ``--limit`` requests per ``--window`` seconds (``--limit 0`` skips it), where RL-03
is decided on the main key's own window (no separately throttled key) and the run may wait up to
``--max-throttle-wait`` seconds in total.
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


def run_suites(label: str, env: dict[str, str], tmp: Path, repeat: int) -> None:
    for run in range(repeat):
        report_dir = tmp / f"{label}-run{run}"
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
        command += ["--suite", "platform,campaigns", "--report-dir", str(report_dir)]
        started = time.perf_counter()
        completed = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
        statuses = [r["status"] for r in report["results"]]
        summary = {s: statuses.count(s) for s in sorted(set(statuses))}
        throttle = report.get("throttle") or {}
        print(
            f"{label} run {run + 1}: exit {completed.returncode}, wall {wall:.1f} s, harness "
            f"{report['duration_s']:.1f} s, waited for rate limits {throttle.get('waited_s', 0):.1f} s "
            f"(bound {throttle.get('max_wait_s', 0):.0f} s, {throttle.get('blocked_checks', 0)} check(s) blocked)"
        )
        print(f"  results: {summary}; verdict: {report['verdict']['reason']}")
        slowest = sorted(report["results"], key=lambda r: -(r.get("duration_s") or 0))[:5]
        print("  slowest: " + ", ".join(f"{r['rule']} {r['duration_s']:.1f}s" for r in slowest))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--limit", type=int, default=120, help="requests per window of the limited run (0: none)")
    parser.add_argument("--window", type=float, default=60.0, help="seconds of a window (a minute, as in production)")
    parser.add_argument("--max-throttle-wait", type=float, default=1800.0, help="the limited run's bound on waits")
    parser.add_argument("--no-unlimited", action="store_true", help="only the limited run")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_unlimited:
            with running_stack(services=["platform"]) as stack:
                run_suites("unlimited", {**base, **stack.settings}, Path(tmp), args.repeat)
        if args.limit > 0:
            with running_stack(services=["platform"], request_limit=(args.limit, args.window)) as stack:
                env = {**base, **stack.settings}
                del env["CONFORMANCE_PLATFORM_THROTTLE_API_KEY"]  # RL-03 on the main key's real window
                env["CONFORMANCE_PLATFORM_RL_BUDGET"] = str(args.limit + 30)
                env["CONFORMANCE_MAX_THROTTLE_WAIT"] = str(args.max_throttle_wait)
                label = f"limit {args.limit}/{args.window:g}s"
                run_suites(label, env, Path(tmp), args.repeat)


if __name__ == "__main__":
    main()
