"""The defect catalog: every mutant of the reference stack, the service it lives in and the rules it must trip.

Each service package keeps its catalogue as data, ``conformance/reference/<service>/mutants.toml`` (one
``[mutant.NAME]`` table a mutant: ``rules``, ``description``, optional ``dependents``); the behaviour a name switches
on is the service's code. ``load_catalogue`` reads and checks one file (its ``mutants.py`` exposes the rows as
``MUTANTS``); ``all_mutants`` gathers them. A mutant is started with ``conformance up --mutant NAME`` or, in tests,
by passing its name to the service (``--mutant NAME``). ``rules`` are the rule IDs that must fail; ``dependents`` are
rules that may also fail (or be blocked) because they depend on the broken one. Anything else failing is a
precision bug. A dependent written ``"@name"`` is the group ``name`` of ``rule_groups.toml``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from conformance.core.targets import SERVICE_PACKAGES as SERVICE_PACKAGES  # re-exported: the stack's services
from conformance.reference._service import present_module

# The shape of a rule ID (AUTH-FLOW-04, TOK-01, IMG-SHRINK-03). Whether the rule exists is the matrix's check
# (tests/matrix/plan.py): the reference stack does not import the rule catalogue.
RULE_ID = re.compile(r"[A-Z]+(?:-[A-Z]+)*-\d{2}")
_FIELDS = {"rules", "description", "dependents"}


@dataclass(frozen=True)
class Mutant:
    name: str
    service: str
    rules: frozenset[str]
    description: str
    dependents: frozenset[str] = frozenset()


class CatalogueError(ValueError):
    """A mutant catalogue that cannot be read as rows of mutants (the message names the file and the row)."""


def _toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # a name defined twice in one file is a decode error too
        raise CatalogueError(f"{source}: {exc}") from None


def _resource(package: str, name: str) -> str:
    return (files(package) / name).read_text(encoding="utf-8")


@cache
def rule_groups() -> dict[str, frozenset[str]]:
    """The named rule sets of ``rule_groups.toml``, referred to as ``"@name"`` in a catalogue's dependents."""
    groups = _toml(_resource("conformance.reference", "rule_groups.toml"), "rule_groups.toml")
    return {name: frozenset(_rule_ids(ids, f"rule_groups.toml: {name}")) for name, ids in groups.items()}


def _rule_ids(value: object, where: str, groups: dict[str, frozenset[str]] | None = None) -> set[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise CatalogueError(f"{where}: expected a list of rule IDs, got {value!r}")
    found: set[str] = set()
    for item in value:
        if groups is not None and item.startswith("@"):
            if item[1:] not in groups:
                raise CatalogueError(f"{where}: unknown rule group {item!r} (rule_groups.toml has {sorted(groups)})")
            found |= groups[item[1:]]
        elif RULE_ID.fullmatch(item):
            found.add(item)
        else:
            raise CatalogueError(f"{where}: {item!r} is not a rule ID")
    return found


def parse_catalogue(service: str, text: str, source: str = "mutants.toml") -> list[Mutant]:
    """The rows of one catalogue, in file order; refuses a name defined twice, anything but ``[mutant.NAME]`` tables
    of the known fields, a row without rules or description, and a malformed rule ID or unknown group."""
    data = _toml(text, source)
    if set(data) - {"mutant"} or not isinstance(data.get("mutant", {}), dict):
        raise CatalogueError(f"{source}: expected only [mutant.NAME] tables, got {sorted(data)}")
    mutants: list[Mutant] = []
    for name, row in data.get("mutant", {}).items():
        where = f"{source}: mutant {name!r}"
        if not isinstance(row, dict) or set(row) - _FIELDS or not {"rules", "description"} <= set(row):
            raise CatalogueError(f"{where}: expected rules, description and optional dependents, got {row!r}")
        if not isinstance(row["description"], str) or not row["description"].strip():
            raise CatalogueError(f"{where}: the description must be a non-empty string")
        rules = _rule_ids(row["rules"], f"{where} rules")
        if not rules:
            raise CatalogueError(f"{where}: a mutant must break at least one rule")
        # A group may hold the mutant's own rules: those must fail, they are not merely allowed to.
        dependents = _rule_ids(row.get("dependents", []), f"{where} dependents", rule_groups()) - rules
        mutants.append(Mutant(name, service, frozenset(rules), row["description"], frozenset(dependents)))
    return mutants


def load_catalogue(service: str) -> list[Mutant]:
    """The mutants of ``service`` from ``conformance/reference/<service>/mutants.toml`` (shipped in the wheel)."""
    source = f"conformance/reference/{service}/mutants.toml"
    return parse_catalogue(service, _resource(f"conformance.reference.{service}", "mutants.toml"), source)


def all_mutants() -> dict[str, Mutant]:
    """Every mutant by name, across the service packages that exist in this installation."""
    return gather(
        getattr(present_module(f"conformance.reference.{package}.mutants"), "MUTANTS", [])
        for package in SERVICE_PACKAGES
    )


def gather(catalogues: Iterable[Iterable[Mutant]]) -> dict[str, Mutant]:
    """The catalogues' mutants by name; a name used in two services is refused (it would switch both)."""
    found: dict[str, Mutant] = {}
    for catalogue in catalogues:
        for mutant in catalogue:
            if mutant.name in found:
                raise CatalogueError(f"duplicate mutant name {mutant.name!r}")
            found[mutant.name] = mutant
    return found


def mutants_by_rule() -> dict[str, list[str]]:
    by_rule: dict[str, list[str]] = {}
    for mutant in all_mutants().values():
        for rule_id in mutant.rules:
            by_rule.setdefault(rule_id, []).append(mutant.name)
    return {rule_id: sorted(names) for rule_id, names in by_rule.items()}
