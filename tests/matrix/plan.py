"""The matrix, generated from the mutant catalogue and the rule catalogue alone.

Each mutant (``conformance.reference.mutants.all_mutants()``) breaks rules of one target (the tool server, the
platform API, the compression API: ``SUITE_TARGET`` of its rules' suites). Each target has one reference case: every
suite of the target against the unmutated stack, where every rule must pass (so no check of any suite fails a
correct target); it is proven on the session's ``conformance demo`` run (tests/matrix/
test_reference.py), which certifies every suite against the unmutated embedded stack anyway, instead of a harness run
of its own. A mutant's case is ONE harness run against a stack with the mutant switched on, of the suites that hold
its ``rules`` and ``dependents`` (``mutant_suites``): the run must fail each of its ``rules`` and nothing outside
``rules | dependents`` among the rules of those suites.

What a mutant case proves: every rule the mutant claims is failed (no check goes blind to its defect), and no other
rule of the suites it touches is failed by it. What it does not prove (to keep the matrix's time down):
that the mutant leaves the rules of its target's OTHER suites alone, e.g. that an auth-only tool-server mutant
passes the profile suite: a mutant that also broke a rule of a suite it does not list would go unnoticed here (the
mutant would be imprecise, the checks would not be wrong). The reference case still runs every suite, so a check
of any suite that fails a correct target is still caught, and every rule's mutant still must fail it.
The reference tool server serves both MCP eras and the host speaks the modern one when offered: the tool server's
cases run in the modern era (2026-07-28); ``MATRIX_MCP_ERA=legacy`` runs them in the legacy one (conftest.run_settings).
A mutant added to any service's ``mutants.toml`` becomes a case without touching this file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from conformance.core.rules import HARNESS_RULES, RULES, SUITE_TARGET
from conformance.reference.mutants import Mutant, all_mutants

GROUP_SIZE = 12


@dataclass(frozen=True)
class Case:
    """One harness run: ``suites`` against ``target``'s stack with ``mutant`` on (None: the reference)."""

    target: str
    suites: tuple[str, ...]
    mutant: Mutant | None = None
    # Cases one xdist worker runs together, its thread pool keeping several in flight: up to GROUP_SIZE mutants of
    # one service (small enough that the two workers share the longest service's work).
    group: str = "matrix"

    @property
    def id(self) -> str:
        return self.mutant.name if self.mutant else f"reference-{self.target}"

    @property
    def rules(self) -> frozenset[str]:
        """Every rule the run decides (the rules of its suites)."""
        return frozenset(r for r, rule in RULES.items() if rule.suite in self.suites)


class PlanError(ValueError):
    """The catalogue has a mutant the matrix cannot place (no rules, unknown rule, rules of two targets)."""


def target_suites(target: str) -> tuple[str, ...]:
    return tuple(suite for suite, name in SUITE_TARGET.items() if name == target)


def mutant_suites(mutant: Mutant) -> tuple[str, ...]:
    """The suites a mutant's case runs: those holding its rules and dependents, in the target's order."""
    wanted = {RULES[r].suite for r in mutant.rules | mutant.dependents}
    return tuple(suite for suite in target_suites(target_of(mutant)) if suite in wanted)


def target_of(mutant: Mutant) -> str:
    unknown = sorted(r for r in mutant.rules | mutant.dependents if r not in RULES)
    if unknown or not mutant.rules:
        raise PlanError(f"mutant {mutant.name}: no rules, or unknown rule IDs {unknown}")
    targets = {SUITE_TARGET[RULES[r].suite] for r in mutant.rules}
    if len(targets) != 1:
        raise PlanError(f"mutant {mutant.name} breaks rules of several targets {sorted(targets)}: split it")
    return targets.pop()


def build(mutants: Iterable[Mutant]) -> list[Case]:
    """The reference case of every target that has a mutant, then one case per mutant (by service, then name)."""
    cases: list[Case] = []
    by_service = sorted(mutants, key=lambda m: (m.service, m.name))
    for service in sorted({m.service for m in by_service}):
        mine = [m for m in by_service if m.service == service]
        chunks = math.ceil(len(mine) / GROUP_SIZE)
        for index, m in enumerate(mine):
            chunk = f"{service}-{index * chunks // len(mine) + 1}" if chunks > 1 else service
            cases.append(Case(target_of(m), mutant_suites(m), m, f"matrix-{chunk}"))
    targets = sorted({case.target for case in cases})
    return [*(Case(t, target_suites(t), group=f"matrix-reference-{t}") for t in targets), *cases]


def plan() -> list[Case]:
    return build(all_mutants().values())


def proven_rules(mutants: Iterable[Mutant]) -> set[str]:
    return set().union(*(m.rules for m in mutants))


def unproven_rules(mutants: Iterable[Mutant]) -> list[str]:
    """Rules of the catalogue that no mutant breaks (rules about the harness itself excepted)."""
    return sorted(set(RULES) - set(HARNESS_RULES) - proven_rules(mutants))
