"""Keeps pytest's assertion rewriter off the harness's own modules (start-up CPU). Imported first by the
package's ``__init__``, so it runs before any other module of the package is imported.

pytest marks every package of a distribution that declares a pytest plugin for assertion rewriting: installed from
a wheel (as vendors and the CI action install it), the whole ``conformance`` package is parsed, rewritten and
compiled from source on every run that has no bytecode cache for it (a fresh CI job, ``PYTHONDONTWRITEBYTECODE``):
CPU in every process before the first check, for every module of the package the run loads. Rewriting improves
only the messages of the harness's own internal asserts, and the project's tests run the package unrewritten (an
editable install, which pytest does not find to mark), so this makes the installed harness run as the tested one. The
checks and their fixtures keep their rewritten asserts: test modules and conftest files are rewritten by name,
whatever is marked, and ``conformance.suites.fixtures`` is marked by name as a ``pytest_plugins`` entry.
A no-op outside pytest, or when pytest's rewriter is not active (``--assert=plain``).
"""

from __future__ import annotations

import sys
from typing import Any

PACKAGE = "conformance"


def unmark(hook: Any, package: str) -> None:
    """Take ``package`` off the packages pytest's rewrite ``hook`` marked (a no-op for anything else). The one place
    that reads the hook's private set, for this package and for Hypothesis (``_hypothesis.skip_assertion_rewriting``).
    """
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set):
        marked.discard(package)


def keep_the_package_compiled() -> None:
    for finder in sys.meta_path:
        if type(finder).__name__ == "AssertionRewritingHook":
            unmark(finder, PACKAGE)


keep_the_package_compiled()
