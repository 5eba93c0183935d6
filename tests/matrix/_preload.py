"""Imported last by the matrix's fork server (harness.py): the project's own package, then ``gc.freeze()``.

Every harness run imports the plugin, the host, the suites' modules and the report writers; on a machine that sets
PYTHONDONTWRITEBYTECODE (this one, and CI often) it compiles them from source each time. Imported once here, a
forked run finds them in ``sys.modules``. What a run still does itself, as ``python -m pytest`` does: pytest loads
the ``pytest11`` entry points (for an imported module that is a lookup), registers the plugin, its
``pytest_plugins`` and the suites' conftest modules, and imports the test modules through its own import path
(``sys.modules`` answers, with the same ``__file__``). Importing sets no state a run depends on: the modules read
the environment and the working directory when called, not when imported (the run's are set after the fork);
Hypothesis' profile is registered on first use. Assertion rewriting was already off (``--assert=plain``).

``gc.freeze()`` moves everything imported so far out of the collector's reach: each run's full collections (pytest
runs two at exit) would otherwise walk the whole preloaded heap, and their writes to object headers would copy
its pages.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
from types import ModuleType

import conformance

# Not part of a harness run: the reference services (separate processes), the command line.
SKIPPED = ("conformance.reference", "conformance.__main__", "conformance.cli")


def import_tree(package: ModuleType) -> None:
    """``package``'s modules and subpackages, depth first (pkgutil.walk_packages would import the skipped ones)."""
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        if not info.name.startswith(SKIPPED):
            module = importlib.import_module(info.name)
            if info.ispkg:
                import_tree(module)


import_tree(conformance)
gc.freeze()
