"""Time budgets: a check's (``--max-check-time``) and the run's (``--max-run-time``).

A check's requests share its budget: each is given no more time than is left of it (its connect and read
timeouts shortened to fit), and a request that would start, or a body still arriving, once it is spent ends the
check as blocked, "target too slow". The target's rate-limit waits and a check's deliberate waits (a token's
lifetime waited out) are not the target being slow: they extend the check's budget, never the run's. Once the
run's budget is spent no further check starts (see :mod:`conformance.pytest.plugin`): the run ends INCOMPLETE with what
was decided.
"""

from __future__ import annotations

import time
from typing import Any

from conformance.core import _context
from conformance.core._exceptions import TargetTooSlow

DEFAULT_MAX_CHECK_TIME = 120.0
_run: dict[str, float | None] = {"deadline": None, "budget": None}


def start_run(budget_s: float | None, *, left_s: float | None = None) -> None:
    """The run's budget starts now (``left_s``: what is left of it, for an xdist worker the controller started)."""
    if budget_s is None or budget_s <= 0:
        _run.update(deadline=None, budget=None)
        return
    _run.update(deadline=time.monotonic() + (budget_s if left_s is None else left_s), budget=budget_s)


def run_left() -> float | None:
    """Seconds left of the run's budget (None: no run budget)."""
    deadline = _run["deadline"]
    return None if deadline is None else deadline - time.monotonic()


def run_spent() -> bool:
    left = run_left()
    return left is not None and left <= 0


def check_budget_s(settings: Any) -> float | None:
    """A check's budget in seconds as ``settings`` set it (``conformance.config.Settings``, a run's or a named
    target's; None: unbounded)."""
    budget = settings.get("max_check_time", DEFAULT_MAX_CHECK_TIME)
    return float(budget) if budget is not None else None


def start_check(record: _context.CheckRecord, budget_s: float | None) -> None:
    """The running check's budget starts now."""
    record.deadline = time.monotonic() + budget_s if budget_s and budget_s > 0 else None
    record.budget_s = budget_s if record.deadline is not None else None


def wait(seconds: float) -> None:
    """A deliberate wait of a check (not the target's slowness): slept, and not counted in its budget."""
    record = _context.current()
    if record is not None:
        record.waited_s += max(seconds, 0.0)
    time.sleep(max(seconds, 0.0))


def left(now: float | None = None) -> tuple[float, str] | None:
    """Seconds left to the running check (its budget or the run's, the sooner) and which budget that is; None
    when neither applies."""
    now = time.monotonic() if now is None else now
    found: list[tuple[float, str]] = []
    record = _context.current()
    if record is not None and record.deadline is not None:
        excused = record.throttle_wait_s + record.waited_s
        found.append(
            (record.deadline + excused - now, f"the check's time budget ({record.budget_s:g}s, --max-check-time)")
        )
    if _run["deadline"] is not None and record is not None:
        found.append((_run["deadline"] - now, f"the run's time budget ({_run['budget'] or 0:g}s, --max-run-time)"))
    return min(found) if found else None


def seconds_left(now: float | None = None) -> float | None:
    """The seconds of :func:`left` alone, without the words that name the budget: most calls only compare them
    (each request, each chunk of an answer read), and words are made only for a budget that is spent."""
    record = _context.current()
    if record is None:
        return None
    now = time.monotonic() if now is None else now
    found = None
    if record.deadline is not None:
        found = record.deadline + record.throttle_wait_s + record.waited_s - now
    if _run["deadline"] is not None:
        run = _run["deadline"] - now
        found = run if found is None else min(found, run)
    return found


def check(what: str, now: float | None = None) -> None:
    """Raise :class:`TargetTooSlow` when the running check's time is up (``what``: the request, as shown)."""
    found = left(now)
    if found is not None and found[0] <= 0:
        raise TargetTooSlow(f"{what}: {found[1]} is spent")


def spent(now: float | None = None) -> bool:
    found = seconds_left(now)
    return found is not None and found <= 0


# A request's timeouts are shortened to what is left of the budget: one that fires this close to the budget's end
# is the budget's, not the target's alone.
TIMEOUT_SLACK_S = 0.05


def cut_short_by() -> str | None:
    """The budget (in words) that a timeout met just now was cut short by, or None: the target's own timeout."""
    if not spent(time.monotonic() + TIMEOUT_SLACK_S):
        return None
    found = left()
    return None if found is None else found[1]


__all__ = [
    "DEFAULT_MAX_CHECK_TIME",
    "check",
    "check_budget_s",
    "cut_short_by",
    "left",
    "run_left",
    "run_spent",
    "seconds_left",
    "start_check",
    "start_run",
    "wait",
]
