"""Imported last by the matrix's fork server (harness.py): the project's own package, then ``gc.freeze()``.

Every harness run imports the plugin, the host, the suites' modules and the report writers; on a machine that sets
PYTHONDONTWRITEBYTECODE (this one, and CI often) it compiles them from source each time. Imported once here, a
forked run finds them in ``sys.modules``. What a run still does itself, as ``python -m pytest`` does: pytest loads
the ``pytest11`` entry points (for an imported module that is a lookup), registers the plugin, its
``pytest_plugins`` and the suites' conftest modules, and imports the test modules through its own import path
(``sys.modules`` answers, with the same ``__file__``). Importing sets no state a run depends on: the modules read
the environment and the working directory when called, not when imported (the run's are set after the fork);
Hypothesis' profile is registered on first use. Assertion rewriting was already off (``--assert=plain``).

Then ``warm()``: work every run does once, the same in each, done here so that the forked runs inherit its result
(found by profiling two runs in one process, ``benchmarks/matrix_run_cost.py``): inspect's table of module files
(in each run where a check fails: pytest's traceback walks every module once), the compression suites' test images,
rich's first render of a table and the HTML report's compiled template. Not Hypothesis' pool of constants (built in
each run with a property check): filled here, between importing Hypothesis and loading its pytest plugin, it makes
every forked run warn (HypothesisSideeffectWarning) where a real run does not. Each is a memo of a pure function of
what is already loaded or of its arguments: a run computes exactly the same values itself (inspect checks each
module's file again before trusting its entry, jinja2 the template's).

``gc.freeze()`` moves everything imported so far out of the collector's reach: each run's full collections (pytest
runs two at exit) would otherwise walk the whole preloaded heap, and their writes to object headers would copy
its pages.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import pkgutil
from types import ModuleType

import conformance

# Not part of a harness run: the reference services (separate processes), the command line.
SKIPPED = ("conformance.reference", "conformance.__main__", "conformance.cli._main")


def import_tree(package: ModuleType) -> None:
    """``package``'s modules and subpackages, depth first (pkgutil.walk_packages would import the skipped ones)."""
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        if not info.name.startswith(SKIPPED):
            module = importlib.import_module(info.name)
            if info.ispkg:
                import_tree(module)


def warm() -> None:
    """The memos above. Each step is only worth its time: one that fails (a private API moved, an image renamed)
    leaves the runs to do that work themselves instead of stopping the fork server."""
    for step in (_inspect_table, _test_images, _rich_table, _html_template):
        with contextlib.suppress(Exception):
            step()


def _inspect_table() -> None:
    import inspect

    # A code object has no __module__: inspect looks it up by file, filling its table of every module's file (the
    # walk over sys.modules that pytest's traceback of a failed check would otherwise make in each run).
    inspect.getmodule(_inspect_table.__code__)


def _test_images() -> None:
    from conformance.suites.compression import images

    images.subject_pixels()
    for name in IMAGES:
        images.image(name)


def _rich_table() -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table("suite", "status")
    table.add_row("auth", "passed ✓")
    Console(file=io.StringIO(), width=100, color_system=None).print(table)


def _html_template() -> None:
    from conformance.report import html

    # The report's template compiled (jinja2 keeps it in its environment and checks the file is unchanged at each
    # use); a run otherwise compiles it, or loads it from the per-user cache, which a pytester run's fresh HOME lacks.
    html._environment().get_template("report.html.j2")


# Every name images.image() knows (its docstring lists them).
IMAGES: tuple[str, ...] = ("photo.jpg", "photo.png", "flat.png", "flat.jpg", "meta.jpg", "meta.png", "subject.png")
IMAGES += ("truncated.jpg", "truncated.png", "fake.png", "text.txt", "photo.gif")

import_tree(conformance)
warm()
gc.freeze()
