"""The profile suite proven both ways against the reference stack: the reference passes PROF-01 … 13, and each
tool-server mutant of a PROF rule trips exactly its rules among all the issue-6 rules (plus at most its
dependents). Runs are shared with the token matrix (``tests/suites/auth/matrix_tokens.py``)."""

from __future__ import annotations

import pytest

from conformance.testing import RunResult
from tests.suites.auth.matrix_tokens import MUTANTS, RULES, assert_reference_passes, assert_trips_exactly, matrix

PROF_RULES = frozenset(r for r in RULES if r.startswith("PROF-"))
PROF_MUTANTS = sorted(name for name, m in MUTANTS.items() if m.rules & PROF_RULES)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    return matrix(request.session, tmp_path_factory)


def test_reference_passes_every_rule(runs: dict[str, RunResult]) -> None:
    assert_reference_passes(runs["reference"], PROF_RULES)


@pytest.mark.parametrize("name", PROF_MUTANTS)
def test_mutant_trips_exactly_its_rules(runs: dict[str, RunResult], name: str) -> None:
    assert_trips_exactly(runs[name], MUTANTS[name])


def test_every_rule_has_a_mutant() -> None:
    proven = set().union(*(m.rules for m in MUTANTS.values()))
    assert proven >= PROF_RULES, sorted(PROF_RULES - proven)
