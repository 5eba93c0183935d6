"""Set-up time of a fresh clone (`.ci/run` <= 4 minutes): `python3 run.py setup` in a new clone of each
given commit, alternately, with the tools' caches cold (empty pip/uv/npm caches in a temporary directory) or warm
(the user's usual caches, filled by the runs before), median of N runs.

    python3 benchmarks/setup_time.py [--runs 3] [--cold] [--keep] REF [REF ...]

REF is a commit of this repository (e.g. 8379a6b HEAD); `REF:pip` runs that commit with CONFORMANCE_NO_UV=1. CPU
is user+sys of run.py and every process it waited for. Each run prints run.py's own per-step lines. Figures depend
on the machine's load (2 cores shared); the network (PyPI, npm) is part of a cold run.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(ref: str, work: Path, cold: bool) -> tuple[float, float, int]:
    commit, _, mode = ref.partition(":")
    if work.exists():
        shutil.rmtree(work)
    clone = work / "conformance"
    clone.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", commit], cwd=clone, check=True)
    shared = ROOT.parent / "shared"
    if shared.exists():
        (work / "shared").symlink_to(shared.resolve())
    env = dict(os.environ)
    if mode == "pip":
        env["CONFORMANCE_NO_UV"] = "1"
    if cold:
        caches = work / "caches"
        env.update(
            PIP_CACHE_DIR=str(caches / "pip"), UV_CACHE_DIR=str(caches / "uv"), npm_config_cache=str(caches / "npm")
        )
    cpu0 = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        ["python3", "run.py", "setup"], cwd=clone, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    cpu = children_cpu() - cpu0
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("[run.py]") or done.returncode:
            print(f"    {line}")
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="empty pip/uv/npm caches for each run")
    parser.add_argument("--keep", action="store_true", help="keep the last clone of each REF")
    parser.add_argument("refs", nargs="+")
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {ref: [] for ref in args.refs}
    base = Path(tempfile.mkdtemp(prefix="setup-time-"))
    try:
        for run in range(args.runs):
            for ref in args.refs:  # alternately, so that the machine's load falls on every ref alike
                wall, cpu, code = one_run(ref, base / ref.replace(":", "-"), args.cold)
                print(f"{ref} run {run + 1}: exit {code}, wall {wall:.1f} s, CPU {cpu:.1f} s", flush=True)
                if code == 0:
                    results[ref].append((wall, cpu))
        caches = "cold caches" if args.cold else "warm caches"
        for ref, rows in results.items():
            if rows:
                wall = statistics.median(r[0] for r in rows)
                cpu = statistics.median(r[1] for r in rows)
                print(f"{ref} ({caches}): median of {len(rows)}: wall {wall:.1f} s, CPU {cpu:.1f} s")
    finally:
        if args.keep:
            print(f"clones kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
