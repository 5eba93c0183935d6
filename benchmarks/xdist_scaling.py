"""pytest-xdist against 1, 2 and 3 targets of one embedded reference stack (``-n auto`` never slower than
serial; targets certified in parallel until the cores are busy).

    .venv/bin/python benchmarks/xdist_scaling.py [--repeat 1] [--workers auto 3] [--targets 1 2 3]

For each fleet (the tool server; + the platform sandbox; + the compression sandbox) it runs the bundled suites of
those targets serially and with each ``-n`` value, in fresh processes alternately, and prints the median wall times
and the speed-up over serial. A run certifies at most one target of each kind, so three targets is the largest
fleet of one run. Figures depend on the machine's load and cores (``os.sched_getaffinity``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.reference.stack import running_stack

FLEETS = [
    ("tool server", ["target_url"]),
    ("+ platform", ["target_url", "platform_url"]),
    ("+ compression", ["target_url", "platform_url", "compression_url"]),
]
URL_ENV = {"target_url": "CONFORMANCE_TARGET_URL", "platform_url": "CONFORMANCE_PLATFORM_URL"}
URL_ENV["compression_url"] = "CONFORMANCE_COMPRESSION_URL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", nargs="*", default=["auto", "3"])
    parser.add_argument("--targets", nargs="*", type=int, default=[1, 2, 3], help="fleet sizes to run")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    print(f"{len(os.sched_getaffinity(0))} core(s) available")
    with tempfile.TemporaryDirectory() as tmp, running_stack() as stack:
        for label, urls in (FLEETS[n - 1] for n in args.targets):
            # the fleet's target URLs only (keys, CA and the rest stay): the other targets are not configured
            unused = {URL_ENV[u] for u in URL_ENV if u not in urls}
            env = {**base, **{k: v for k, v in stack.settings.items() if k not in unused}}
            modes = ["serial", *args.workers]
            walls: dict[str, list[float]] = {m: [] for m in modes}
            for run in range(args.repeat):
                for mode in modes:
                    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
                    command += ["--report-dir", str(Path(tmp) / f"{label}-{mode}-{run}")]
                    command += [] if mode == "serial" else ["-n", mode]
                    started = time.perf_counter()
                    done = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True, check=False)
                    walls[mode].append(time.perf_counter() - started)
                    print(
                        f"  {len(urls)} target(s) {mode}: {walls[mode][-1]:.1f} s, exit {done.returncode}", flush=True
                    )
            print(f"== {len(urls)} target(s) ({label}): {speed_ups(walls, args.workers)}", flush=True)


def speed_ups(walls: dict[str, list[float]], workers: list[str]) -> str:
    """The median walls of the serial run and each ``-n`` value, and the speed-up of each over serial."""
    serial = statistics.median(walls["serial"])
    line = ", ".join(f"-n {m} {statistics.median(walls[m]):.1f} s" for m in workers)
    ratios = ", ".join(f"-n {m} x{serial / statistics.median(walls[m]):.2f}" for m in workers)
    return f"serial {serial:.1f} s, {line}; speed-up {ratios}"


if __name__ == "__main__":
    main()
