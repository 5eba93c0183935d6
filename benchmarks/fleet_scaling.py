"""A fleet of 1, 2 and 4 named targets of one kind, serially and with pytest-xdist (a fleet of N targets
scales close to linearly until the cores are busy).

    .venv/bin/python benchmarks/fleet_scaling.py [--repeat 1] [--sizes 1 2 4] [--workers auto] [--suites S]

Each named target is its own embedded platform sandbox (``running_stack(services=["platform"])``: its own process,
database, API keys and rate-limit budget, as separate vendors' sandboxes would be), certified through a targets file
(docs/ci.md, "Fleets"); the run's CA bundle holds every sandbox's CA. For each fleet size it runs the suites
serially and with each ``-n`` value, alternately in fresh processes, and prints the median wall and CPU times (the
pytest process tree's, from rusage; the sandboxes are not its children) and the speed-up over serial. Figures depend
on the machine's load and cores (``os.sched_getaffinity``): the platform suites' own CPU is a large share of a run's
wall against the reference, so a few targets saturate two cores.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.reference.stack import Stack, running_stack

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness_cpu import children_cpu  # sibling scripts, not a package
from xdist_scaling import speed_ups

# The stack's settings a named target takes as its own: secrets from the environment under the target's prefix,
# the rest in the targets file (the CA bundle is run-wide: every sandbox's CA in one file).
SECRETS = ("PLATFORM_API_KEY", "PLATFORM_THROTTLE_API_KEY", "PLATFORM_FAULT_API_KEY")
PER_TARGET = ("CAMPAIGNS_CONFLICT_AUDIENCE_ID", "CAMPAIGNS_CONVERSION_EVENT_SETTING_IDS", "CAMPAIGNS_LOCATION_ID")


def fleet_files(stacks: list[Stack], directory: Path) -> tuple[Path, dict[str, str]]:
    """The targets file, and the environment it needs (each target's secrets, the shared CA bundle)."""
    env: dict[str, str] = {}
    lines: list[str] = []
    bundle = directory / "fleet-ca.pem"
    bundle.write_text("".join(Path(s.settings["CONFORMANCE_CA_BUNDLE"]).read_text() for s in stacks))
    for index, stack in enumerate(stacks, start=1):
        name, settings = f"sandbox{index}", stack.settings
        lines += ["[[target]]", f'name = "{name}"', f'platform_url = "{settings["CONFORMANCE_PLATFORM_URL"]}"']
        lines.append("[target.settings]")
        for key in PER_TARGET:
            value = settings[f"CONFORMANCE_{key}"]
            lines.append(f'{key.lower()} = "{value}"')
        for key in SECRETS:
            env[f"{name.upper()}_{key}"] = settings[f"CONFORMANCE_{key}"]
        lines.append("")
    targets = directory / "targets.toml"
    targets.write_text("\n".join(lines))
    env |= {"CONFORMANCE_CA_BUNDLE": str(bundle), "CONFORMANCE_ALLOW_PRIVATE_NETWORK": "true"}
    return targets, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--sizes", nargs="*", type=int, default=[1, 2, 4], help="fleet sizes to run")
    parser.add_argument("--workers", nargs="*", default=["auto"])
    parser.add_argument("--suites", default="platform,campaigns", help="the --suite of every run (platform targets)")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    print(f"{len(os.sched_getaffinity(0))} core(s) available")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stacks_up:
        stacks = [stacks_up.enter_context(running_stack(services=["platform"])) for _ in range(max(args.sizes))]
        for size in args.sizes:
            directory = Path(tmp) / f"fleet-{size}"
            directory.mkdir()
            targets, env = fleet_files(stacks[:size], directory)
            env = {**base, **env, "CONFORMANCE_TARGETS_FILE": str(targets)}
            modes = ["serial", *args.workers]
            walls: dict[str, list[float]] = {m: [] for m in modes}
            cpus: dict[str, list[float]] = {m: [] for m in modes}
            for run in range(args.repeat):
                for mode in modes:
                    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--suite", args.suites]
                    command += ["--report-dir", str(directory / f"{mode}-{run}")]
                    command += [] if mode == "serial" else ["-n", mode]
                    cpu, started = children_cpu(), time.perf_counter()
                    done = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True, check=False)
                    walls[mode].append(time.perf_counter() - started)
                    cpus[mode].append(children_cpu() - cpu)
                    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
                    print(
                        f"  {size} target(s) {mode}: {walls[mode][-1]:.1f} s wall, {cpus[mode][-1]:.1f} s CPU,"
                        f" exit {done.returncode}: {last}",
                        flush=True,
                    )
            print(f"== {size} target(s): {speed_ups(walls, args.workers)}", flush=True)


if __name__ == "__main__":
    main()
