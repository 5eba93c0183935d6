"""The cyclic garbage collector during a certification run (issue 19).

A run builds a large heap that lives to its end (pytest, the plugins, Hypothesis, the collected checks, then the
evidence of every exchange). Every full collection walks all of it again, and the interpreter's exit walks it once
more: measured 0.3-0.45 s of CPU per platform/campaigns or compression run against the reference, up to a second
of wall between pytest's last line and its exit. ``gc.freeze()`` moves what is alive at a phase boundary out of
the collector's view (it is still freed by reference counting); garbage made during the checks is collected as
usual. Objects frozen are unfrozen when the run's config is cleaned up, so a caller that runs pytest in process
(pytester) keeps collecting the cycles of that run; only the interpreter's exit is left frozen.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Generator
from typing import Any

import pytest

_EXIT_HOOKED = False


class HeapFreezer:
    """Freezes the heap once the checks are collected and once the reports are written."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, None]:
        gc.freeze()  # modules, fixtures, collected checks: alive until the end of the run
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, None]:
        yield
        gc.freeze()  # the reports are written: what is left is torn down at exit


def freeze_between_phases(config: pytest.Config) -> None:
    """At ``pytest_configure`` of a run that certifies: freeze what start-up built, then at each phase end; unfreeze
    when the config is cleaned up (after every cleanup added later); freeze again for the interpreter's exit."""
    global _EXIT_HOOKED
    gc.freeze()
    config.add_cleanup(gc.unfreeze)  # cleanups run last in, first out: after every one added later
    config.pluginmanager.register(HeapFreezer(), "conformance-gc")
    if not _EXIT_HOOKED:
        atexit.register(gc.freeze)  # nothing runs after atexit that needs its cycles collected
        _EXIT_HOOKED = True
