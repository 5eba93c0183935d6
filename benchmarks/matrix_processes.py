"""Where the mutant matrix's CPU goes, by kind of process: ``pytest ARGS`` (default ``tests/matrix -n 0 -q``) run as a
subreaper, every descendant's CPU sampled from /proc every 10 ms and summed by kind (Linux only).

    .venv/bin/python benchmarks/matrix_processes.py [PYTEST ARGS...]

Kinds: ``fork:harness`` (a harness run forked from the matrix's fork server; its stdout is the run's output.txt),
``fork:svc:NAME.log`` (a reference service forked from it), ``fork:engine`` (a compression engine forked from it),
``fork:server``, ``node:host.js`` (the IdPs), ``pytest-main`` (the session itself, with the platform and compression
sandboxes it serves in threads), others by command line. A process's CPU is its last sample, so a few ms of each
short process are missed: the last line gives the whole tree's CPU from rusage (as suite_time.py counts it) to
compare with the sampled sum.
"""

from __future__ import annotations

import collections
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_time import become_subreaper, reap_orphans  # a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def kind(pid: int) -> str | None:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    command = b" ".join(argv).decode(errors="replace")
    try:
        out = os.readlink(f"/proc/{pid}/fd/1")
    except OSError:
        out = ""
    if argv[0].decode(errors="replace").rsplit("/", 1)[-1].startswith("node"):
        return "node:" + (argv[1].decode(errors="replace").rsplit("/", 1)[-1] if len(argv) > 1 else "")
    if "forkserver" in command:
        if out.endswith("output.txt"):
            return "fork:harness"
        if out.endswith(".log"):
            return "fork:svc:" + os.path.basename(out)
        # A compression engine is the fork server's child, or ours once that server has stopped (we are the
        # subreaper); the fork server is the child of a pytest process.
        try:
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            forked = parent == os.getpid() or b"forkserver" in Path(f"/proc/{parent}/cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            forked = False
        return "fork:engine" if forked else "fork:server"
    if "pytest" in command:
        return "pytest-main"
    return command[:60]


def sample(seen: dict[int, list[object]]) -> None:
    """Update ``seen`` (pid -> [cpu seconds, kind]) with every descendant of this process."""
    me = os.getpid()
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
            record = seen.setdefault(pid, [0.0, None])
            record[0] = max(float(record[0]), cpu)  # type: ignore[arg-type]
            record[1] = kind(pid) or record[1]  # again each time: a child execs, a forked run takes its output


def main() -> int:
    args = sys.argv[1:] or ["tests/matrix", "-n", "0", "-q"]
    counted = "whole tree" if become_subreaper() else "waited-for children only"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    command = [str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", *args]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.append(process.stdout.read() if process.stdout else ""))
    reader.start()
    seen: dict[int, list[object]] = {}
    while process.poll() is None:
        sample(seen)
        time.sleep(0.01)
    wall = time.perf_counter() - began
    reader.join()
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for seconds, name in seen.values():
        totals[str(name)][0] += float(seconds)  # type: ignore[arg-type]
        totals[str(name)][1] += 1
    for name, (seconds, count) in sorted(totals.items(), key=lambda item: -item[1][0]):
        print(f"{seconds:8.2f} s CPU  {int(count):4d} processes  {name}")
    last = [line for line in "".join(output).splitlines() if line.strip()][-1:]
    sampled = sum(t[0] for t in totals.values())
    print(f"sampled {sampled:.1f} s; {wall:.1f} s wall, {cpu:.1f} s CPU ({counted}), exit {process.returncode} {last}")
    return process.returncode


if __name__ == "__main__":
    raise SystemExit(main())
