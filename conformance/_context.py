"""The record of the check that is running now: the exchanges it made and the observations it noted.

The plugin opens one record per test; the HTTP layer and :func:`conformance.observe` append to it. A plain module
global (not a contextvar) on purpose: servers the harness runs in threads (the CIMD publisher, the image server)
record into the same running check.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

MAX_EXCHANGES_PER_CHECK = 60


@dataclass
class CheckRecord:
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dropped: int = 0

    def add_exchange(self, exchange: dict[str, Any]) -> None:
        with _lock:
            if len(self.exchanges) >= MAX_EXCHANGES_PER_CHECK:
                self.dropped += 1
            else:
                self.exchanges.append(exchange)


_lock = threading.Lock()
_current: CheckRecord | None = None


def begin() -> CheckRecord:
    global _current
    _current = CheckRecord()
    return _current


def end() -> CheckRecord | None:
    global _current
    record, _current = _current, None
    return record


def current() -> CheckRecord | None:
    return _current


def mark() -> int:
    """Where the running check's exchanges end now (for :func:`since`)."""
    record = _current
    return len(record.exchanges) if record is not None else 0


def since(position: int) -> list[dict[str, Any]]:
    """The exchanges the running check recorded after ``position`` (e.g. by a session fixture it set up)."""
    record = _current
    return list(record.exchanges[position:]) if record is not None else []


def attach(exchanges: list[dict[str, Any]]) -> None:
    """Add exchanges recorded for another check (a shared fixture ran there) as evidence of this one too."""
    record = _current
    if record is None:
        return
    present = {id(e) for e in record.exchanges}
    for exchange in exchanges:
        if id(exchange) not in present:
            record.add_exchange(exchange)
