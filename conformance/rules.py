"""The rule catalog: every rule the harness certifies, keyed by its stable ID.

Checks declare the rules they decide with :func:`rule`; an unknown ID fails at import time, so the catalog and the
checks cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

import pytest

from conformance._catalog import CATALOG
from conformance._exceptions import UnknownRuleError
from conformance.targets import SUITE_NAMES as SUITES
from conformance.targets import SUITE_TARGET  # which configured target each suite certifies

__all__ = ["SUITES", "SUITE_TARGET"]  # re-exported: the suites' table lives in conformance.targets

DOCUMENTS: dict[str, str] = {
    "A": "Tool-Server Authorization Contract (000_0337f9e2b7ef4d29.txt)",
    "P": "Platform API (001_ac3353e89bc660bb.txt)",
    "C": "Image Compression API (002_62e67b920237d681.txt)",
}


class Level(StrEnum):
    MUST = "MUST"  # a failure fails the run
    SHOULD = "SHOULD"  # a failure is a warning (fails only with --strict)
    INFO = "INFO"  # observed and reported, never fails


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    suite: str
    title: str
    text: str
    source: str
    needs: str | None = None

    @property
    def document(self) -> str | None:
        """The contract document the source points to, when it names one."""
        return DOCUMENTS.get(self.source.split(" ", 1)[0])


RULES: dict[str, Rule] = {
    str(entry["id"]): Rule(
        id=str(entry["id"]),
        level=Level(str(entry["level"])),
        suite=str(entry["suite"]),
        title=str(entry["title"]),
        text=str(entry["text"]),
        source=str(entry["source"]),
        needs=entry["needs"],
    )
    for entry in CATALOG
}

# Rules about the harness itself rather than the target: proven by the project's own tests, reported as such.
HARNESS_RULES: dict[str, str] = {
    "RL-06": "a rule about this harness as a client (Retry-After, backoff with jitter, bounds, no retry of "
    "quota errors), proven by its own test suite (tests/host/test_retry.py, tests/suites/platform/"
    "test_host_client.py), not a property of the target",
}

# Rule IDs that have at least one check, filled as suite modules are imported.
IMPLEMENTED: dict[str, list[str]] = {}


def get_rule(rule_id: str) -> Rule:
    try:
        return RULES[rule_id]
    except KeyError:
        raise UnknownRuleError(f"unknown rule ID {rule_id!r}: not in the catalog (conformance rules)") from None


F = TypeVar("F", bound=Callable[..., Any])


def rule(*rule_ids: str) -> Callable[[F], F]:
    """Declare the rule(s) a check decides. Adds the ``rule`` marker; unknown IDs raise at import."""
    if not rule_ids:
        raise UnknownRuleError("@rule needs at least one rule ID")
    for rule_id in rule_ids:
        get_rule(rule_id)

    def decorate(func: F) -> F:
        for rule_id in rule_ids:
            IMPLEMENTED.setdefault(rule_id, []).append(f"{func.__module__}.{func.__qualname__}")
        marked: F = pytest.mark.conformance_rule(*rule_ids)(func)
        return marked

    return decorate


def load_all_checks(suites: Iterable[str] | None = None) -> dict[str, str]:
    """Import the suite modules (all, or those of ``suites``) so that :data:`IMPLEMENTED` is complete for them;
    return the modules that failed to import."""
    import importlib
    import pkgutil

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
            "implemented": r.id in IMPLEMENTED,
            "checks": sorted(set(IMPLEMENTED.get(r.id, []))),
            "mutants": proving.get(r.id, []),
            "cases": case_count(r.id),
        }
        for r in RULES.values()
    ]
