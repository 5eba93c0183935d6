"""Verdicts: what a check says (fail, expect, observe, needs) and the exceptions that carry it.

AssertionError
└── Failure                         a check's verdict: the target broke the rule

pytest's Skipped
├── NeedsUnmet                      the check cannot run: a capability or option is missing
└── Blocked                         a prerequisite rule failed, so this rule cannot be decided
    ├── Throttled                   the target throttled the harness beyond what it may wait
    └── TooSlow                     the check's (or the run's) time budget ran out waiting on the target

:func:`judge` maps what a check raised (any of these, the host's ``TargetError`` family, or anything else) to a
:class:`Judgement`: pure, no pytest object in or out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NoReturn

import pytest

from conformance.core import _context
from conformance.core._exceptions import InvalidResponse, LimitReached, TargetError, TargetThrottled, TargetTooSlow
from conformance.core.rules import RULES, Level
from conformance.report.model import Status, level_status
from conformance.verdict._hypothesis import replay_verdict, unwrap_hypothesis


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


class TooSlow(Blocked):
    """The check's time budget (or the run's) ran out waiting on the target: not a verdict on its rule."""

    def __init__(self, evidence: str) -> None:
        _Skipped.__init__(self, f"target too slow: {evidence}", pytrace=False)  # type: ignore[call-arg]
        self.rule_id = None  # type: ignore[assignment]  # blocked by the target's pace, not by a rule
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


# -- the judge ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """What a check's outcome says about its rules. ``failing_exchange``: the exchange the deciding failure was
    raised on (the evidence ends there: Hypothesis' replays after it are noise)."""

    status: Status
    message: str = ""
    need: str | None = None
    option: str | None = None
    blocked_by: str | None = None
    incomplete: bool = False  # the need kept the run from reaching its target
    throttled: bool = False  # blocked because the target throttled the harness
    failing_exchange: dict[str, Any] | None = None


def strictest_level(rules: Sequence[str]) -> Level:
    levels = {RULES[r].level for r in rules if r in RULES}
    return next((level for level in (Level.MUST, Level.SHOULD, Level.INFO) if level in levels), Level.MUST)


def _blocks(exc: BaseException) -> bool:
    """A prerequisite's failure or the target's throttling: says nothing about the rule being judged."""
    return isinstance(exc, Blocked | LimitReached) or (isinstance(exc, InvalidResponse) and bool(exc.blocked_by))


def verdict_exception(
    exc: BaseException, first_failure: BaseException | None = None, notes: list[str] | None = None
) -> BaseException | None:
    """The target's failure behind ``exc``, if that is what it is.

    Hypothesis wraps failures (``FlakyFailure``, an ``ExceptionGroup`` of several distinct failures): when every
    member is a verdict (a Failure, an assertion or a TargetError), the first one is the verdict, not a harness error;
    a member that is blocked (throttled, a prerequisite) counts only when no other is a verdict. Hypothesis' other
    flaky errors (a target whose answers changed when a failing case was replayed) mean the check's first failure,
    and add a note saying so to ``notes``.
    """
    if isinstance(exc, AssertionError | TargetError | Blocked):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        members = [verdict_exception(unwrap_hypothesis(e), first_failure) for e in exc.exceptions]
        if members and all(m is not None for m in members):
            return next((m for m in members if m is not None and not _blocks(m)), members[0])
    first = replay_verdict(exc, first_failure, (Blocked, LimitReached))
    if first is not None and notes is not None:
        notes.append(
            f"the target answered differently when Hypothesis replayed the failing case ({type(exc).__name__})"
        )
    return first


def _failed(exc: BaseException, level: Level, strict: bool, redact: Callable[[str], str]) -> Judgement:
    """The target broke the rule: failed (MUST), warning (SHOULD), observed (INFO)."""
    text = exc.message if isinstance(exc, Failure | InvalidResponse) else str(exc)
    message = redact(text.strip() or f"{type(exc).__name__} (no message)")
    if isinstance(exc, AssertionError) and not isinstance(exc, Failure):
        message = message.splitlines()[0] if message else "assertion failed"
    if level is Level.INFO:
        message = f"observed (INFO): {message}"
    exchange = exc.exchange if isinstance(exc, TargetError) else None
    return Judgement(level_status(Status.FAILED, level, strict), message, failing_exchange=exchange)


def _blocked(
    exc: BaseException, rules: Sequence[str], level: Level, strict: bool, redact: Callable[[str], str]
) -> Judgement:
    """Blocked by a prerequisite rule, or by the target's throttling; failed when the prerequisite is this very rule
    (a shared fixture judging it failed: the rule is not blocked by itself)."""
    if isinstance(exc, TargetThrottled):
        return Judgement(Status.BLOCKED, str(exc), throttled=True, failing_exchange=exc.exchange)
    if isinstance(exc, TargetTooSlow):
        return Judgement(Status.BLOCKED, redact(str(exc)), failing_exchange=exc.exchange)
    if isinstance(exc, InvalidResponse):
        rule_id, reason, message = exc.blocked_by, exc.message, f"blocked by {exc.blocked_by}: {exc.message}"
    else:
        assert isinstance(exc, Blocked)
        rule_id, reason, message = exc.rule_id, exc.reason, str(exc.msg)
    if rule_id is not None and rule_id in rules:
        status = level_status(Status.FAILED, level, strict)
        return Judgement(status, redact(reason or message), failing_exchange=getattr(exc, "exchange", None))
    return Judgement(Status.BLOCKED, message, blocked_by=rule_id, throttled=isinstance(exc, Throttled))


def judge(
    exc: BaseException | None,
    rules: Sequence[str],
    *,
    strict: bool = False,
    notes: Sequence[str] = (),
    first_failure: BaseException | None = None,
    first_failing_exchange: dict[str, Any] | None = None,
    missing_target: tuple[str, str] | None = None,
    redact: Callable[[str], str] = str,
) -> Judgement:
    """The verdict on ``rules`` of a check that raised ``exc`` (None: it returned).

    ``notes``: what the check observed; ``first_failure`` and ``first_failing_exchange``: the first verdict the
    check raised and the exchange it was raised on (a Hypothesis replay may end otherwise); ``missing_target``:
    (need, option) when the check was skipped for want of its target; ``redact`` scrubs secrets from messages the
    target's words reach.
    """
    if exc is None:
        return Judgement(Status.PASSED, "; ".join(notes))
    level = strictest_level(rules)
    notes = list(notes)
    found = verdict_exception(exc, first_failure, notes)
    if isinstance(exc, NeedsUnmet):
        judgement = Judgement(Status.SKIPPED, str(exc.msg), exc.need, exc.option, incomplete=exc.incomplete)
    elif isinstance(exc, _Skipped) and not isinstance(exc, Blocked):
        need, option = missing_target or (None, None)
        judgement = Judgement(Status.SKIPPED, str(getattr(exc, "msg", "") or "skipped"), need, option)
    elif found is not None and _blocks(found):
        judgement = _blocked(found, rules, level, strict, redact)
    elif found is not None:
        judgement = _failed(found, level, strict, redact)
        if found is first_failure and judgement.failing_exchange is None:
            judgement = _with(judgement, failing_exchange=first_failing_exchange)
    else:
        judgement = Judgement(Status.ERROR, redact(f"harness error: {type(exc).__name__}: {exc}"))
    if notes and judgement.status is not Status.PASSED:
        judgement = _with(judgement, message="; ".join([judgement.message, *notes]))
    return judgement


def _with(judgement: Judgement, **changes: Any) -> Judgement:
    return replace(judgement, **changes)
