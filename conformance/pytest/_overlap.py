"""Checks of one target at once: the bodies of independent checks overlap, their fixtures are set up in turn.

pytest runs a check's set-up, its body and its tear-down, then the next check's. Against a distant target that makes
a run the sum of every check's chain of round trips, when most checks are independent of each other once the
session's fixtures exist (discovery, a linked account, the tool listing). With ``--concurrency N`` above 1 this loop
replaces pytest's for the bundled checks:

- on the main thread, in collection order, each check's set-up runs as pytest would run it: its fixtures, each set
  up once by the first check that needs it, as before; then its body starts on a thread of its own and the next
  check's set-up begins; at most N bodies are in flight. A check whose set-up would wait for early fixture work
  still running (below) lets the checks after it that would not be set up first (:meth:`EarlyStarts.next_check`);
- a body records into its own record (:func:`conformance.core._context.enter_lane`): its exchanges, notes, cases,
  waits and budget are its own, and what it appends to run-wide lists (:func:`~conformance.core._context.in_order`)
  is appended once it has ended, in the checks' order;
- pytest hears of each check (log start, the reports of its set-up, body and tear-down, log finish) on the main
  thread, in collection order, once its body has ended: the console, junit.xml and the report read as if the checks
  had run one after another.

A check runs with nothing else in flight (every earlier body has ended and been reported, as in pytest's loop) when:

- it is marked :func:`conformance.core.rules.alone`: it changes what other checks rely on or reads what they
  recorded (``alone(..., among=name)``: only the checks of that name keep out of each other's way);
- it is async (its event loop is a fixture of its own) or no bundled check at all (it decides no rule of
  :data:`OVERLAPPING_SUITES`).

A check alone among a group waits for its turn on its own thread, so the main thread goes on setting up the checks
after it. A session fixture marked :func:`conformance.early` that a check not yet set up uses is started on a thread
of its own as soon as every fixture it takes is set up (:class:`EarlyStarts`); its first user's set-up takes its
outcome and its evidence (``conformance/core/_early.py``); nothing else runs beside a check marked alone, early work
included. A change of fleet target, and the run's last tear-down (the session's fixtures close, the host's client
with them), also wait for every body in flight and every early work. A body never sets up a fixture (a harness
error says to mark the check alone); what it prints or logs (its cases' threads included) is its check's captured
output, even while the main thread sets another check up (:class:`BodyOutput`, :class:`PhaseOutput`); what early
work logs or prints is its first user's captured log or output of the set-up, and a record made on a thread of no
check and no early work is shown once the run has ended, never in another check's (:class:`BodyLogs`); source is
parsed one thread at a time while bodies overlap. Under xdist, ``--pdb``, ``--trace`` or
``--setup-only`` pytest's own loop runs.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import functools
import inspect
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.core import _budget, _context, _early
from conformance.core._shortcuts import fixture_definition, fixture_definitions
from conformance.host.fanout import AUTO, AUTO_CHECKS_AT_ONCE, DEFAULT_CONCURRENCY
from conformance.pytest import _marks
from conformance.pytest._outcomes import STARTED, fleet_target_of
from conformance.pytest._session import SESSION_KEY

# The bundled suites. The tool server's: once discovery, linking and the listing are set up, each check probes with
# its own requests and tokens. The platform's, the campaigns' and the compression's: each check works on objects of
# its own (campaigns, uploads), its requests passing the run's one pacer. In every suite, the checks that change or
# read what others rely on (a rate-limit window, a usage counter, a list read before and after) are marked alone.
OVERLAPPING_SUITES = frozenset({"auth", "profile", "platform", "campaigns", "compression"})
ROOM_POLL_S = 0.05  # how often a wait for room reads a limit that rises with the round trips
CPU_PRESSURE = "/proc/pressure/cpu"
BUSY_PRESSURE = 0.4  # tasks waited for a core this much of the time: more checks at once would only wait longer
PRESSURE_READ_S = 1.0  # cpu_pressure() reads the kernel's figure at most this often
NO_CHECK_SECTION = "Captured log of no check"  # the records no check made, shown once the run has ended
# Of the records of no check, at most this many are kept: a run is bounded in memory whatever a target makes logged.
NO_CHECK_RECORDS = 1000


class BodyOutput:
    """``sys.stdout`` or ``sys.stderr`` while bodies overlap: what a body prints is kept for its check (shown as
    pytest shows a check's captured output, scrubbed like it), anything else goes to the stream this one replaced.
    Installed before pytest starts capturing (the plugin's ``pytest_load_initial_conftests``), it is the stream
    pytest's capture saves and puts back between the steps it captures: a body printing at any moment is kept."""

    def __init__(self, inner: Any, name: str) -> None:
        self._inner = inner
        self._name = name

    def write(self, text: str) -> int:
        check = _running.get()
        if check is None:
            work = _early.working()  # early work's prints are its first user's set-up's (BodyLogs.taken)
            if work is not None and isinstance(text, str) and work.keep_output(self._name, text):
                return len(text)
            return int(self._inner.write(text) or 0)
        check.printed[self._name].append(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _running.get() is None and _early.working() is None:
            self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @staticmethod
    def install() -> None:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if not isinstance(stream, BodyOutput):
                setattr(sys, name, BodyOutput(stream, name))

    @staticmethod
    def remove() -> None:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if isinstance(stream, BodyOutput):
                setattr(sys, name, stream._inner)

    @staticmethod
    @contextlib.contextmanager
    def wrapping() -> Iterator[None]:
        """While pytest captures a phase it puts a stream of its own in ``sys.stdout`` and ``sys.stderr``, in place
        of the one :meth:`install` placed: for the phase, that stream is wrapped too, so that a body or early work
        printing while the main thread sets another check up (or tears it down) keeps what it printed."""
        placed = {}
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if not isinstance(stream, BodyOutput):
                placed[name] = BodyOutput(stream, name)
                setattr(sys, name, placed[name])
        try:
            yield
        finally:
            for name, wrapper in placed.items():
                if getattr(sys, name) is wrapper:
                    setattr(sys, name, wrapper._inner)


class PhaseOutput:
    """The plugin's hooks around pytest's captured phases (:meth:`BodyOutput.wrapping`): innermost, so inside the
    capture's."""

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_setup(self) -> Generator[None, None, None]:
        with BodyOutput.wrapping():
            return (yield)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self) -> Generator[None, None, None]:
        with BodyOutput.wrapping():
            return (yield)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self) -> Generator[None, None, None]:
        with BodyOutput.wrapping():
            return (yield)


class BodyLogs(logging.Handler):
    """Who a log record belongs to while bodies overlap. pytest captures a phase's records with handlers on the root
    logger, which see every thread's; this one, on the root logger too, keeps out of them every record but those made
    in the main thread's context (on the main thread, or a thread or task started from it with a copy of its context),
    the check it sets up or runs:

    - a body's records (its cases' threads included) are its check's (the "log" section of its call);
    - early work's records (:func:`conformance.core._early.working`, the threads and tasks it starts with a copy of
      its context included) are kept as its own log from its start (while pytest collects, for work started then);
      when its fixture is set up they are handed to pytest's handlers in that first user's set-up: they are that
      check's captured records (its "log" section of the set-up, ``caplog``);
    - any other record (a thread started without a copy of a context, early work's after its fixture was set up or
      when no check took it) belongs to no check: pytest's session-wide handlers (live logging, ``--log-file``) have
      it as they have every record, and it is shown once the run has ended under :data:`NO_CHECK_SECTION`.

    Records are formatted and levelled as pytest captures a check's."""

    def __init__(self, config: pytest.Config) -> None:
        plugin = config.pluginmanager.get_plugin("logging-plugin")
        level = getattr(plugin, "log_level", None)
        super().__init__(level if isinstance(level, int) else logging.NOTSET)
        formatter = getattr(plugin, "formatter", None)
        if isinstance(formatter, logging.Formatter):
            self.setFormatter(formatter)
        found = (getattr(plugin, "report_handler", None), getattr(plugin, "caplog_handler", None))
        self.phase_handlers = [handler for handler in found if isinstance(handler, logging.Handler)]
        self.config = config
        self.no_check = NoCheckLog(config)

    def emit(self, record: logging.LogRecord) -> None:
        check = _running.get()
        if check is not None:
            check.logged.append(self.format(record))
            return
        if _early.working() is None and not _main.get():  # early work's are its own (conformance.core._early)
            self.keep_for_no_check(record)

    def keep_for_no_check(self, record: logging.LogRecord) -> None:
        if record.levelno >= self.level:
            self.keep_lines_for_no_check([self.format(record)])

    def keep_lines_for_no_check(self, lines: Iterable[str]) -> None:
        """Lines of no check, kept in order, one thread at a time."""
        self.acquire()
        try:
            for line in lines:
                self.no_check.keep(line)
        finally:
            self.release()

    # -- early work's logs (conformance.core._early.LogReceiver) --------------------------------------------------

    def taken(self, work: _early.Started) -> None:
        """Hand the records ``work`` kept to pytest's handlers of the phase running now (its first user's set-up),
        as pytest's loggers would have had they been made there, levelled as those handlers level; and what it
        printed to the streams of that phase (its captured output)."""
        for stream, text in work.hand_on_output():
            getattr(sys, stream).write(text)
        for record in work.hand_on_log():
            for handler in self.phase_handlers:
                if record.levelno >= handler.level:
                    handler.handle(record)

    def forgotten(self, work: _early.Started) -> None:
        """Early work no check took (a run stopped, another target's): its records, and what it printed, are no
        check's."""
        printed = work.hand_on_output()
        if printed:
            self.keep_lines_for_no_check(f"[{stream}] {line}" for stream, text in printed for line in text.splitlines())
        for record in work.hand_on_log():
            self.keep_for_no_check(record)

    def unkept(self, record: logging.LogRecord) -> None:
        """A record of early work once its log was handed on: no check's."""
        self.keep_for_no_check(record)

    @staticmethod
    def of_the_main_thread(record: logging.LogRecord) -> bool:
        return _running.get() is None and _early.working() is None and _main.get()

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        root = logging.getLogger()
        token = _main.set(True)
        root.addHandler(self)
        for handler in self.phase_handlers:
            handler.addFilter(self.of_the_main_thread)
        try:
            with _early.logs_handed_to(self):
                yield
        finally:
            root.removeHandler(self)
            for handler in self.phase_handlers:
                handler.removeFilter(self.of_the_main_thread)
            _main.reset(token)
            if self.phase_handlers and self.no_check.lines:  # no section where pytest captures no logs
                self.config.pluginmanager.register(self.no_check, "conformance-log-of-no-check")


class NoCheckLog:
    """The log records of no check (see :class:`BodyLogs`), formatted: the first :data:`NO_CHECK_RECORDS` of them
    kept, shown in the terminal's summary under :data:`NO_CHECK_SECTION` (unless ``--show-capture`` leaves logs
    out, as it does a check's)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.lines: list[str] = []
        self.left_out = 0

    def keep(self, line: str) -> None:
        if len(self.lines) < NO_CHECK_RECORDS:
            self.lines.append(line)
        else:
            self.left_out += 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.config.getoption("showcapture", "all") not in ("all", "log"):
            return
        terminalreporter.write_sep("=", NO_CHECK_SECTION)
        for line in self.lines:
            terminalreporter.write_line(line)
        if self.left_out:
            terminalreporter.write_line(f"... and {self.left_out} more records")


def refuse_fixture_in_body(fixture: str) -> None:
    """A fixture set up from a body running beside others would race the main thread's set-ups (pytest's fixtures
    are set up one check at a time): a harness error naming the check to mark alone."""
    check = _running.get()
    if check is not None:
        item = check.item
        raise RuntimeError(
            f"{item.nodeid} set up the fixture {fixture!r} from its body while other checks ran: "
            "a check that does so must be marked alone (conformance.alone)"
        )


@contextlib.contextmanager
def one_parse_at_a_time() -> Iterator[None]:
    """``ast.parse`` under a lock while bodies overlap: CPython's conversion of a parsed tree keeps one recursion
    counter per interpreter, which two threads parsing at once corrupt ("SystemError: AST constructor recursion
    depth mismatch", python/cpython#106905). pytest parses source to lay out a failure's traceback on the main
    thread while bodies run, and Hypothesis parses the source of a strategy's lambdas in them."""
    original = ast.parse
    lock = threading.RLock()

    @functools.wraps(original)
    def parse(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return original(*args, **kwargs)

    ast.parse = parse
    try:
        yield
    finally:
        ast.parse = original


def begin_check(item: pytest.Item) -> _context.CheckRecord:
    """Open the record of a check about to start (the main thread records into it) and start its time budget."""
    record = _context.begin(_marks.of(item).rules)
    _budget.start_check(record, _budget.check_budget_s(item.config.stash[SESSION_KEY].settings))
    item.stash[STARTED] = time.monotonic()
    return record


def may_overlap(item: pytest.Item) -> bool:
    """Whether the body of ``item`` may run while other checks' bodies do (see the module's docstring)."""
    marks = _marks.of(item)
    if marks.suite not in OVERLAPPING_SUITES or marks.alone:
        return False
    function = getattr(item, "obj", None)
    return function is not None and not inspect.iscoroutinefunction(function)


@dataclass(frozen=True)
class ChecksAtOnce:
    """How many bodies may be in flight: ``least`` always; up to ``most`` as the exchanges' round trips allow
    (``--concurrency auto``): ``most`` times the share of an exchange's time that is the network's floor
    (:class:`conformance.core._context.RoundTrips`). Against a distant target that answers at once the share is
    near 1, and the host waits for the network; when exchanges queue (for the host's CPU or the target's) it falls,
    and so does the number of checks at once. A machine whose cores are all busy (:func:`cores_busy`) runs
    ``least``: there, exchanges that all take long are waiting for a core, not for the network, and their share
    says nothing."""

    least: int
    most: int

    def now(self) -> int:
        if self.most <= self.least or cores_busy():
            return self.least
        share = _context.ROUND_TRIPS.floor_share()
        return self.least if share is None else max(self.least, min(self.most, round(self.most * share)))


def cores_busy() -> bool:
    """Whether this machine's tasks wait for a core: for at least ``BUSY_PRESSURE`` of the last ten seconds (Linux's
    CPU pressure, ``some avg10``), or, where that is not told, a 1-minute load average of at least its cores."""
    pressure = cpu_pressure()
    if pressure is not None:
        return pressure >= BUSY_PRESSURE
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here: the round trips alone decide
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return load >= cores


def cpu_pressure() -> float | None:
    """The share of the last ten seconds some task of this machine waited for a core (``/proc/pressure/cpu``), or
    None where the kernel does not tell it. Read again once ``PRESSURE_READ_S`` has passed: the limit is asked for
    at every start and wake-up of a body, and the kernel's ten-second average moves slowly."""
    global _pressure_read
    now = time.monotonic()
    if _pressure_read is not None and now - _pressure_read[0] < PRESSURE_READ_S:
        return _pressure_read[1]
    try:
        with open(CPU_PRESSURE, encoding="ascii") as told:
            fields = dict(part.partition("=")[::2] for part in told.readline().split()[1:])
        pressure: float | None = float(fields["avg10"]) / 100
    except (OSError, KeyError, ValueError):
        pressure = None
    _pressure_read = (now, pressure)
    return pressure


_pressure_read: tuple[float, float | None] | None = None  # (when, what) cpu_pressure() last read


def overlapping_limit(config: pytest.Config) -> ChecksAtOnce | None:
    """How many bodies this run overlaps: None when pytest's own loop runs (see the module's docstring)."""
    state = config.stash.get(SESSION_KEY, None)
    if state is None or not state.active or hasattr(config, "workerinput"):
        return None
    if config.pluginmanager.has_plugin("dsession"):  # the xdist controller: workers run the checks
        return None
    option = config.option
    if getattr(option, "usepdb", False) or getattr(option, "trace", False) or getattr(option, "setuponly", False):
        return None
    if getattr(option, "setupplan", False) or option.collectonly:
        return None
    setting = state.settings.get("concurrency", AUTO)
    if setting == AUTO:
        return ChecksAtOnce(DEFAULT_CONCURRENCY, AUTO_CHECKS_AT_ONCE)
    limit = int(setting or 1)
    return ChecksAtOnce(limit, limit) if limit > 1 else None


class EarlyStarts:
    """The fixtures marked :func:`conformance.early` that checks not yet set up use: each is started on its own
    thread once every fixture it takes (and those its ``after`` names) is set up, if no check has set it up yet."""

    def __init__(self, items: list[pytest.Item]) -> None:
        self.waiting: dict[Any, tuple[int, pytest.Item]] = {}  # FixtureDef -> its first user (index, item)
        self.set_up: set[int] = set()  # the checks (by index) whose set-up has run
        self.started: dict[Any, _early.Started] = {}  # FixtureDef -> its work, started ahead of its first user
        self.definitions: dict[int, dict[str, Any]] = {}  # per check (by id): the definitions of what it uses
        for index, item in enumerate(items):
            definitions = self.definitions[id(item)] = self.used_by(item)
            for definition in definitions.values():
                if definition.scope != "session" or _early.after_of(definition.func) is None:
                    continue
                ahead = _early.started_for(definition.func)  # started before collection ended (_head_start.py)
                if ahead is not None:
                    self.started.setdefault(definition, ahead)
                else:
                    self.waiting.setdefault(definition, (index, item))
        _early.import_ahead(module for definition in self.waiting for module in _early.imports_of(definition.func))

    @staticmethod
    def used_by(item: pytest.Item) -> dict[str, Any]:
        """The definitions of the fixtures ``item`` uses, by name: those it takes, and those its fixtures ask for
        from their bodies (:func:`conformance.core._early.asks`) with what they take in turn."""
        used = {name: found[-1] for name, found in fixture_definitions(item).items() if found}
        pending = list(used.values())
        while pending:
            definition = pending.pop()
            for name in (*_early.asks_of(definition.func), *definition.argnames):
                if name not in used and name != "request":
                    found = fixture_definition(item, name)
                    if found is not None:
                        used[name] = found
                        pending.append(found)
        return used

    def running_for(self, item: pytest.Item) -> bool:
        """Whether ``item`` uses early work still running (its set-up now would wait for it)."""
        for definition in self.definitions[id(item)].values():
            started = self.started.get(definition)
            if started is not None and started.running and definition.cached_result is None:
                return True
        return False

    def reorderable(self, item: pytest.Item) -> bool:
        """Whether checks may be set up before ``item`` or ``item`` before others: its body overlaps, and it uses no
        fixture of a scope between the session's and its own (a module's, a class's), which an order changed across
        modules would set up twice."""
        return may_overlap(item) and all(
            d.scope in ("session", "function") for d in self.definitions[id(item)].values()
        )

    def next_check(self, items: list[pytest.Item], remaining: list[int]) -> int:
        """The check to set up next, of ``remaining`` (indices in collection order): the first, unless its set-up
        would wait for early work still running; then the first after it, up to a check that must run with nothing
        in flight or certifies another named target, that is alone among no group (a group's checks start in
        their order), whose set-up would not wait, and that sets up no session fixture a check it overtakes uses
        (each fixture's record still goes to its first user in collection order)."""
        first = items[remaining[0]]
        if not self.reorderable(first) or not self.running_for(first):
            return remaining[0]
        overtaken = [first]
        for index in remaining[1:]:
            item = items[index]
            if not self.reorderable(item) or fleet_target_of(item) != fleet_target_of(first):
                break
            if (
                _marks.of(item).group is None
                and not self.running_for(item)
                and not self.shares_unset_fixtures(item, overtaken)
            ):
                return index
            overtaken.append(item)
        return remaining[0]

    def shares_unset_fixtures(self, item: pytest.Item, others: list[pytest.Item]) -> bool:
        unset = {d for d in self.definitions[id(item)].values() if d.scope == "session" and d.cached_result is None}
        return any(not unset.isdisjoint(self.definitions[id(other)].values()) for other in others)

    def start_ready(self, done: int) -> None:
        """Start what is ready, once the check at index ``done`` is set up."""
        self.set_up.add(done)
        progress = True
        while progress:  # work started now may be what later work waits for: a chain starts at once
            progress = False
            for definition, (first, item) in list(self.waiting.items()):
                if first in self.set_up or definition.cached_result is not None:
                    del self.waiting[definition]  # set up the usual way already
                    continue
                arguments = self.arguments(definition, self.definitions[id(item)], self.started)
                if arguments is None:
                    continue
                del self.waiting[definition]
                self.started[definition] = _early.start(
                    definition.func,
                    arguments,
                    rules=_marks.of(item).rules,
                    budget_s=_budget.check_budget_s(item.config.stash[SESSION_KEY].settings),
                )
                progress = True

    @staticmethod
    def arguments(
        definition: Any, definitions: dict[str, Any], started: dict[Any, _early.Started]
    ) -> dict[str, Any] | None:
        """The fixture's arguments: the values of fixtures already set up, and early work already started (whose
        value the new work waits for); None while one is neither, or one raised (pytest then raises it where the
        fixture is set up)."""

        def available(name: str) -> tuple[Any, BaseException | None] | _early.Started | None:
            """A session fixture's cached (value, error), the early work started for it, or None."""
            found = definitions.get(name)
            if found is None or found.scope != "session":
                return None
            result = found.cached_result
            if result is None:
                return started.get(found)
            return result[0], (result[2][0] if result[2] is not None else None)

        arguments: dict[str, Any] = {}
        for name in definition.argnames:
            if name == "request":
                continue
            found = available(name)
            if found is None or (isinstance(found, tuple) and found[1] is not None):
                return None
            arguments[name] = found if isinstance(found, _early.Started) else found[0]
        later: dict[str, Callable[[], Any]] = {}
        for name in _early.after_of(definition.func) or ():
            found = available(name)
            if found is None:
                return None
            later[name] = found.value if isinstance(found, _early.Started) else functools.partial(_cached, *found)
        if "request" in definition.argnames:
            arguments["request"] = _early.SetUp(later)
        return arguments


def _cached(value: Any, error: BaseException | None) -> Any:
    """What pytest's request gives for a fixture set up already: its value, or the exception it raised."""
    if error is not None:
        raise error
    return value


@dataclass
class _Check:
    """A check whose body runs (or ran) on a thread; reported once it has ended and every earlier one is."""

    item: pytest.Item
    record: _context.CheckRecord
    setup: pytest.TestReport
    setup_call: pytest.CallInfo[None] | None = None
    teardown: pytest.CallInfo[None] | None = None
    call: pytest.CallInfo[None] | None = None
    ended: threading.Event = field(default_factory=threading.Event)
    group: str | None = None
    touches: str | None = None  # the group whose checks alone among it this check keeps out of the way of
    printed: dict[str, list[str]] = field(default_factory=lambda: {"stdout": [], "stderr": []})
    logged: list[str] = field(default_factory=list)
    # The item's hook proxy, taken once: each ``item.ihook`` looks the item's conftests up again (a stat of its
    # path) and, where a conftest is not the item's, makes a new proxy that filters each hook's implementations anew.
    ihook: Any = None


# The check whose body this thread or task runs (None on the main thread and the harness's servers): what it prints
# and logs is kept for that check. A context variable, so that a body's cases run at once (conformance.host.fanout)
# are the body's too.
_running: contextvars.ContextVar[_Check | None] = contextvars.ContextVar("conformance_body", default=None)
# Set in the main thread's context while the loop runs: the records made in it (on the main thread, or on a thread
# or task started from it with a copy of its context, outside a body and early work) are the check it sets up or runs.
_main: contextvars.ContextVar[bool] = contextvars.ContextVar("conformance_main_thread", default=False)


class OverlappingLoop:
    """pytest's run loop with the bodies of independent checks overlapping (see the module's docstring)."""

    def __init__(self, session: pytest.Session, limit: ChecksAtOnce) -> None:
        self.session = session
        self.limit = limit
        self.checks: dict[int, _Check] = {}  # started, not yet reported, by their index in collection order
        self.reported = 0  # the checks before this index are reported
        self.in_flight = 0  # bodies running
        self.unfinished = 0  # bodies started and not ended: running, or waiting for their group
        self.groups: list[str] = []  # the groups of the bodies running (alone among each other)
        self.touching: dict[str, int] = {}  # per group, the bodies running that its alone checks keep out of
        self.queued: dict[str, deque[_Check]] = {}  # per group, its bodies waiting for it, in collection order
        self.changed = threading.Condition()
        self.fleet_target: str | None = None

    # -- the loop ------------------------------------------------------------------------------------------------

    def run(self) -> None:
        with one_parse_at_a_time(), BodyLogs(self.session.config).installed():
            self.run_items(self.session.items)

    def run_items(self, items: list[pytest.Item]) -> None:
        early = EarlyStarts(items)
        remaining = list(range(len(items)))  # not yet set up, in collection order
        _context.ROUND_TRIPS.reset()
        try:
            index: int | None = early.next_check(items, remaining) if remaining else None
            while index is not None:
                item = items[index]
                remaining.remove(index)
                if fleet_target_of(item) != self.fleet_target:
                    self.drain(settle=True)  # the previous named target's session fixtures are torn down next
                    early.started.clear()  # its work is no value for the next target's fixtures
                    _context.ROUND_TRIPS.reset()  # nor are its round trips a measure of the next one's
                    self.fleet_target = fleet_target_of(item)
                if may_overlap(item):
                    marks = _marks.of(item)
                    if marks.group is None and marks.touches is None:  # a group's waits on its thread
                        self.wait_for_room()
                    check = self.start(index, item)
                    early.start_ready(index)
                    index = early.next_check(items, remaining) if remaining else None
                    self.tear_down(check, items[index] if index is not None else None)
                else:
                    self.drain()
                    _early.wait_all()  # nothing else in flight: early fixture work included
                    following = early.next_check(items, remaining) if remaining else None
                    item.config.hook.pytest_runtest_protocol(
                        item=item, nextitem=items[following] if following is not None else None
                    )
                    early.start_ready(index)  # only once it has ended: no early work runs beside it
                    self.reported = index + 1
                    index = following
                self.report_ended()
                self.raise_if_stopping()
            self.drain(settle=True)
        finally:
            _early.settle(wait=False)  # what ended normally has settled already; an interrupted run waits no more
            self.report_ended(interrupted=True)  # interrupted: what has ended is still reported
            _context.end()

    def raise_if_stopping(self) -> None:
        session = self.session
        if session.shouldfail or session.shouldstop:
            self.drain(settle=True)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            raise session.Interrupted(session.shouldstop)

    # -- one check -----------------------------------------------------------------------------------------------

    def start(self, index: int, item: pytest.Item) -> _Check:
        """Set ``item`` up on this thread and start its body on a thread of its own."""
        record = begin_check(item)
        ihook, marks = item.ihook, _marks.of(item)
        setup_call = pytest.CallInfo.from_call(lambda: ihook.pytest_runtest_setup(item=item), when="setup")
        check = _Check(
            item,
            record,
            ihook.pytest_runtest_makereport(item=item, call=setup_call),
            group=marks.group,
            touches=marks.touches,
            setup_call=setup_call,
            ihook=ihook,
        )
        self.checks[index] = check
        if check.setup.passed:
            with self.changed:
                self.unfinished += 1
                if check.group is not None:
                    self.queued.setdefault(check.group, deque()).append(check)
                elif check.touches is None:
                    self.in_flight += 1
            context = _context.lane_context(record)
            thread = threading.Thread(
                target=context.run, args=(self.body, check), name=f"conformance-check-{item.name}", daemon=True
            )
            thread.start()
        else:
            check.ended.set()
        return check

    def tear_down(self, check: _Check, nextitem: pytest.Item | None) -> None:
        """Tear ``check`` down as far as the next check set up allows (its function-scoped fixtures; those of its
        module when the next check is in another one; the session's after the last)."""
        item = check.item
        if nextitem is None or self.session.shouldfail or self.session.shouldstop:
            self.drain(but=check, settle=True)  # the session's fixtures are torn down now: nothing may use them
            check.ended.wait()
            nextitem = None
        check.teardown = pytest.CallInfo.from_call(
            lambda: check.ihook.pytest_runtest_teardown(item=item, nextitem=nextitem), when="teardown"
        )
        self.reraise(check.setup_call, check.teardown)

    def body(self, check: _Check) -> None:
        _running.set(check)  # in the body's own context: its fan-out's threads and tasks inherit it
        try:
            if check.group is not None or check.touches is not None:
                self.join_group(check)
            check.call = pytest.CallInfo.from_call(check.item.runtest, when="call", reraise=())
        finally:
            with self.changed:
                self.in_flight -= 1
                self.unfinished -= 1
                if check.group is not None:
                    self.groups.remove(check.group)
                elif check.touches is not None:
                    self.touching[check.touches] -= 1
                check.ended.set()
                self.changed.notify_all()

    def join_group(self, check: _Check) -> None:
        """Wait, on the body's own thread, for its turn and for room: a check alone among a group until no body of
        the group runs nor any that touches it, and the group's earlier ones have started; a check that touches a
        group until none alone among it runs. The main thread goes on setting up the next checks meanwhile."""
        began = time.monotonic()
        with self.changed:
            while not self.may_join(check):
                self.changed.wait(ROOM_POLL_S)
            if check.group is not None:
                self.queued[check.group].popleft()
                self.groups.append(check.group)
            elif check.touches is not None:
                self.touching[check.touches] = self.touching.get(check.touches, 0) + 1
            self.in_flight += 1
            self.changed.notify_all()
        if check.record.deadline is not None:  # its time budget is for its own work, not for its turn
            check.record.deadline += time.monotonic() - began

    def may_join(self, check: _Check) -> bool:
        if self.in_flight >= self.limit.now():
            return False
        if check.group is not None:
            group = check.group
            return self.queued[group][0] is check and group not in self.groups and not self.touching.get(group)
        return check.touches not in self.groups

    @staticmethod
    def reraise(*calls: pytest.CallInfo[None] | None) -> None:
        """pytest.exit() and an interruption in a set-up or tear-down stop the run, as in pytest's loop."""
        for call in calls:
            stop = call.excinfo.value if call is not None and call.excinfo is not None else None
            if isinstance(stop, (pytest.exit.Exception, KeyboardInterrupt)):
                raise stop

    # -- waiting and reporting -----------------------------------------------------------------------------------

    def wait_for_room(self) -> None:
        with self.changed:
            while self.in_flight >= self.limit.now():  # the limit may rise while the bodies in flight wait
                self.changed.wait(ROOM_POLL_S)

    def drain(self, but: _Check | None = None, *, settle: bool = False) -> None:
        """Wait until every body in flight (``but`` that one) has ended, and report them; ``settle``: and every early
        fixture work, whose fixtures are torn down next."""
        with self.changed:
            self.changed.wait_for(lambda: self.unfinished == (0 if but is None or but.ended.is_set() else 1))
        if settle:
            _early.settle()
        if but is None:
            self.report_ended()

    def report_ended(self, *, interrupted: bool = False) -> None:
        """Report, in collection order, every check whose body has ended and whose predecessors are reported
        (``interrupted``: or were never set up)."""
        while self.checks:
            index = min(self.checks)
            check = self.checks[index]
            if (index != self.reported and not interrupted) or not check.ended.is_set() or check.teardown is None:
                return
            del self.checks[index]
            self.reported = index + 1
            self.report(check)

    @staticmethod
    def hand_over_output(check: _Check) -> None:
        """What the body printed: a section of its report, as pytest captures it (``-s``: printed now, through the
        console's scrubbing)."""
        for name, parts in check.printed.items():
            text = "".join(parts)
            if not text:
                continue
            if check.item.config.getoption("capture", None) == "no":
                getattr(sys, name).write(text)
            else:
                check.item.add_report_section("call", name, text)
        if check.logged:
            check.item.add_report_section("call", "log", "\n".join(check.logged))

    def report(self, check: _Check) -> None:
        item, ihook = check.item, check.ihook
        reports = [check.setup]
        token = _context.enter_lane(check.record)  # the reports are judged from the check's own record
        try:
            for step in check.record.in_order:  # what the body appended to run-wide lists, in the checks' order
                step()
            check.record.in_order.clear()
            if check.call is not None:
                self.hand_over_output(check)
                reports.append(ihook.pytest_runtest_makereport(item=item, call=check.call))
            assert check.teardown is not None
            reports.append(ihook.pytest_runtest_makereport(item=item, call=check.teardown))
        finally:
            _context.leave_lane(token)
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for report in reports:
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        if check.call is not None:
            self.reraise(check.call)


def run_loop(session: pytest.Session) -> bool | None:
    """The plugin's ``pytest_runtestloop``: this loop when the run overlaps checks, else None (pytest's own)."""
    limit = overlapping_limit(session.config)
    if limit is None or (session.testsfailed and not session.config.option.continue_on_collection_errors):
        return None
    if sum(1 for item in session.items if may_overlap(item)) < 2:
        return None
    OverlappingLoop(session, limit).run()
    return True
