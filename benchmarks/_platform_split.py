"""A pytest plugin for benchmarks/platform_cpu_split.py (``-p _platform_split`` with benchmarks/ on PYTHONPATH):
per check (set-up, call and teardown, the session fixtures' clean-up included in the check that ends the session),
the requests sent through HostHTTP, the main thread's CPU inside ``HostHTTP.request`` (the transport, the host's
pace, guard and recording) and the rest (Hypothesis' engine and draws, the check's own logic, pytest). Written as
JSON to the file in ``BENCH_PLATFORM_SPLIT`` at the end of the run, with the process's CPU before the first check,
during the checks and in all."""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

from conformance.host.http import HostHTTP

_checks: dict[str, dict[str, float]] = {}
_current: list[str] = []
_marks: dict[str, float] = {}
_request = HostHTTP.request


@functools.wraps(_request)
def _counted(self: HostHTTP, *args: Any, **kwargs: Any) -> Any:
    started = time.thread_time()
    try:
        return _request(self, *args, **kwargs)
    finally:
        if _current:
            entry = _checks[_current[-1]]
            entry["requests"] += 1
            entry["http_cpu"] += time.thread_time() - started


HostHTTP.request = _counted  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    _marks.setdefault("checks", time.process_time())
    _checks[item.nodeid] = {"requests": 0, "http_cpu": 0.0, "cpu": 0.0}
    _current.append(item.nodeid)
    started = time.thread_time()
    yield
    _checks[item.nodeid]["cpu"] = time.thread_time() - started
    _current.pop()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _marks["finish"] = time.process_time()


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("BENCH_PLATFORM_SPLIT")
    if path and "checks" in _marks:
        result = {"checks": _checks, "start": _marks["checks"], "in_checks": _marks["finish"] - _marks["checks"]}
        result["total"] = time.process_time()
        with open(path, "w", encoding="utf-8") as out:
            json.dump(result, out)
