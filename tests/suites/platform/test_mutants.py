"""The platform suite proven both ways: every TOK/RL rule with a check passes on the reference sandbox, and each
mutant fails exactly its rules (plus at most its dependents). RL-06 has no check in the suite: it is a property
of the harness's own client, proven in test_host_client.py."""

from __future__ import annotations

import pytest

from conformance.testing import RunResult
from tests.suites.platform.matrix import (
    assert_mutant_trips_exactly,
    assert_reference_passes,
    run_matrix,
    suite_mutants,
)

MUTANTS = {m.name: m for m in suite_mutants("platform")}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    return run_matrix("platform", tmp_path_factory.mktemp("platform-matrix"))


def test_reference_passes_every_rule(matrix: dict[str, RunResult]) -> None:
    assert_reference_passes(matrix["reference"], "platform", unproven=frozenset({"RL-06"}))


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_fails_exactly_its_rules(matrix: dict[str, RunResult], name: str) -> None:
    assert_mutant_trips_exactly(matrix[name], MUTANTS[name])
