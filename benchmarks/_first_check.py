"""A pytest plugin for the benchmarks (``-p _first_check`` with benchmarks/ on PYTHONPATH): appends to the file in
``BENCH_CHECK_TIMES`` the wall-clock time (time.time()) at which each check starts and ends, one ``start end`` line
per check, so a benchmark can tell start-up from the checks themselves. With ``BENCH_FIRST_CHECK_MARK`` set, it also
writes that mark on stderr as the first check starts."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Generator

import pytest

_times: list[tuple[float, float]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    began = time.time()
    mark = os.environ.get("BENCH_FIRST_CHECK_MARK")
    if mark and not _times:  # imports_before_first_check.py splits `-X importtime` output here
        print(mark, file=sys.stderr, flush=True)
    yield
    _times.append((began, time.time()))


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("BENCH_CHECK_TIMES")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.writelines(f"{a:.6f} {b:.6f}\n" for a, b in _times)
