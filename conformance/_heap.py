"""The end of a certification run and the cyclic garbage collector (issue 19).

A run ends with a large heap (pytest, the plugins, Hypothesis, the collected checks, the evidence of every exchange,
the reports). After the reports are written, every full collection walks all of it again (pytest collects at the
end of the session), and so does the interpreter's exit: measured up to a second of wall, about 0.3 s of CPU,
between pytest's last line and its exit on a platform/campaigns or compression run under load, on the demo's
critical path. So, for an active run, what is alive once the reports are written is frozen (:func:`gc.freeze`: still
freed by reference counting, no longer walked), and so is the heap at the interpreter's exit. The freeze is undone
when the run's config is cleaned up, so that a caller that runs pytest in process (pytester) collects that run's
cycles as usual; only the exit stays frozen.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Generator
from typing import Any

import pytest

_EXIT_HOOKED = False


class _FreezeAfterReports:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, None]:
        yield
        gc.freeze()  # the reports are written: what is left is torn down at exit


def freeze_after_reports(config: pytest.Config) -> None:
    """From ``pytest_configure`` of an active run: freeze once the reports are written, unfreeze at the config's
    cleanup (after every cleanup added later), freeze again for the interpreter's exit."""
    global _EXIT_HOOKED
    config.add_cleanup(gc.unfreeze)  # cleanups run last in, first out: after every one added later
    config.pluginmanager.register(_FreezeAfterReports(), "conformance-heap")
    if not _EXIT_HOOKED:
        atexit.register(gc.freeze)  # nothing that runs after atexit needs its cycles collected
        _EXIT_HOOKED = True
