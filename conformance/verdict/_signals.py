"""The host's signals as verdicts, on the pytest face of the harness.

``conformance.host`` knows no verdicts: it raises :class:`~conformance.core._exceptions.InvalidResponse` (the answer
broke a rule; with ``blocked_by``, a prerequisite's rule), :class:`~conformance.core._exceptions.TargetThrottled` (the
target throttled the harness) and :class:`~conformance.core._exceptions.TargetTooSlow` (the check's time is up). A
check must meet the last three as what they stand for, ``Blocked``, ``Throttled`` and ``TooSlow`` (pytest skips),
at once: inside a Hypothesis example above all, where any other exception is a
failing case that Hypothesis shrinks and replays against a target that is already refusing it. An
``InvalidResponse`` without ``blocked_by`` is already a verdict (a ``TargetError``): it passes as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, TypeVar

from conformance.core._exceptions import InvalidResponse, LimitReached, TargetThrottled, TargetTooSlow
from conformance.verdict._verdicts import Blocked, Throttled, TooSlow

F = TypeVar("F", bound=Callable[..., Any])


def as_verdict(exc: BaseException) -> BaseException:
    """The verdict exception a host signal stands for; any other exception as it is."""
    if isinstance(exc, TargetThrottled):
        return Throttled(exc.evidence)
    if isinstance(exc, TargetTooSlow):
        return TooSlow(exc.evidence)
    if isinstance(exc, InvalidResponse) and exc.blocked_by is not None:
        return Blocked(exc.blocked_by, exc.message)
    return exc


@contextmanager
def host_verdicts() -> Iterator[None]:
    """Raise a host signal met inside as its verdict."""
    try:
        yield
    except (InvalidResponse, LimitReached) as exc:
        verdict = as_verdict(exc)
        if verdict is exc:
            raise
        raise verdict from exc


def with_host_verdicts(function: F) -> F:
    """``function`` with :func:`host_verdicts` around each call."""

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with host_verdicts():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
