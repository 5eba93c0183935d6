"""Session fixtures whose work may start early, on a thread of its own, while other checks run.

While the bodies of checks overlap (``conformance/pytest/_overlap.py``), their fixtures are still set up one check
at a time on the main thread: a fixture that waits on the target for seconds (a tool listing, another account's
authorization) holds every later check's start back. A fixture function marked :func:`early` may instead be started
by the run loop as soon as every fixture it takes (and those it names in ``after``) has its value, on a thread of
its own; when pytest later sets it up for the first check that uses it, it takes that work's outcome:

- the work records into a record of its own (a lane, with the rules and the time budget of that first check), and
  its evidence, notes and run-wide steps are merged into that check's record when the fixture is set up: the same
  check holds the same evidence as when the fixture ran there;
- what the work raised (a ``Blocked``, a ``NeedsUnmet``) is raised by the fixture at that moment, and pytest caches
  it for every later user as before;
- the log records made while the work runs (on its thread, and on the threads and tasks it starts with a copy of
  its context: :func:`working` tells whose work a record is made in) are kept as its own log from its start, and
  handed to that first user's captured log when the fixture is set up (the run loop takes them,
  :func:`logs_handed_to`); those of work no fixture takes, when the run forgets it;
- a fixture nobody started runs as it always did (pytest's own loop never starts one).

The work must be the harness's own: it may not set up other fixtures (``request`` stands for the fixtures already
set up, see :class:`SetUp`). A generator fixture's work runs up to its ``yield``; what follows (its teardown) runs
when pytest tears the fixture down, or, for work no fixture took, when the run forgets it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, Protocol, TypeVar

from conformance.core import _context

F = TypeVar("F", bound=Callable[..., Any])

EARLY_ATTRIBUTE = "conformance_early_after"
_NAMED: dict[str, Callable[..., Any]] = {}  # module.qualname of each function marked early -> its fixture function
IMPORTS_ATTRIBUTE = "conformance_early_imports"
ASKS_ATTRIBUTE = "conformance_asks"


def early(*, after: tuple[str, ...] = (), imports: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Mark a session fixture's function as work the run loop may start early (see the module's docstring).
    ``after``: fixtures the work asks ``request`` for, which must be set up before it starts. ``imports``: modules
    the work imports (costly ones), which the loop imports on a thread of their own as the run starts when a check
    uses the fixture, so that the work does not wait for them when it starts (:func:`import_ahead`)."""

    def decorate(function: F) -> F:
        fixture: Callable[..., Any]
        if inspect.isgeneratorfunction(function):

            @functools.wraps(function)
            def fixture(*args: Any, **kwargs: Any) -> Any:  # a generator too: pytest tears it down
                started = _take(fixture)
                if started is None:
                    wait_for_imports(imports)
                    yield from function(*args, **kwargs)
                    return
                try:
                    yield started.outcome()
                finally:
                    started.close()

        else:

            @functools.wraps(function)
            def fixture(*args: Any, **kwargs: Any) -> Any:
                started = _take(fixture)
                if started is not None:
                    return started.outcome()
                wait_for_imports(imports)
                return function(*args, **kwargs)

        setattr(fixture, EARLY_ATTRIBUTE, tuple(after))  # the work itself is fixture.__wrapped__
        setattr(fixture, IMPORTS_ATTRIBUTE, tuple(imports))
        _NAMED[f"{function.__module__}.{function.__qualname__}"] = fixture
        return fixture  # type: ignore[return-value]

    return decorate


def named(name: str) -> Callable[..., Any] | None:
    """The fixture function of the function marked :func:`early` named ``module.qualname`` (None if none is): what
    work started before its fixture is known to pytest (``pytest/_head_start.py``) is started for."""
    return _NAMED.get(name)


def after_of(function: object) -> tuple[str, ...] | None:
    """The ``after`` names of a function marked :func:`early`, None for any other."""
    return getattr(function, EARLY_ATTRIBUTE, None)


def imports_of(function: object) -> tuple[str, ...]:
    return tuple(getattr(function, IMPORTS_ATTRIBUTE, ()))


def import_ahead(modules: Iterable[str]) -> threading.Thread | None:
    """Import ``modules`` on a daemon thread (None when there are none). A module that fails to import is left
    for its user, whose own import then raises as it would have."""
    names = list(dict.fromkeys(modules))
    if not names:
        return None

    def load() -> None:
        for name in names:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    thread = threading.Thread(target=load, name="conformance-import-ahead", daemon=True)
    with _lock:
        _importing.update(dict.fromkeys(names, thread))
    thread.start()
    return thread


def wait_for_imports(modules: Iterable[str]) -> None:
    """Wait until what :func:`import_ahead` imports of ``modules`` is imported: two threads importing the same
    package at once may each meet the other's half-built modules (the import system's deadlock escape hands one
    of them a module still being built)."""
    with _lock:
        threads = {_importing[name] for name in modules if name in _importing}
    for thread in threads:
        thread.join()


def asks(*names: str) -> Callable[[F], F]:
    """Mark a fixture's function that sets up the fixtures ``names`` from its body (``request.getfixturevalue``,
    e.g. to take the need one raises as its value): the run loop then knows that its users use them, and may start
    those marked :func:`early` ahead."""

    def decorate(function: F) -> F:
        setattr(function, ASKS_ATTRIBUTE, names)
        return function

    return decorate


def asks_of(function: object) -> tuple[str, ...]:
    return tuple(getattr(function, ASKS_ATTRIBUTE, ()))


class SetUp:
    """``request`` for early work: the values of fixtures already set up (a fixture not among them is a harness
    error, the work's ``after`` must name it)."""

    def __init__(self, values: Mapping[str, Callable[[], Any]]) -> None:
        self._values = values

    def getfixturevalue(self, name: str) -> Any:
        if name not in self._values:
            raise RuntimeError(f"early fixture work asked for {name!r}, which its after=(...) does not name")
        return self._values[name]()


# What one early work's prints are kept up to (characters), for its first user: a run is bounded in memory whatever a
# target makes a check print.
OUTPUT_KEPT_CHARS = 200_000
LEFT_OUT = "the rest of this early work's output left out,"


class Started:
    """Early work running (or done) on its thread."""

    def __init__(self, work: Callable[[], Any], rules: tuple[str, ...], budget_s: float | None) -> None:
        self.lane = _context.CheckRecord(rules=rules)
        if budget_s:
            self.lane.deadline, self.lane.budget_s = time.monotonic() + budget_s, budget_s
        self._value: Any = None
        self._error: BaseException | None = None
        self._merged = False
        self._log: list[logging.LogRecord] | None = []  # its records until handed on (None from then on)
        self._printed: list[tuple[str, str]] | None = []  # (stream, text) it printed, until handed on
        self._printed_chars = 0
        self._rest: Generator[Any, Any, Any] | None = None  # a generator fixture's teardown, past its yield
        self._forgotten = False  # no fixture took it: its teardown runs as soon as it has ended
        self._ended = False
        context: contextvars.Context = _context.lane_context(self.lane)
        context.run(_work.set, self)
        with _keeping_lock:
            _keeping.add(self)
            _place_keeper()
        self._thread = threading.Thread(
            target=context.run, args=(self._run, work), name="conformance-early-fixture", daemon=True
        )
        self._thread.start()

    def _run(self, work: Callable[[], Any]) -> None:
        try:
            value = work()
            if inspect.isgenerator(value):  # a generator fixture's work: up to its yield
                self._rest = value
                value = next(value)
            self._value = value
        except BaseException as exc:  # raised again where the fixture is set up
            self._error = exc
        with _lock:
            self._ended, forgotten = True, self._forgotten
        if forgotten:
            self._close_forgotten()

    def close(self) -> None:
        """Run a generator fixture's teardown (nothing for other work, or once it has run)."""
        rest, self._rest = self._rest, None
        if rest is None:
            return
        try:
            next(rest)
        except StopIteration:
            return
        rest.close()
        raise RuntimeError("an early fixture's generator yielded more than once")

    def forget(self) -> None:
        """No fixture will take this work: its teardown runs now if it has ended, else as soon as it ends; its log
        goes to the run (:func:`logs_handed_to`)."""
        with _lock:
            self._forgotten, ended = True, self._ended
        if _receiver is not None:
            _receiver.forgotten(self)
        else:
            self.hand_on_log()
        if ended:
            self._close_forgotten()

    def _close_forgotten(self) -> None:
        # Nobody set the fixture up, so no check reports its teardown: a failing one is left unsaid, as pytest
        # leaves a fixture it never set up.
        with contextlib.suppress(Exception):
            self.close()

    def wait(self) -> None:
        self._thread.join()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def keep(self, record: logging.LogRecord) -> bool:
        """Keep ``record`` in its log, unless its log was handed on (False)."""
        with _lock:
            if self._log is None:
                return False
            self._log.append(record)
            return True

    def keep_output(self, stream: str, text: str) -> bool:
        """Keep what it printed (``stream``: stdout or stderr), unless its output was handed on (False). Past
        :data:`OUTPUT_KEPT_CHARS` in all, the rest is left out, and one line says so."""
        with _lock:
            if self._printed is None:
                return False
            room = OUTPUT_KEPT_CHARS - self._printed_chars
            if room > 0:
                self._printed.append((stream, text[:room]))
                if room < len(text):
                    self._printed.append((stream, f"\n[conformance: {LEFT_OUT} past {OUTPUT_KEPT_CHARS} characters]\n"))
            self._printed_chars += len(text)
            return True

    def hand_on_output(self) -> list[tuple[str, str]]:
        """What it printed, once: from now on what it prints goes where the run's output goes."""
        with _lock:
            printed, self._printed = self._printed or [], None
        return printed

    def hand_on_log(self) -> list[logging.LogRecord]:
        """The records it kept, once: from now on it keeps none (those made in its context go where the run puts
        the records of no check)."""
        with _lock:
            log, self._log = self._log or [], None
        with _keeping_lock:
            _keeping.discard(self)
            _place_keeper()
        return log

    def value(self) -> Any:
        """The work's value or its exception, once it has ended, for other early work that takes it: its record
        stays for the fixture's first user."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def outcome(self) -> Any:
        """The work's value or its exception, once it has ended; its record merged into the running check's."""
        self.wait()
        if not self._merged:
            self._merged = True
            _context.merge_lane(self.lane)
            if _receiver is not None:
                _receiver.taken(self)
            else:
                self.hand_on_log()
        return self.value()


# The work whose context this is (None outside early work): set in the context the work runs in, so that the threads
# and tasks it starts with a copy of that context are its own too.
_work: contextvars.ContextVar[Started | None] = contextvars.ContextVar("conformance_early_work", default=None)


def working() -> Started | None:
    """The early work this thread or task runs for (None outside early work)."""
    return _work.get()


class LogReceiver(Protocol):
    """What takes early work's log records (the run loop: ``conformance/pytest/_overlap.py``)."""

    def taken(self, work: Started) -> None:
        """``work``'s fixture is being set up (in its first user's set-up, on the thread that sets it up): take its
        log (:meth:`Started.hand_on_log`)."""

    def forgotten(self, work: Started) -> None:
        """The run forgot ``work`` (no fixture took it): take its log."""

    def unkept(self, record: logging.LogRecord) -> None:
        """A record made in the context of work whose log was handed on."""


class _Keeper(logging.Handler):
    """On the root logger while some work keeps its log or a receiver takes them: each record made in a work's
    context is that work's, or, once its log was handed on, the receiver's."""

    def emit(self, record: logging.LogRecord) -> None:
        work = _work.get()
        if work is not None and not work.keep(record) and _receiver is not None:
            _receiver.unkept(record)


_KEEPER = _Keeper()
_receiver: LogReceiver | None = None
_keeping: set[Started] = set()  # the work keeping its log
_keeping_lock = threading.Lock()


def _place_keeper() -> None:
    """The keeper on the root logger while it has something to do (called under ``_keeping_lock``)."""
    root = logging.getLogger()
    if _keeping or _receiver is not None:
        if _KEEPER not in root.handlers:
            root.addHandler(_KEEPER)
    else:
        root.removeHandler(_KEEPER)


@contextlib.contextmanager
def logs_handed_to(receiver: LogReceiver) -> Iterator[None]:
    """Hand early work's logs to ``receiver`` meanwhile (outside, a log is dropped when it is handed on, and so is
    a record made in the context of work whose log was)."""
    global _receiver
    with _keeping_lock:
        previous, _receiver = _receiver, receiver
        _place_keeper()
    try:
        yield
    finally:
        with _keeping_lock:
            _receiver = previous
            _place_keeper()


_started: dict[object, Started] = {}
_importing: dict[str, threading.Thread] = {}  # module -> the thread import_ahead imports it on
_lock = threading.Lock()


def start(function: object, arguments: Mapping[str, Any], *, rules: tuple[str, ...], budget_s: float | None) -> Started:
    """Start the work of ``function`` (marked :func:`early`) with its fixtures' values (a :class:`Started` one: the
    value of early work started before, waited for on the new work's thread): its fixture takes the outcome when it
    is next set up."""
    body = getattr(function, "__wrapped__")  # noqa: B009 (set by functools.wraps in early())

    def work() -> Any:
        values = {name: v.value() if isinstance(v, Started) else v for name, v in arguments.items()}
        wait_for_imports(imports_of(function))  # imported ahead: not a second time beside it
        return body(**values)

    started = Started(work, rules, budget_s)
    with _lock:
        _started[function] = started
    return started


def started_for(function: object) -> Started | None:
    """The work started for ``function`` that no fixture took yet, if any (left for its fixture to take)."""
    with _lock:
        return _started.get(function)


def _take(function: object) -> Started | None:
    with _lock:
        return _started.pop(function, None)


def settle(*, wait: bool = True) -> None:
    """Wait for every started work that no fixture took (a run that stops early, a change of fleet target) and
    forget it: the fixtures of what comes next start afresh. ``wait=False`` (an interrupted run): forget only."""
    with _lock:
        left = list(_started.values())
        _started.clear()
    for started in left:
        if wait:
            started.wait()
        started.forget()


def wait_all() -> None:
    """Wait until every started work has ended (before a check that must run with nothing else in flight); what
    they got stays for their fixtures to take."""
    with _lock:
        running = list(_started.values())
    for started in running:
        started.wait()
