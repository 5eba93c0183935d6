"""A pytest plugin for ``benchmarks/latency.py``: which session fixture made which exchange, what each fixture takes,
and what each check takes, written as JSON to ``$CONFORMANCE_FIXTURE_CHAINS`` when the run ends.

An exchange a session fixture made while it was set up (or while its early work ran, merged when it is set up) is
marked ``"fixture": name`` in the evidence (the report keeps an exchange's extra keys), the innermost fixture first;
the critical path then follows, for each check, the fixtures it waited for and those they took in turn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import pytest

from conformance.core import _context, _early

_TAKES: dict[str, list[str]] = {}  # fixture name -> the fixtures it takes (arguments, asks, after)
_CHECKS: dict[str, list[str]] = {}  # check node id -> the fixtures it takes


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Generator[None, None, None]:
    record = _context.current()
    before = len(record.exchanges) if record is not None else 0
    yield
    function = fixturedef.func
    names = (*fixturedef.argnames, *_early.asks_of(function), *(_early.after_of(function) or ()))
    _TAKES[fixturedef.argname] = [name for name in names if name != "request"]
    if record is not None and fixturedef.scope == "session":
        for exchange in record.exchanges[before:]:
            exchange.setdefault("fixture", fixturedef.argname)


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        info = getattr(item, "_fixtureinfo", None)
        _CHECKS[item.nodeid] = list(info.argnames) if info is not None else []


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("CONFORMANCE_FIXTURE_CHAINS")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"fixtures": _TAKES, "checks": _CHECKS}, out)
