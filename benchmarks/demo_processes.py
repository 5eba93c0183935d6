"""Where ``conformance demo``'s CPU and wall go, by process: the demo run as a subreaper, every descendant sampled
from /proc every 20 ms (Linux only); per process its CPU (last sample), when it started and when it was last seen,
relative to the demo's start, and the moment the demo said the stack was up (or printed its pytest command, where
it starts pytest only then).

    .venv/bin/python benchmarks/demo_processes.py [-- extra demo arguments]

Kinds: ``demo`` (the CLI, which starts and stops the stack), ``pytest SUITES`` (the run of one kind of target),
``pytest-controller`` and ``pytest-worker gwN`` (xdist's, when the demo's extra arguments ask for workers),
``svc:MODULE`` (a Python reference service), ``node:SCRIPT`` (the IdP), others by command line. A process's CPU is
its last sample, so a few ms of each short process are missed; the last line gives the whole tree's CPU from rusage.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_time import become_subreaper, reap_orphans  # a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def parent_kind(pid: int) -> str:
    try:
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return "?"
    return kind(parent) or "?"


def kind(pid: int) -> str | None:
    try:
        argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return None
    if not argv:
        return None
    if argv[0].rsplit("/", 1)[-1].startswith("node"):
        return "node:" + (argv[1].rsplit("/", 1)[-1] if len(argv) > 1 else "")
    if "-m" in argv:
        module = argv[argv.index("-m") + 1] if argv.index("-m") + 1 < len(argv) else ""
        if module == "conformance":
            return "demo"
        if module == "pytest":  # a run of one kind of target (named by its suites), or an xdist controller
            return "pytest " + argv[argv.index("--suite") + 1] if "--suite" in argv[:-1] else "pytest-controller"
        return "svc:" + module.removeprefix("conformance.reference.")
    if "-c" in argv and "multiprocessing" in " ".join(argv):
        return "multiprocessing child of " + parent_kind(pid)
    if "-c" in argv:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            environ = []
        worker = next((e.decode().split("=", 1)[1] for e in environ if e.startswith(b"PYTEST_XDIST_WORKER=")), "")
        return f"pytest-worker {worker}".strip()
    return " ".join(argv)[:60]


def main() -> int:
    extra = sys.argv[1:]
    counted = "whole tree" if become_subreaper() else "waited-for children only"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        command = [str(ROOT / ".venv" / "bin" / "python"), "-m", "conformance", "demo", "--report-dir", tmp, *extra]
        began = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: list[tuple[float, str]] = []

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append((time.perf_counter() - began, line))

        reader = threading.Thread(target=read)
        reader.start()
        me = os.getpid()
        seen: dict[int, list[object]] = {}  # pid -> [cpu, kind, first seen, last seen]
        while process.poll() is None:
            now = time.perf_counter() - began
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) == me:
                    continue
                pid = int(entry)
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                parent, cpu = int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK
                if pid in seen or parent == me or parent in seen:
                    record = seen.setdefault(pid, [0.0, None, now, now])
                    record[0] = max(float(record[0]), cpu)  # type: ignore[arg-type]
                    record[1] = kind(pid) or record[1]
                    record[3] = now
            time.sleep(0.02)
        wall = time.perf_counter() - began
        reader.join()
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    healthy = next((t for t, line in lines if line.startswith("# reference stack up")), None)
    if healthy is None:  # a demo that starts pytest once the stack is healthy prints its command then
        healthy = next((t for t, line in lines if line.startswith("$ ")), float("nan"))
    for _pid, (seconds, name, first, last) in sorted(seen.items(), key=lambda item: item[1][2]):  # type: ignore[index]
        print(f"{float(seconds):7.2f} s CPU  {float(first):6.2f} -> {float(last):6.2f} s  {name}")  # type: ignore[arg-type]
    for at, line in lines[-10:]:
        print(f"{at:6.2f} s  | {line.rstrip()[:100]}")
    sampled = sum(float(r[0]) for r in seen.values())  # type: ignore[arg-type]
    tail = [line.strip() for _, line in lines if line.strip()][-1:]
    print(f"stack healthy at {healthy:.2f} s; sampled {sampled:.1f} s; {wall:.1f} s wall, {cpu:.1f} s CPU ({counted})")
    print(f"exit {process.returncode} {tail}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return process.returncode


if __name__ == "__main__":
    raise SystemExit(main())
