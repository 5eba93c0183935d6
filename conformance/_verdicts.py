"""Verdicts: what a check says (fail, expect, observe, needs) and the exceptions that carry it.

AssertionError
└── Failure                         a check's verdict: the target broke the rule

pytest's Skipped
├── NeedsUnmet                      the check cannot run: a capability or option is missing
└── Blocked                         a prerequisite rule failed, so this rule cannot be decided
    └── Throttled                   the target throttled the harness beyond what it may wait
"""

from __future__ import annotations

from typing import NoReturn

import pytest

from conformance import _context


class Failure(AssertionError):
    """A check's negative verdict. ``message`` says what the target did and what the rule wanted."""

    def __init__(self, message: str, *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.title = title
        _context.note_failure(self)


_Skipped: type[BaseException] = pytest.skip.Exception


class NeedsUnmet(_Skipped):  # type: ignore[misc,valid-type]
    """The check needs something the target or the configuration does not offer."""

    def __init__(self, need: str, option: str | None = None, *, incomplete: bool = False) -> None:
        reason = f"needs {need}" + (f" (supply with {option})" if option else "")
        super().__init__(reason, pytrace=False)
        self.need = need
        self.option = option
        # Without it the run never reaches its target (no account linked, no API key): the run is INCOMPLETE.
        self.incomplete = incomplete


class Blocked(_Skipped):  # type: ignore[misc,valid-type]
    """A prerequisite rule failed; this rule cannot be decided and is reported as blocked by it."""

    def __init__(self, rule_id: str, reason: str = "") -> None:
        super().__init__(f"blocked by {rule_id}" + (f": {reason}" if reason else ""), pytrace=False)
        self.rule_id = rule_id
        self.reason = reason


class Throttled(Blocked):
    """A check met a throttled answer (429, or 503 overload) it could not wait out: not a verdict on its rule."""

    def __init__(self, evidence: str) -> None:
        _Skipped.__init__(self, f"target throttled the harness: {evidence}", pytrace=False)  # type: ignore[call-arg]
        self.rule_id = None  # type: ignore[assignment]  # blocked by the target's limits, not by a rule
        self.reason = evidence


def fail(message: str) -> NoReturn:
    """The target broke the rule: say what it did and what the rule wanted."""
    raise Failure(message)


def expect(condition: object, message: str) -> None:
    """``fail(message)`` unless ``condition`` holds."""
    if not condition:
        raise Failure(message)


def observe(message: str) -> None:
    """Note an observation on the running check (reported with its verdict, never changes it)."""
    record = _context.current()
    if record is not None:
        record.notes.append(message)


def needs(what: str, option: str | None = None, *, incomplete: bool = False) -> NoReturn:
    """Skip: the check needs ``what``, which ``option`` supplies. ``incomplete``: without it the run cannot reach
    its target at all (credentials, API key, publisher), so the run's verdict is INCOMPLETE, never ACCEPTED."""
    raise NeedsUnmet(what, option, incomplete=incomplete)
