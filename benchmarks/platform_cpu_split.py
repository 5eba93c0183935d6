"""Where the harness's CPU goes in a platform+campaigns certification: per check, its requests, the CPU
spent sending them (``HostHTTP.request``: transport, pace, guard, recording) and the rest (Hypothesis' engine and
draws, the check's own logic, pytest); per run, start-up, checks and finish.

    .venv/bin/python benchmarks/platform_cpu_split.py [--repeat 3] [--suites platform,campaigns] [--top 10]

Starts only the platform sandbox (as the stack does), then runs ``python -m pytest --suite ...`` in fresh processes
as ``conformance demo`` does, with the ``_platform_split`` plugin (benchmarks/). Figures are the main thread's CPU;
the median of ``--repeat`` runs per check. A request's CPU times a run's 1230-1700 requests is most of the checks
phase: compare with benchmarks/platform_request_cost.py, which splits one request by layer.
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

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--suites", default="platform,campaigns")
    parser.add_argument("--top", type=int, default=10, help="checks shown, by CPU")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), base.get("PYTHONPATH")]))
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, running_stack(services=["platform"]) as stack:
        for run in range(args.repeat):
            out = Path(tmp) / f"split-{run}.json"
            command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_platform_split", "-q"]
            command += ["--suite", args.suites, "--report-dir", str(Path(tmp) / f"report-{run}")]
            env = {**base, **stack.settings, "BENCH_PLATFORM_SPLIT": str(out)}
            subprocess.run(command, env=env, cwd=tmp, capture_output=True, check=False)
            result = json.loads(out.read_text())
            checks = result["checks"].values()
            requests = sum(c["requests"] for c in checks)
            http = sum(c["http_cpu"] for c in checks)
            in_checks = sum(c["cpu"] for c in checks)
            print(
                f"run {run + 1}: {result['total']:.2f} s CPU = start-up {result['start']:.2f} + checks"
                f" {result['in_checks']:.2f} + finish {result['total'] - result['start'] - result['in_checks']:.2f};"
                f" in checks: {requests} requests, {http:.2f} s sending them ({http / max(requests, 1) * 1e6:.0f}"
                f" µs each), {in_checks - http:.2f} s the rest",
                flush=True,
            )
            runs.append(result)
    names = {name for result in runs for name in result["checks"]}

    def median(name: str, key: str) -> float:
        return statistics.median(r["checks"].get(name, {}).get(key, 0.0) for r in runs)

    shown = sorted(names, key=lambda n: median(n, "cpu"), reverse=True)[: args.top]
    print(f"{'check':60s} {'requests':>8s} {'CPU s':>7s} {'sending':>8s} {'rest':>7s}  (medians)")
    for name in shown:
        cpu, http = median(name, "cpu"), median(name, "http_cpu")
        print(
            f"{name.split('::')[-1][:60]:60s} {median(name, 'requests'):8.0f} {cpu:7.3f} {http:8.3f} {cpu - http:7.3f}"
        )


if __name__ == "__main__":
    main()
