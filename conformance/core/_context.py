"""The record of the check that is running now: the exchanges it made and the observations it noted.

The plugin opens one record per test; the HTTP layer and :func:`conformance.observe` append to it. A plain module
global (not a contextvar) on purpose: servers the harness runs in threads (the CIMD publisher, the image server)
record into the same running check.

A check that runs independent cases at once (``conformance.host.fanout``) gives each case a *lane*: a record of its
own, set in a context variable of the thread or task running that case, that collects what the case records (its
exchanges, notes, throttle waits). Once every case is done, the lanes are merged into the check's record in the
order of the cases, never in the order they finished: the evidence reads as if the cases had run one after another.
Threads that do not run a case (the servers above) still record into the check's record itself.
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

THROTTLING_RULES = "RL-"  # only the rate-limit rules judge throttling; every other check is spared it


@dataclass
class CheckRecord:
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # every one: their bytes are bounded instead
    notes: list[str] = field(default_factory=list)
    rules: tuple[str, ...] = ()  # the rules the running check decides
    throttle_wait_s: float = 0.0  # waited for the target's rate limits during this check
    throttle_reported_s: float = 0.0  # of which already handed to the run's total
    last_exchange: dict[str, Any] | None = None
    first_failure: BaseException | None = None  # the first verdict raised in this check (a Hypothesis replay
    failing_exchange: dict[str, Any] | None = None  # may end otherwise) and the exchange it was raised on
    recorded: int = 0  # exchanges recorded so far
    numbers: dict[int, int] = field(default_factory=dict)  # id(exchange) -> its number in this check
    cases: list[dict[str, Any]] = field(default_factory=list)  # the cases of the rules' tables, as records
    deadline: float | None = None  # monotonic: when the check's time budget ends (see conformance.core._budget)
    budget_s: float | None = None  # the check's budget in seconds (for the message that says it is spent)
    waited_s: float = 0.0  # deliberate waits (a token's lifetime waited out): not counted in the check's budget
    lane_state: dict[int, Any] | None = None  # a lane's own state of host objects (a browser's cookie jar), by id
    in_order: list[Callable[[], None]] = field(default_factory=list)  # a lane's deferred steps (see in_order())

    @property
    def judges_throttling(self) -> bool:
        return any(rule.startswith(THROTTLING_RULES) for rule in self.rules)

    def add_exchange(self, exchange: dict[str, Any]) -> None:
        with _lock:
            self.recorded += 1
            self.numbers[id(exchange)] = self.recorded
            self.last_exchange = exchange
            self.exchanges.append(exchange)


class RoundTrips:
    """How long the run's exchanges take, as the run loop reads it to choose how many checks run at once: the
    shortest exchange so far (the network's round trip and the target's quickest answer) against the median of the
    latest ones."""

    def __init__(self, latest: int = 16) -> None:
        self._lock = threading.Lock()
        self._latest: deque[float] = deque(maxlen=latest)
        self._shortest: float | None = None

    def add(self, seconds: float) -> None:
        with self._lock:
            self._latest.append(seconds)
            self._shortest = seconds if self._shortest is None else min(self._shortest, seconds)

    def floor_share(self) -> float | None:
        """The shortest exchange over the median of the latest (None before four): near 1 while exchanges take
        about the network's floor (the host waits for the network), near 0 while they take longer (they queue for
        the host's CPU or the target's)."""
        with self._lock:
            if self._shortest is None or len(self._latest) < 4:
                return None
            median = sorted(self._latest)[len(self._latest) // 2]
            return min(1.0, self._shortest / median) if median > 0 else None

    def reset(self) -> None:
        with self._lock:
            self._latest.clear()
            self._shortest = None


ROUND_TRIPS = RoundTrips()  # every exchange recorded (conformance.host.exchange.record_exchange) adds to it


def recorded() -> int:
    """How many exchanges the running check has recorded (a case's exchanges are those recorded after)."""
    record = current()
    return record.recorded if record is not None else 0


def file_case_exchanges(case: str, after: int) -> None:
    """The exchanges recorded since ``after`` (and not yet filed under another case) are ``case``'s: each names it,
    and the report numbers them in the rule's evidence."""
    record = current()
    if record is None:
        return
    for exchange in record.exchanges:
        if record.numbers.get(id(exchange), 0) > after and "case" not in exchange:
            exchange["case"] = case


def record_cases(cases: list[dict[str, Any]]) -> None:
    """The cases one rule's check tried, as records (name, citation, expected, outcome, what it got)."""
    record = current()
    if record is not None:
        record.cases.extend(cases)


def note_failure(exc: BaseException) -> None:
    """Remember the running check's first failure (a Failure is made once its exchanges are done) and the last
    exchange before it."""
    record = current()
    if record is not None and record.first_failure is None:
        record.first_failure, record.failing_exchange = exc, record.last_exchange


_lock = threading.Lock()
_current: CheckRecord | None = None
_lane: contextvars.ContextVar[CheckRecord | None] = contextvars.ContextVar("conformance_lane", default=None)

# Characters of exchange bodies one process keeps for a run (each body is an excerpt already, and each header value):
# the bound on the evidence's memory, whatever the count of exchanges (the report bounds its own bytes again, see
# conformance/report/model.py). A normal run stays well inside it; a hostile one spends it, and its later exchanges
# keep their metadata only (their key headers, their bodies' length and digest).
RUN_BODY_CHARS = 2_000_000
_body_left: int | None = RUN_BODY_CHARS


def set_body_budget(size: int | None = RUN_BODY_CHARS) -> None:
    """Start the process's run-wide budget of exchange bodies, in characters (None: unbounded). A run starts it
    at its start (every xdist worker has its own)."""
    global _body_left
    with _lock:
        _body_left = size


def spend_body(size: int) -> bool:
    """Take ``size`` characters of the run's body budget: False once it is spent (and from then on), when the
    exchange keeps its metadata only. Every exchange of the run is recorded; the bytes of their bodies are bound."""
    global _body_left
    with _lock:
        if _body_left is None:
            return True
        if size > _body_left:
            _body_left = 0
            return False
        _body_left -= size
        return True


def begin(rules: tuple[str, ...] | list[str] = ()) -> CheckRecord:
    global _current
    _current = CheckRecord(rules=tuple(rules))
    return _current


def end() -> CheckRecord | None:
    global _current
    record, _current = _current, None
    return record


def current() -> CheckRecord | None:
    """The record this thread or task records into: its case's lane, else the running check's record."""
    lane = _lane.get()
    return lane if lane is not None else _current


def current_rules_text() -> str:
    """The rules of the running check, for evidence that names where something was obtained; "a fixture" outside."""
    record = current()
    return ", ".join(record.rules) if record is not None and record.rules else "a fixture"


def mark() -> int:
    """Where the running check's exchanges end now (for :func:`since`)."""
    record = current()
    return len(record.exchanges) if record is not None else 0


def since(position: int) -> list[dict[str, Any]]:
    """The exchanges the running check recorded after ``position`` (e.g. by a session fixture it set up)."""
    record = current()
    return list(record.exchanges[position:]) if record is not None else []


def attach(exchanges: list[dict[str, Any]]) -> None:
    """Add exchanges recorded for another check (a shared fixture ran there) as evidence of this one too."""
    record = current()
    if record is None:
        return
    present = {id(e) for e in record.exchanges}
    for exchange in exchanges:
        if id(exchange) not in present:
            record.add_exchange(exchange)


# -- lanes: the records of cases run at once ---------------------------------------------------------------------


def open_lane() -> CheckRecord | None:
    """A lane for one case of the record this thread records into (None outside a check): the same rules and time
    budget, its own exchanges and notes. Enter it with :func:`enter_lane` in the thread or task that runs the case."""
    parent = current()
    if parent is None:
        return None
    deadline = parent.deadline
    if deadline is not None:  # what the check was excused so far moves the lane's deadline as it moves the check's
        deadline += parent.throttle_wait_s + parent.waited_s
    return CheckRecord(rules=parent.rules, deadline=deadline, budget_s=parent.budget_s)


def lane_state() -> dict[int, Any] | None:
    """State of this thread's or task's case kept apart from the other cases' (None outside a lane): host objects
    that hold per-user state, such as the browser's cookie jar, keep their lane's copy here under their own id."""
    lane = _lane.get()
    if lane is None:
        return None
    if lane.lane_state is None:
        lane.lane_state = {}
    return lane.lane_state


def in_order(step: Callable[[], None]) -> None:
    """Run ``step`` (an append to a run-wide list, such as the answers later checks read) now, or, in a case's lane,
    when the lane is merged: such lists then hold the cases' entries in the cases' order."""
    lane = _lane.get()
    if lane is None:
        step()
    else:
        lane.in_order.append(step)


def enter_lane(lane: CheckRecord | None) -> contextvars.Token[CheckRecord | None]:
    """Record into ``lane`` from now on in this context (a thread's, or a task's own copy)."""
    return _lane.set(lane)


def lane_context(lane: CheckRecord) -> contextvars.Context:
    """A copy of this thread's context that records into ``lane``: run a whole check's body in it on a thread of
    its own (``context.run(body)``)."""
    context = contextvars.copy_context()
    context.run(_lane.set, lane)
    return context


def leave_lane(token: contextvars.Token[CheckRecord | None]) -> None:
    _lane.reset(token)


def merge_lane(lane: CheckRecord, case: str | None = None) -> None:
    """Add what ``lane`` recorded to the record this thread records into, as if it had been recorded there: its
    exchanges (each filed under ``case`` when given and not filed already), notes, cases and waits. Called for each
    lane in the order of the cases."""
    record = current()
    if record is None:
        return
    for exchange in lane.exchanges:
        if case is not None:
            exchange.setdefault("case", case)
        record.add_exchange(exchange)
    with _lock:
        record.notes.extend(lane.notes)
        record.cases.extend(lane.cases)
        record.throttle_wait_s += lane.throttle_wait_s
        record.waited_s += lane.waited_s
        if record.first_failure is None and lane.first_failure is not None:
            record.first_failure, record.failing_exchange = lane.first_failure, lane.failing_exchange
    for step in lane.in_order:
        in_order(step)  # a lane merged into another lane hands its steps on
