"""Independent pieces of work at once, at most ``limit`` at a time, their evidence as if run one after another.

A check that sends many independent cases (the attacks of a table, probes of different tools, documents to fetch)
waits for the network once per case when it sends them in turn; for a distant target that makes the run's
whole duration. :func:`each` runs them on threads of the sync :class:`~conformance.host.http.HostHTTP` (whose pooled
client is shared: one connection pool per target, no handshake per case), :func:`each_async` as tasks on the async
twin's loop. Both keep what a reviewer reads unchanged:

- each piece records into a lane of its own (:func:`conformance.core._context.open_lane`): its exchanges, notes and
  waits; once all are done the lanes are merged into the running check in the order of the items, never in the
  order they finished, each exchange filed under its item's case when ``case`` names one;
- every request still passes the run's pacer (rate-limit budgets, throttle waits), which counts the requests in
  flight, so that pieces sent at once never spend a window past its reserve;
- the results come back in the order of the items; the first error, in that order, is raised once every piece that
  started has ended and been merged; after an error no piece that has not started yet starts.

``limit`` 1 runs the pieces one after another on the caller's thread, as a plain loop would.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from conformance.core import _context

T = TypeVar("T")
R = TypeVar("R")
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 32
AUTO = "auto"  # --concurrency auto (the default): DEFAULT_CONCURRENCY cases; checks from it to AUTO_CHECKS_AT_ONCE
AUTO_CHECKS_AT_ONCE = 16


def cases_at_once(setting: object) -> int:
    """The cases of a check run at once for a ``--concurrency`` setting (a number, or auto)."""
    return DEFAULT_CONCURRENCY if setting in (None, AUTO) else max(1, int(setting))  # type: ignore[call-overload]


@dataclass
class Outcome(Generic[R]):
    """What one piece of work gave: its value, or the exception it raised."""

    value: R | None = None
    error: BaseException | None = None

    def get(self) -> R:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


class _Run(Generic[T, R]):
    def __init__(self, items: Iterable[T], case: Callable[[T], str | None] | None) -> None:
        self.items = list(items)
        self.case = case
        self.lanes = [_context.open_lane() for _ in self.items]
        self.outcomes: list[Outcome[R] | None] = [None] * len(self.items)  # None: never started
        self.stop = threading.Event()

    def done(self, index: int, outcome: Outcome[R]) -> None:
        self.outcomes[index] = outcome
        if outcome.error is not None:
            self.stop.set()

    def merged(self) -> list[Outcome[R] | None]:
        """Merge the lanes of the pieces that ran, in the items' order."""
        for item, lane, outcome in zip(self.items, self.lanes, self.outcomes, strict=True):
            if lane is not None and outcome is not None:
                _context.merge_lane(lane, self.case(item) if self.case is not None else None)
        return self.outcomes


def outcomes(
    items: Iterable[T],
    work: Callable[[T], R],
    *,
    limit: int,
    case: Callable[[T], str | None] | None = None,
) -> list[Outcome[R] | None]:
    """``work(item)`` for each item, at most ``limit`` at a time (threads); per item, in the items' order, its
    :class:`Outcome`, or None when it never started (an earlier piece raised). See the module's docstring."""
    run: _Run[T, R] = _Run(items, case)

    def piece(index: int) -> None:
        if run.stop.is_set():
            return
        token = _context.enter_lane(run.lanes[index])
        try:
            run.done(index, Outcome(value=work(run.items[index])))
        except BaseException as exc:
            run.done(index, Outcome(error=exc))
        finally:
            _context.leave_lane(token)

    if limit <= 1 or len(run.items) <= 1:
        for index in range(len(run.items)):
            contextvars.copy_context().run(piece, index)
    else:
        from concurrent.futures import ThreadPoolExecutor, wait  # only when pieces run at once

        pool = ThreadPoolExecutor(max_workers=min(limit, len(run.items)), thread_name_prefix="conformance-case")
        try:
            futures = [pool.submit(contextvars.copy_context().run, piece, i) for i in range(len(run.items))]
            wait(futures)
        finally:
            run.stop.set()  # interrupted while waiting: no further piece starts
            pool.shutdown(wait=True)
    return run.merged()


def each(
    items: Iterable[T],
    work: Callable[[T], R],
    *,
    limit: int,
    case: Callable[[T], str | None] | None = None,
) -> list[R]:
    """The values of ``work(item)`` in the items' order, at most ``limit`` at a time; the first error (in the items'
    order) raised once every started piece has ended and its evidence is merged."""
    return [outcome.get() for outcome in outcomes(items, work, limit=limit, case=case) if outcome is not None]


async def each_async(
    items: Iterable[T],
    work: Callable[[T], Awaitable[R]],
    *,
    limit: int,
    case: Callable[[T], str | None] | None = None,
) -> list[R]:
    """:func:`each` on the caller's event loop: ``await work(item)`` as tasks, at most ``limit`` at a time."""
    import asyncio  # the caller's loop runs: asyncio is loaded already

    run: _Run[T, R] = _Run(items, case)
    gate = asyncio.Semaphore(max(1, limit))

    async def piece(index: int) -> None:
        async with gate:
            if run.stop.is_set():
                return
            _context.enter_lane(run.lanes[index])  # the task's own copy of the context
            try:
                run.done(index, Outcome(value=await work(run.items[index])))
            except Exception as exc:
                run.done(index, Outcome(error=exc))

    tasks = [asyncio.ensure_future(piece(i)) for i in range(len(run.items))]
    try:
        await asyncio.gather(*tasks)
    finally:
        run.stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return [outcome.get() for outcome in run.merged() if outcome is not None]


__all__ = [
    "AUTO",
    "AUTO_CHECKS_AT_ONCE",
    "DEFAULT_CONCURRENCY",
    "MAX_CONCURRENCY",
    "Outcome",
    "cases_at_once",
    "each",
    "each_async",
    "outcomes",
]
