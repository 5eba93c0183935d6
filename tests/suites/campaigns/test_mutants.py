"""The campaigns suite proven both ways: every CAMP rule passes on the reference sandbox, and each mutant fails
exactly its rules (plus at most its dependents)."""

from __future__ import annotations

import pytest

from conformance.testing import RunResult
from tests.suites.platform.matrix import (
    assert_mutant_trips_exactly,
    assert_reference_passes,
    run_matrix,
    suite_mutants,
)

MUTANTS = {m.name: m for m in suite_mutants("campaigns")}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    return run_matrix("campaigns", tmp_path_factory.mktemp("campaigns-matrix"))


def test_reference_passes_every_rule(matrix: dict[str, RunResult]) -> None:
    assert_reference_passes(matrix["reference"], "campaigns")


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_fails_exactly_its_rules(matrix: dict[str, RunResult], name: str) -> None:
    assert_mutant_trips_exactly(matrix[name], MUTANTS[name])
