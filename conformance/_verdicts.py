"""What a check says: fail, expect, observe, needs."""

from __future__ import annotations

from typing import NoReturn

from conformance import _context
from conformance._exceptions import Failure, NeedsUnmet


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
