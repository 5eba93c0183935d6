"""The gate between a stack that is still starting and the conformance run already started against it.

``conformance demo`` starts pytest as soon as the reference stack's processes are launched (their settings, ports
included, are known then), so that pytest's start (imports, collection, its xdist workers) overlaps the services'.
The run must not send a request before the stack is healthy: the demo names a gate file in the run's environment
(``GATE_ENV``: the demo's process id and the file's path) and writes it, atomically each time, as the stack comes
up: the service packages up so far (``up: platform compression``), then ``READY`` once every service is up, or
``failed: ...`` when the stack will not come up. A process that runs checks waits at the gate before its first
check of each suite (:func:`wait`) until the packages that suite needs are up (:func:`needs`): the platform's
checks need not wait for the tool server's imports. The controller writes no report unless the gate opened whole
(:func:`shut_reason`): a run whose stack never came up never ran. A run without the variable has no gate.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from conformance.core.targets import SERVICE_REQUIRES, SUITE_SERVICES

GATE_ENV = "CONFORMANCE_STACK_GATE"
READY = "ready"
UP = "up:"
POLL_S = 0.01


def needs(suite: str | None) -> frozenset[str] | None:
    """The service packages a suite's checks need up (None: the whole stack): its own, what they require, and
    whatever requires those (a proxy a mutant puts in front of the IdP the tool server requires)."""
    if suite is None or suite not in SUITE_SERVICES:
        return None
    needed = set(SUITE_SERVICES[suite])
    while True:
        more = {r for p in needed for r in SERVICE_REQUIRES.get(p, ())}
        more |= {p for p, required in SERVICE_REQUIRES.items() if needed & set(required)}
        if more <= needed:
            return frozenset(needed)
        needed |= more


def up(packages: frozenset[str]) -> str:
    """The gate's state while the stack comes up: these packages are."""
    return " ".join([UP, *sorted(packages)])


def _opens_for(state: str, suite: str | None) -> bool:
    if state == READY:
        return True
    needed = needs(suite)
    return needed is not None and state.startswith(UP) and needed <= set(state.split()[1:])


def gate_value(pid: int, path: Path) -> str:
    """The value of ``GATE_ENV`` for a gate file ``path`` that the process ``pid`` will write."""
    return f"{pid}:{path}"


def _parse(value: str) -> tuple[int, Path] | None:
    pid, _, path = value.partition(":")
    if not pid.isdigit() or not path:
        return None
    return int(pid), Path(path)


def write(path: Path, state: str) -> None:
    """Open (``READY``) or shut (``failed: reason``) the gate: the file appears whole or not at all."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(state, encoding="utf-8")
    partial.replace(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _state(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _gate() -> tuple[int, Path] | str | None:
    """This run's gate (the pid of whoever starts the stack, the file it writes), None when it has none, or what is
    wrong with the variable that names it."""
    value = os.environ.get(GATE_ENV)
    if not value:
        return None
    return _parse(value) or f"{GATE_ENV} is not PID:PATH"


def wait(suite: str | None = None, limit_s: float = 600.0, poll_s: float = POLL_S) -> str | None:
    """Wait at the gate of this run's stack, if it has one: None once what ``suite`` needs is up (no suite: the
    whole stack; no gate: at once), else why the run must not go on (the stack failed, whoever starts it is gone,
    or it did not come up within ``limit_s``)."""
    gate = _gate()
    if gate is None or isinstance(gate, str):
        return gate
    pid, path = gate
    deadline = time.monotonic() + limit_s
    while (state := _state(path)) is None or state.startswith(UP):
        if state is not None and _opens_for(state, suite):
            return None
        if not _alive(pid):
            return "the process that starts the reference stack is gone"
        if time.monotonic() > deadline:
            return f"the reference stack was not up within {limit_s:g} s"
        time.sleep(poll_s)
    return None if state == READY else f"the reference stack did not come up ({state})"


def shut_reason() -> str | None:
    """Why this run must not report: None when it has no gate or its gate opened, else what the gate says."""
    gate = _gate()
    if gate is None or isinstance(gate, str):
        return gate
    state = _state(gate[1])
    if state == READY:
        return None
    return "the reference stack never came up" + (f" ({state})" if state and not state.startswith(UP) else "")
