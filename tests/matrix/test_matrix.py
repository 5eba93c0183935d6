"""Every check proven both ways, from the mutant catalogue: the reference passes every rule of every suite, and
each mutant fails all its rules and nothing outside its rules and dependents (plan.py says how cases are made)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.reference.mutants import all_mutants
from conformance.rules import HARNESS_RULES
from conformance.testing import RunResult
from tests.matrix.conftest import Matrix
from tests.matrix.plan import Case, plan, unproven_rules

CASES = plan()
REFERENCES = [case for case in CASES if case.mutant is None]
MUTANTS = [case for case in CASES if case.mutant is not None]


def params(cases: list[Case]) -> list[Any]:
    return [pytest.param(case, id=case.id) for case in cases]  # the id is what tests/conftest.py schedules by


def describe(result: RunResult) -> str:
    lines = [
        f"{r['rule']}: {r['status']} {r.get('blocked_by') or ''} {r.get('message') or ''}"[:300]
        for r in result.report["results"]
    ]
    return "\n".join(lines) + f"\n--- output tail ---\n{result.stdout[-1500:]}"


@pytest.mark.parametrize("case", params(REFERENCES))
def test_reference_passes_every_rule(matrix: Matrix, case: Case) -> None:
    result = matrix.result(case)
    statuses = result.statuses()
    assert set(statuses) == case.rules, describe(result)
    # Rules about the harness itself are proven by the project's tests, not by a target: never passed here.
    not_passed = {rule for rule, status in statuses.items() if status != "passed"}
    assert not_passed == case.rules & set(HARNESS_RULES), describe(result)
    assert not result.with_status("failed", "warning", "error", "blocked"), describe(result)


@pytest.mark.parametrize("case", params(MUTANTS))
def test_mutant_fails_exactly_its_rules(matrix: Matrix, case: Case) -> None:
    assert case.mutant is not None
    mutant, result = case.mutant, matrix.result(case)
    assert not result.with_status("error"), describe(result)
    failed = result.failed_rules
    assert mutant.rules <= failed, f"{mutant.name} did not trip {sorted(mutant.rules - failed)}\n{describe(result)}"
    unexpected = failed - mutant.rules - mutant.dependents
    assert not unexpected, f"{mutant.name} also tripped {sorted(unexpected)}\n{describe(result)}"


def test_every_rule_has_a_mutant() -> None:
    assert unproven_rules(all_mutants().values()) == []


def test_every_mutant_of_the_catalogue_is_a_case() -> None:
    assert sorted(case.id for case in MUTANTS) == sorted(all_mutants())


COMPRESSION = [case for case in REFERENCES if case.target == "compression"]


@pytest.mark.parametrize("case", params(COMPRESSION))
def test_probes_outside_the_host_client_are_evidence(matrix: Matrix, case: Case) -> None:
    """Compression: the raw-socket plain-HTTP probe and boto3's read-back show up as exchanges, credentials
    redacted (on the reference run, which the matrix makes anyway)."""
    result = matrix.result(case)
    by_rule = {r["rule"]: r for r in result.report["results"]}
    clients = {rule: {e.get("client") for e in by_rule[rule]["evidence"]} for rule in ("IMG-TLS-01", "IMG-STO-01")}
    assert "raw socket" in clients["IMG-TLS-01"] and "boto3" in clients["IMG-STO-01"], clients
    plain = next(e for e in by_rule["IMG-TLS-01"]["evidence"] if e.get("client") == "raw socket")
    assert plain["url"].startswith("http://") and plain["method"] == "POST"
    assert {k.lower(): v for k, v in plain["request_headers"].items()}["authorization"] == "Basic [REDACTED]"
    stored = next(e for e in by_rule["IMG-STO-01"]["evidence"] if e.get("client") == "boto3")
    assert stored["status"] == 200 and "image/jpeg" in (stored["response_body"] or "")
