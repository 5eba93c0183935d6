"""Early fixture work (conformance/core/_early.py) outside a run: a generator fixture's teardown, work no fixture
took, and the work's own log."""

from __future__ import annotations

import contextvars
import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

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


@_early.early()
def logging_work(base: str) -> contextvars.Context:
    """Logs, and gives the context it ran in (for a record made in it later)."""
    logging.getLogger("target").warning("record-of-the-work")
    return contextvars.copy_context()


class Receiver:
    """A run loop's side of early work's logs (``_early.LogReceiver``): what it was handed, as messages."""

    def __init__(self) -> None:
        self.logs: dict[str, list[str]] = {"taken": [], "forgotten": [], "unkept": []}

    def taken(self, work: _early.Started) -> None:
        self.logs["taken"] += [record.getMessage() for record in work.hand_on_log()]

    def forgotten(self, work: _early.Started) -> None:
        self.logs["forgotten"] += [record.getMessage() for record in work.hand_on_log()]

    def unkept(self, record: logging.LogRecord) -> None:
        self.logs["unkept"].append(record.getMessage())


def test_work_keeps_its_log_from_its_start_and_hands_it_to_its_fixture() -> None:
    """Work started before a receiver takes logs (the run loop's start, while pytest collects) keeps its records all
    the same; a record made in its context once its fixture has taken them is no longer the work's."""
    _early.start(logging_work, {"base": "base"}, rules=(), budget_s=None).wait()
    receiver = Receiver()
    with _early.logs_handed_to(receiver):
        context = logging_work("unused")  # pytest's call: the wrapper takes the started work
        assert receiver.logs == {"taken": ["record-of-the-work"], "forgotten": [], "unkept": []}
        context.run(logging.getLogger("target").warning, "record-after-it-was-taken")
    assert receiver.logs["unkept"] == ["record-after-it-was-taken"]


def test_the_log_of_work_no_fixture_took_is_handed_on_when_it_is_forgotten() -> None:
    _early.start(logging_work, {"base": "base"}, rules=(), budget_s=None).wait()
    receiver = Receiver()
    with _early.logs_handed_to(receiver):
        _early.settle()
    assert receiver.logs == {"taken": [], "forgotten": ["record-of-the-work"], "unkept": []}


def test_early_work_that_names_its_imports_starts_once_they_are_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two threads importing one package at once may meet each other's half-built modules: the work waits for
    the thread importing its modules ahead instead of importing them beside it."""
    for name in ("slow_to_import", "slow_to_import_too"):
        (tmp_path / f"{name}.py").write_text("import time\ntime.sleep(0.5)\nDONE = True\n")
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))

    @_early.early(imports=("slow_to_import",))
    def uses_it() -> bool:
        module = sys.modules.get("slow_to_import")
        return bool(getattr(module, "DONE", False))  # read without importing: imported ahead, or not yet

    @_early.early(imports=("slow_to_import_too",))
    def set_up_the_usual_way() -> bool:
        return bool(getattr(sys.modules.get("slow_to_import_too"), "DONE", False))

    _early.import_ahead(["slow_to_import"])
    started = _early.start(uses_it, {}, rules=(), budget_s=None)
    assert started.value() is True
    _early.import_ahead(["slow_to_import_too"])
    assert set_up_the_usual_way() is True  # a fixture nobody started waits as well
