"""Every check and what proves it: loading the suites' modules (so :data:`conformance.core.rules.IMPLEMENTED` is
complete) and the catalog rows ``conformance rules`` prints, with the mutants that prove each check can fail.

Kept out of :mod:`conformance.core.rules` so the catalog stays a leaf: this module imports upward (the suites, the
reference stack's mutants) and only the CLI and the end of a run need it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Any

from conformance.core.rules import IMPLEMENTED, RULES


def load_all_checks(suites: Iterable[str] | None = None) -> dict[str, str]:
    """Import the suite modules (all, or those of ``suites``) so that :data:`IMPLEMENTED` is complete for them;
    return the modules that failed to import."""
    import conformance.suites as suites_pkg

    broken: dict[str, str] = {}

    def onerror(name: str) -> None:
        broken[name] = "package failed to import"

    for info in pkgutil.walk_packages(suites_pkg.__path__, prefix="conformance.suites.", onerror=onerror):
        leaf = info.name.rsplit(".", 1)[-1]
        suite = info.name.split(".")[2] if info.name.count(".") >= 3 else ""
        if suites is not None and suite not in suites:
            continue
        if leaf.startswith("test_"):
            try:
                importlib.import_module(info.name)
            except Exception as exc:  # a broken suite module must not take the catalog or the report down
                broken[info.name] = f"{type(exc).__name__}: {exc}"
    return broken


def catalog_rows() -> list[dict[str, Any]]:
    """The catalog as JSON-ready rows, with implementation status and proving mutants."""
    load_all_checks()
    from conformance.suites._cases import case_count

    try:
        from conformance.reference.mutants import mutants_by_rule

        proving = mutants_by_rule()
    except Exception:  # the reference stack is optional in an installation
        proving = {}
    return [
        {
            "id": r.id,
            "level": r.level.value,
            "suite": r.suite,
            "title": r.title,
            "text": r.text,
            "source": r.source,
            "document": r.document,
            "needs": r.needs,
            "offline": r.offline,
            "implemented": r.id in IMPLEMENTED,
            "checks": sorted(set(IMPLEMENTED.get(r.id, []))),
            "mutants": proving.get(r.id, []),
            "cases": case_count(r.id),
        }
        for r in RULES.values()
    ]
