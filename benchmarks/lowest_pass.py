"""Wall and CPU time of the lowest-versions pass that ``python3 run.py test`` runs beside the whole suite: building
.venv-lowest (uv's ``--resolution lowest-direct``; with ``--fresh`` from nothing, else only when pyproject.toml
changed) and running run.py's LOWEST_TESTS in it as run.py does.

    python3 benchmarks/lowest_pass.py [--fresh] [--workers N]
    python3 benchmarks/lowest_pass.py --beside tests/suites

The pass runs on run.py's LOWEST_WORKERS (as ``run.py test`` runs it, beside the whole suite) unless ``--workers``
says otherwise (``--workers 3``: as it ran after the suite, on one worker per core and one more).

``--beside PATH`` compares the two ways of running the pass next to a part of the suite (PATH, run as run.py runs
the suite: one worker per core and one more): PATH then the pass on as many workers (as the pass ran after the
suite), against the two at once with the pass on LOWEST_WORKERS (as it runs now). The whole suite is not run here.

The CPU is that of the whole process tree (user + system of the reaped children, those re-parented to this process
included); the load average before and after is printed, since other jobs on the same cores slow the pass down.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from _cores import cores  # a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]


def load_run_py() -> Any:
    spec = importlib.util.spec_from_file_location("run_py", ROOT / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reap_orphans() -> None:
    """Wait for the descendants re-parented to this process (their CPU then counts in RUSAGE_CHILDREN)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.1)
        except ChildProcessError:
            return


def timed(what: str, step: Any) -> Any:
    print(f"before {what}: {cores()}", flush=True)
    before, load = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg()[0]
    started = time.perf_counter()
    result = step()
    wall = time.perf_counter() - started
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{what}: wall {wall:.1f} s, CPU {cpu:.1f} s (load {load:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="build .venv-lowest from nothing (uv's cache kept)")
    parser.add_argument("--workers", help="-n of the pass (default: run.py's LOWEST_WORKERS)")
    parser.add_argument("--beside", metavar="PATH", help="the pass after a part of the suite, and beside it")
    args = parser.parse_args()
    with contextlib.suppress(OSError, AttributeError):  # the child subreaper: orphaned servers are reaped here
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    run_py = load_run_py()
    if args.fresh:
        shutil.rmtree(run_py.LOWEST, ignore_errors=True)
    wanted = run_py.lowest_is_current()
    if wanted is not None:
        installer = run_py.Installer.start()
        print(timed(".venv-lowest", lambda: run_py.ensure_lowest(installer, wanted)))
    env = run_py.writing_bytecode()
    if args.beside:
        workers = str((os.cpu_count() or 1) + 1)
        part = [str(run_py.PY), "-m", "pytest", args.beside, "-p", "no:cacheprovider", "-p", "no:anyio", "-q"]
        part += ["-n", workers]
        quiet = {"cwd": ROOT, "env": env, "stdout": subprocess.DEVNULL}

        def after() -> list[int]:
            return [subprocess.call(part, **quiet), subprocess.call(run_py.lowest_pass(workers), **quiet)]

        def beside() -> list[int]:
            lowest = subprocess.Popen(run_py.lowest_pass(run_py.LOWEST_WORKERS), **quiet)
            return [subprocess.call(part, **quiet), lowest.wait()]

        print(f"{args.beside} then the pass (-n {workers}): exit codes {timed('after', after)}")
        print(f"{args.beside} and the pass at once (-n {run_py.LOWEST_WORKERS}): exit codes {timed('beside', beside)}")
        return
    command = [*run_py.lowest_pass(args.workers or run_py.LOWEST_WORKERS), "-q"]
    code = timed("the pass", lambda: subprocess.call(command, cwd=ROOT, env=env))
    print(f"exit code {code}")


if __name__ == "__main__":
    main()
