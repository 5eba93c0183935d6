"""The seconds a check has left: ``seconds_left`` (what each request and each chunk read compares) is ``left``'s
figure, whichever budget is the sooner, without the words that name it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from conformance.core import _budget, _context


@pytest.fixture(autouse=True)
def _no_run_budget() -> Iterator[None]:
    yield
    _budget.start_run(None)


def _agree(now: float) -> float | None:
    found, words = _budget.left(now), _budget.seconds_left(now)
    assert (found[0] if found is not None else None) == words
    return words


def test_no_check_no_budget() -> None:
    _budget.start_run(100.0)
    assert _context.current() is None and _agree(1.0) is None


@pytest.mark.parametrize(("check_s", "run_s"), [(None, None), (5.0, None), (None, 3.0), (5.0, 3.0), (2.0, 30.0)])
def test_the_sooner_budget_and_its_excused_waits(check_s: float | None, run_s: float | None) -> None:
    _budget.start_run(run_s)
    record = _context.begin(("AUTH-PRM-01",))
    try:
        _budget.start_check(record, check_s)
        for waited in (0.0, 1.5):  # deliberate waits (and rate-limit ones) are not the target's slowness
            record.waited_s, record.throttle_wait_s = waited, waited / 2
            for later in (-10.0, 0.0, 2.5, 4.0, 50.0):
                now = time.monotonic() + later
                found = _agree(now)
                assert (found is None) == (check_s is None and run_s is None)
                assert _budget.spent(now) == (found is not None and found <= 0)
    finally:
        _context.end()
