"""The token, tool-declaration, challenge and mTLS checks proven both ways against the reference stack: the
reference passes each of these rules, and each tool-server mutant of them trips exactly its rules among all the
issue-6 rules (plus at most its dependents). Runs are shared with the profile matrix (``matrix_tokens``)."""

from __future__ import annotations

import pytest

from conformance.testing import RunResult
from tests.suites.auth.matrix_tokens import MUTANTS, RULES, assert_reference_passes, assert_trips_exactly, matrix

AUTH_RULES = frozenset(r for r in RULES if r.startswith("AUTH-"))
AUTH_MUTANTS = sorted(name for name, m in MUTANTS.items() if m.rules & AUTH_RULES)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    return matrix(request.session, tmp_path_factory)


def test_reference_passes_every_rule(runs: dict[str, RunResult]) -> None:
    assert_reference_passes(runs["reference"], AUTH_RULES)


@pytest.mark.parametrize("name", AUTH_MUTANTS)
def test_mutant_trips_exactly_its_rules(runs: dict[str, RunResult], name: str) -> None:
    assert_trips_exactly(runs[name], MUTANTS[name])


def test_every_rule_has_a_mutant() -> None:
    proven = set().union(*(m.rules for m in MUTANTS.values()))
    assert proven >= AUTH_RULES, sorted(AUTH_RULES - proven)
