"""A pytest plugin for the benchmarks (``-p _test_cpu`` with benchmarks/ on PYTHONPATH, in a ``-n 0`` session): the
CPU of the session's whole process tree spent in each test (set-up, call and teardown: a module's shared fixtures
count against its first test), written as JSON lines ``{"test": node id, "cpu_s": ..., "wall_s": ...}`` to the file
in ``BENCH_TEST_CPU``. The tree is read from /proc (user + system of every live descendant, and of the children they
have reaped); the session makes itself the child subreaper, so a service that outlives its parent stays counted.
Used by ``test_cpu.py``."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import time
from collections.abc import Generator
from pathlib import Path

import pytest

PR_SET_CHILD_SUBREAPER = 36
_TICK = os.sysconf("SC_CLK_TCK")


def _stats() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU s of the process and of its reaped children)."""
    found: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            text = (entry / "stat").read_text()
            fields = text[text.rindex(")") + 2 :].split()
            ticks = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
            found[int(entry.name)] = (int(fields[1]), ticks / _TICK)
    return found


def tree_cpu() -> float:
    stats = _stats()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo.extend(children.get(pid, []))
    return total


def pytest_configure(config: pytest.Config) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    cpu, wall = tree_cpu(), time.perf_counter()
    yield
    line = {"test": item.nodeid, "cpu_s": round(tree_cpu() - cpu, 2), "wall_s": round(time.perf_counter() - wall, 2)}
    path = os.environ.get("BENCH_TEST_CPU")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
