"""Early fixture work (conformance/core/_early.py) outside a run: a generator fixture's teardown, and work no
fixture took."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from conformance.core import _early

EVENTS: list[str] = []
RELEASE = threading.Event()


@_early.early()
def served(base: str) -> Iterator[str]:
    EVENTS.append("up")
    RELEASE.wait(timeout=10)
    yield base + "+served"
    EVENTS.append("down")


def setup_function() -> None:
    EVENTS.clear()
    RELEASE.clear()
    _early.settle(wait=False)


def test_a_generator_fixture_started_early_is_torn_down_by_its_fixture() -> None:
    RELEASE.set()
    _early.start(served, {"base": "base"}, rules=(), budget_s=None)
    fixture = served("unused")  # pytest's call: the wrapper takes the started work
    assert next(fixture) == "base+served"
    assert EVENTS == ["up"]
    assert next(fixture, "ended") == "ended"
    assert EVENTS == ["up", "down"]


def test_work_no_fixture_took_is_torn_down_when_it_ends() -> None:
    started = _early.start(served, {"base": "base"}, rules=(), budget_s=None)
    _early.settle(wait=False)  # forgotten while it still runs
    RELEASE.set()
    started.wait()
    assert EVENTS == ["up", "down"]


def test_work_no_fixture_took_and_that_has_ended_is_torn_down_when_forgotten() -> None:
    RELEASE.set()
    started = _early.start(served, {"base": "base"}, rules=(), budget_s=None)
    started.wait()
    assert EVENTS == ["up"]
    _early.settle()
    assert EVENTS == ["up", "down"]


def test_a_function_marked_early_is_found_by_its_name() -> None:
    assert _early.named(f"{__name__}.served") is served
    assert _early.named(f"{__name__}.nothing") is None
