"""The gate between a stack that is still starting and the conformance run already started against it.

``conformance demo`` starts pytest as soon as the reference stack's processes are launched (their settings, ports
included, are known then), so that pytest's start (imports, collection, its xdist workers) overlaps the services'.
The run must not send a request before the stack is healthy: the demo names a gate file in the run's environment
(``GATE_ENV``: the demo's process id and the file's path) and writes it once, atomically, when the stack is up
(``READY``) or will not come up (``failed: ...``). A process that runs checks waits at the gate before its first
one (:func:`wait`); the controller writes no report unless the gate opened (:func:`shut_reason`): a run whose stack
never came up never ran. A run without the variable has no gate.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

GATE_ENV = "CONFORMANCE_STACK_GATE"
READY = "ready"
POLL_S = 0.01


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


def wait(limit_s: float = 600.0, poll_s: float = POLL_S) -> str | None:
    """Wait at the gate of this run's stack, if it has one: None once the stack is up (or with no gate), else why
    the run must not go on (the stack failed, whoever starts it is gone, or it did not come up within ``limit_s``)."""
    value = os.environ.get(GATE_ENV)
    if not value:
        return None
    parsed = _parse(value)
    if parsed is None:
        return f"{GATE_ENV} is not PID:PATH"
    pid, path = parsed
    deadline = time.monotonic() + limit_s
    while (state := _state(path)) is None:
        if not _alive(pid):
            return "the process that starts the reference stack is gone"
        if time.monotonic() > deadline:
            return f"the reference stack was not up within {limit_s:g} s"
        time.sleep(poll_s)
    return None if state == READY else f"the reference stack did not come up ({state})"


def shut_reason() -> str | None:
    """Why this run must not report: None when it has no gate or its gate opened, else what the gate says."""
    value = os.environ.get(GATE_ENV)
    if not value:
        return None
    parsed = _parse(value)
    if parsed is None:
        return f"{GATE_ENV} is not PID:PATH"
    state = _state(parsed[1])
    if state == READY:
        return None
    return "the reference stack never came up" + (f" ({state})" if state else "")
