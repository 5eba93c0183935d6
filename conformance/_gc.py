"""The cyclic garbage collector during a certification run (issue 19).

A run imports a great deal before its first check (pytest, httpx, jsonschema, the suites; the ``mcp`` SDK's pydantic
models when a check lists tools): about 130 000 tracked objects that live until the process ends. With CPython's
default thresholds the collector runs ~500 times and walks all of them in every full collection: 0.4-0.5 s of CPU
on an auth+profile run, more than the end-of-run report writing. So, for an active run only:

- the youngest generation is collected every ``GEN0_THRESHOLD`` allocations instead of 700 (the older
  generations keep their ratios): short-lived cycles are still freed, in fewer, larger passes;
- what exists when collection ends (modules, classes, the collected items) is frozen (:func:`gc.freeze`): later
  collections, pytest's own at the end of the session included, no longer walk it.

Both are undone by a cleanup that runs after pytest's last collection (the unraisable-exception check), so that a
process that goes on (pytester in-process runs, an embedding tool) gets its collector back as it was.
"""

from __future__ import annotations

import gc

import pytest

GEN0_THRESHOLD = 20_000


def relax(config: pytest.Config) -> None:
    """Raise the youngest generation's threshold for this run; restore it (and unfreeze) at the config's cleanup.

    Call from a ``tryfirst`` pytest_configure: cleanups run last-registered first, so this one then runs after the
    one pytest registers for its final ``gc.collect()``, which stays cheap."""
    previous = gc.get_threshold()
    if previous[0] != 0:  # 0 means automatic collection was turned off: leave it so
        gc.set_threshold(max(previous[0], GEN0_THRESHOLD), *previous[1:])

    def restore() -> None:
        gc.unfreeze()
        gc.set_threshold(*previous)

    config.add_cleanup(restore)


def freeze_collected() -> None:
    """Move every object alive now (what collection imported and built) to the permanent generation."""
    gc.freeze()
