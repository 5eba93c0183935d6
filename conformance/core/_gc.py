"""The cyclic garbage collector during a certification run.

A run imports a great deal before its first check (pytest, httpx, jsonschema, the suites; the ``mcp`` SDK's pydantic
models when a check lists tools): a large heap of tracked objects that live until the process ends. With CPython's
default thresholds the collector runs hundreds of times in a run and walks all of them in every full collection,
which costs an auth+profile run more CPU than the end-of-run report writing (docs/performance.md). So, for an
active run only:

- the youngest generation is collected every ``GEN0_THRESHOLD`` allocations instead of 700 (the older
  generations keep their ratios): short-lived cycles are still freed, in fewer, larger passes;
- what exists when collection ends (modules, classes, the collected items) is frozen (:func:`gc.freeze`): later
  collections, pytest's own at the end of the session included, no longer walk it.

Both are undone by a cleanup that runs after pytest's last collection (the unraisable-exception check), so that a
process that goes on (pytester in-process runs, an embedding tool) gets its collector back as it was.

After the reports are written, every full collection walks the whole heap again (pytest collects at the end of the
session), and so does the interpreter's exit: a pause between pytest's last line and its exit, long under load. So
what is alive once the reports are written is frozen too, and so is the heap at the interpreter's exit; the freeze
is undone at the config's cleanup (a pytester run collects its cycles as usual), only the exit stays frozen.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import sys
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

GEN0_THRESHOLD = 20_000
_EXIT_HOOKED = False
_GOVERNED = 0  # active runs in this process (a pytester run may run inside another)


def govern(config: pytest.Config) -> None:
    """The collector's policy for this active run: the youngest generation's threshold raised, what is alive frozen
    once the reports are written and at the interpreter's exit; threshold and freeze undone by one cleanup.

    Call from a ``tryfirst`` pytest_configure: cleanups run last-registered first, so this one then runs after the
    one pytest registers for its final ``gc.collect()``, which stays cheap."""
    global _EXIT_HOOKED, _GOVERNED
    previous = gc.get_threshold()
    if previous[0] != 0:  # 0 means automatic collection was turned off: leave it so
        gc.set_threshold(max(previous[0], GEN0_THRESHOLD), *previous[1:])
    _GOVERNED += 1

    def restore() -> None:
        global _GOVERNED
        _GOVERNED -= 1
        gc.unfreeze()
        gc.set_threshold(*previous)

    config.add_cleanup(restore)
    config.pluginmanager.register(_freeze_after_reports(), "conformance-heap")
    if not _EXIT_HOOKED:
        atexit.register(gc.freeze)  # nothing that runs after atexit needs its cycles collected
        _EXIT_HOOKED = True


def freeze_collected() -> None:
    """Move every object alive now (what collection imported and built) to the permanent generation."""
    gc.freeze()


@contextlib.contextmanager
def long_lived(module: str) -> Iterator[None]:
    """Around the first import of ``module``, which builds much that lives until the run ends (the ``mcp`` SDK's
    pydantic models, at the first tool listing), in an active run: no collection while it is built (each would walk
    the young objects it is being built from, for nothing), then what is alive is frozen, as what
    collection built is. Elsewhere (no active run, the module already imported, or the collector turned off) it
    changes nothing."""
    if not _GOVERNED or module in sys.modules or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _freeze_after_reports() -> object:
    """A pytest plugin freezing what is alive once the session's reports are written (pytest imported here: this
    module is a leaf the host may load without it)."""
    import pytest

    class FreezeAfterReports:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, None]:
            yield
            gc.freeze()  # the reports are written: what is left is torn down at exit

    return FreezeAfterReports()
