"""A pytest plugin for the harness run of tests/suites/platform/test_rate_limited.py (``-p`` names it): while
RL-03's check runs, the file named by ``RL03_FLAG_FILE`` exists, so that the sandbox serving the run in the test's
process can tell RL-03's requests from the others (its limiter clock stands still during RL-03's burst)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

FLAG_ENV = "RL03_FLAG_FILE"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    marker = item.get_closest_marker("conformance_rule")
    flag = Path(os.environ[FLAG_ENV]) if marker is not None and "RL-03" in marker.args else None
    if flag is not None:
        flag.touch()
    try:
        return (yield)
    finally:
        if flag is not None:
            flag.unlink(missing_ok=True)
