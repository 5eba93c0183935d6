"""A pytest plugin for the benchmarks (``-p _phase_cpu`` with benchmarks/ on PYTHONPATH): appends to the file in
``BENCH_PHASE_CPU`` one line ``checks finish total``: the process's CPU seconds (all threads) from the first check
to the end of the checks, in ``pytest_sessionfinish`` (the report: redaction pass, report.json, HTML, HAR), and in
all. The first two leave out start-up (imports, collection): what a run forked from a preloaded process pays."""

from __future__ import annotations

import os
import time

import pytest

_marks: dict[str, float] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    _marks["checks"] = time.process_time()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _marks["finish"] = time.process_time()


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("BENCH_PHASE_CPU")
    if path and "checks" in _marks and "finish" in _marks:
        end = time.process_time()
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{_marks['finish'] - _marks['checks']:.4f} {end - _marks['finish']:.4f} {end:.4f}\n")
