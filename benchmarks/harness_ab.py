"""Two checkouts of the harness compared on one reference stack: the same suites run alternately with each
checkout's package first on PYTHONPATH, and per checkout the median CPU of the pytest process in the checks (from
the first check to the last), in the end-of-run report writing, and in all (with imports and collection).

    .venv/bin/python benchmarks/harness_ab.py BASE_CHECKOUT [--other .] [--rounds 6] [--suites auth,profile]
        [--services idp,toolserver,proxy]

e.g. ``git worktree add /tmp/base <commit>`` (link its conformance/reference/idp/node_modules to this checkout's
for the IdP), then ``.venv/bin/python benchmarks/harness_ab.py /tmp/base``. The stack is started from this checkout.
The first two figures are what a run forked from a preloaded process (the mutant matrix) pays; CPU time is far less
sensitive to a busy machine than wall time, and alternating the checkouts spreads what remains evenly.
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("base", type=Path)
    parser.add_argument("--other", type=Path, default=HERE.parent)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--suites", default="auth,profile")
    parser.add_argument("--services", default="idp,toolserver,proxy")
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "other": args.other.resolve()}
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    rows: dict[str, list[tuple[float, ...]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp, running_stack(services=args.services.split(",")) as stack:
        for round_ in range(args.rounds):
            order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
            for name, tree in order:
                out = Path(tmp) / f"{name}-{round_}.txt"
                env = {**env0, **stack.settings, "PYTHONPATH": f"{HERE}{os.pathsep}{tree}", "BENCH_PHASE_CPU": str(out)}
                command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_phase_cpu", "-q"]
                command += ["--suite", args.suites, "--report-dir", f"{tmp}/report-{name}-{round_}"]
                done = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True, check=False)
                if not out.is_file():
                    sys.exit(f"{name}: no figures (exit {done.returncode})\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
                rows[name].append(tuple(map(float, out.read_text().split())))
                last = (done.stdout.strip().splitlines() or [""])[-1]
                print(f"{name} round {round_ + 1}: checks {rows[name][-1][0]:.3f} s CPU; {last}", flush=True)
    for name, figures in rows.items():
        checks, finish, total = (statistics.median(f[i] for f in figures) for i in range(3))
        print(
            f"== {name} ({trees[name]}): checks {checks:.3f} s CPU, report writing {finish:.3f} s,"
            f" process {total:.3f} s (median of {len(figures)})"
        )


if __name__ == "__main__":
    main()
