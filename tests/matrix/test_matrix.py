"""Every check proven both ways, from the mutant catalogue: the reference passes every rule of every suite, and
each mutant fails all its rules and nothing outside its rules and dependents (plan.py says how cases are made).

The reference's half is proven on the report of the `conformance demo` run the session makes anyway
(tests/matrix/test_reference.py: test_reference_passes_every_rule, test_probes_outside_the_host_client_are_evidence).
The stack of each IdP or proxy mutant also shows that the mutant differs from the reference IdP in exactly its
defect (test_mutant_differs_in_exactly_its_defect)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.reference.mutants import all_mutants
from conformance.testing import RunResult
from tests.matrix.conftest import Matrix
from tests.matrix.plan import Case, plan, unproven_rules
from tests.reference.auth_probe import FOOTPRINT, REFERENCE, changed_probes, observes

CASES = plan()
MUTANTS = [case for case in CASES if case.mutant is not None]
AUTH_PROBED = [case for case in MUTANTS if observes(case)]


def params(cases: list[Case]) -> list[Any]:
    return [pytest.param(case, id=case.id) for case in cases]  # the id is what tests/conftest.py schedules by


def describe(result: RunResult, logs: str = "") -> str:
    lines = [
        f"{r['rule']}: {r['status']} {r.get('blocked_by') or ''} {r.get('message') or ''}"[:300]
        for r in result.report["results"]
    ]
    return "\n".join(lines) + f"\n--- output tail ---\n{result.stdout[-1500:]}" + (f"\n{logs}" if logs else "")


@pytest.mark.parametrize("case", params(MUTANTS))
def test_mutant_fails_exactly_its_rules(matrix: Matrix, case: Case) -> None:
    assert case.mutant is not None
    mutant, result = case.mutant, matrix.result(case)
    explained = describe(result, matrix.service_logs(case))
    assert not result.with_status("error"), explained
    failed = result.failed_rules
    assert mutant.rules <= failed, f"{mutant.name} did not trip {sorted(mutant.rules - failed)}\n{explained}"
    unexpected = failed - mutant.rules - mutant.dependents
    assert not unexpected, f"{mutant.name} also tripped {sorted(unexpected)}\n{explained}"


def test_every_rule_has_a_mutant() -> None:
    assert unproven_rules(all_mutants().values()) == []


def test_every_mutant_of_the_catalogue_is_a_case() -> None:
    assert sorted(case.id for case in MUTANTS) == sorted(all_mutants())


@pytest.mark.parametrize("case", params(AUTH_PROBED))
def test_mutant_differs_in_exactly_its_defect(matrix: Matrix, case: Case) -> None:
    """An IdP or proxy mutant, observed by tests/reference/auth_probe.observe() on the stack its case's harness run
    uses (conftest.run_case), differs from the reference IdP (REFERENCE, which test_reference_idp_behaves proves on
    a reference stack) in exactly the probes of its FOOTPRINT. Same test id as its case: same xdist group."""
    observed = matrix.observation(case)
    changed = changed_probes(observed)
    footprint = FOOTPRINT[case.id]
    assert changed == footprint, {p: (REFERENCE.get(p), observed.get(p)) for p in changed | footprint}
