"""The defect catalog: every mutant of the reference stack, the service it lives in and the rules it must trip.

Each service package keeps its own list (``conformance.reference.<service>.mutants.MUTANTS``); this module
gathers them. A mutant is started with ``conformance up --mutant NAME`` or, in tests, by passing its name to the
service (``--mutant NAME``). ``rules`` are the rule IDs that must fail; ``dependents`` are rules that may also
fail (or be blocked) because they depend on the broken one. Anything else failing is a precision bug.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from conformance.reference._service import present_module

SERVICE_PACKAGES = ("platform", "compression", "toolserver", "idp", "proxy")


@dataclass(frozen=True)
class Mutant:
    name: str
    service: str
    rules: frozenset[str]
    description: str
    dependents: frozenset[str] = frozenset()


def row_maker(service: str) -> Callable[..., Mutant]:
    """The row constructor of one service's catalogue: ``(name, rules, description, dependents=())``."""

    def row(name: str, rules: Iterable[str], description: str, dependents: Iterable[str] = ()) -> Mutant:
        return Mutant(name, service, frozenset(rules), description, frozenset(dependents))

    return row


def all_mutants() -> dict[str, Mutant]:
    """Every mutant by name, across the service packages that exist in this installation."""
    found: dict[str, Mutant] = {}
    for package in SERVICE_PACKAGES:
        module = present_module(f"conformance.reference.{package}.mutants")
        for mutant in getattr(module, "MUTANTS", []):
            if mutant.name in found:
                raise ValueError(f"duplicate mutant name {mutant.name!r}")
            found[mutant.name] = mutant
    return found


def mutants_by_rule() -> dict[str, list[str]]:
    by_rule: dict[str, list[str]] = {}
    for mutant in all_mutants().values():
        for rule_id in mutant.rules:
            by_rule.setdefault(rule_id, []).append(mutant.name)
    return {rule_id: sorted(names) for rule_id, names in by_rule.items()}
