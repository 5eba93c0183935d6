"""What each shortcut into another project's internals (``conformance/core/_shortcuts.py``) saves: the CPU time and
wall time of a run's start-up (``pytest --collect-only --suite auth,profile``: the plugin, its imports, collecting
the checks) and of a whole auth+profile run (``--suites``: another selection) against the reference services, with
every shortcut on, every one off (``CONFORMANCE_NO_SHORTCUTS=1``), and each one off alone
(``CONFORMANCE_NO_SHORTCUTS=NAME``).

    .venv/bin/python benchmarks/startup.py [--repeat 5] [--names NAME ...] [--suites auth,profile]
        [--startup-only] [--bytecode]

The runs are as a CI job runs an installed harness: the package marked for pytest's assertion rewriting as a wheel
install marks it (``-p _as_installed``), and ``PYTHONDONTWRITEBYTECODE=1`` unless ``--bytecode``. Conditions
alternate within each repeat, so that the machine's load falls on all of them alike; the figures are medians of
the measured process's user+system CPU (``getrusage`` of the child), less sensitive to load than wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.core._shortcuts import ENV, SHORTCUTS
from conformance.core.rules import SUITE_TARGET
from conformance.reference.stack import running_stack

HERE = Path(__file__).resolve().parent
SERVICE = {"tool_server": "toolserver", "platform": "platform", "compression": "compression"}  # target -> service


def measured(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit code) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, completed.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--names", nargs="*", default=list(SHORTCUTS), help="the shortcuts to turn off one by one")
    parser.add_argument("--suites", default="auth,profile", help="the suites of the measured runs")
    parser.add_argument("--startup-only", action="store_true", help="measure the start-up only, not whole runs")
    parser.add_argument("--bytecode", action="store_true", help="let the runs write bytecode (a warm machine)")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), base.get("PYTHONPATH")]))
    if not args.bytecode:
        base["PYTHONDONTWRITEBYTECODE"] = "1"
    conditions = {"all on": None, "all off": "1", **{f"{name} off": name for name in args.names}}
    pytest_command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_as_installed", "-q"]
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    services = sorted({SERVICE[SUITE_TARGET[suite]] for suite in args.suites.split(",")})
    with tempfile.TemporaryDirectory() as tmp, running_stack(services=services) as stack:
        for run in range(args.repeat):
            for label, value in conditions.items():
                env = {**base, **stack.settings, **({ENV: value} if value else {})}
                startup = [*pytest_command, "--collect-only", "--suite", args.suites]
                cpu, wall, code = measured(startup, env, tmp)
                figures.setdefault(("start-up", label), []).append((cpu, wall))
                if args.startup_only:
                    continue
                report_dir = str(Path(tmp) / f"run-{run}-{label.replace(' ', '-')}")
                whole = [*pytest_command, "--suite", args.suites, "--report-dir", report_dir]
                cpu, wall, code = measured(whole, env, tmp)
                if code != 0:
                    print(f"   ({label}: the run exited {code})", file=sys.stderr)
                figures.setdefault(("whole run", label), []).append((cpu, wall))
            print(f"repeat {run + 1}/{args.repeat} done", file=sys.stderr, flush=True)
    for what in ("start-up",) if args.startup_only else ("start-up", "whole run"):
        on = statistics.median(cpu for cpu, _ in figures[(what, "all on")])
        print(f"== {args.suites} {what}: median CPU and wall of {args.repeat} run(s); saving = CPU off - CPU all on")
        for label in conditions:
            samples = figures[(what, label)]
            cpu = statistics.median(c for c, _ in samples)
            wall = statistics.median(w for _, w in samples)
            saving = "" if label == "all on" else f"  saving {1000 * (cpu - on):+6.0f} ms"
            print(f"   {label:24s} CPU {cpu * 1000:7.0f} ms  wall {wall * 1000:7.0f} ms{saving}")


if __name__ == "__main__":
    main()
