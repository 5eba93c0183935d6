"""The matrix's generator: a catalogue entry alone makes a case, on the right target, with the right suites."""

from __future__ import annotations

import pytest

from conformance.reference.mutants import Mutant
from tests.conftest import xdist_scope
from tests.matrix.plan import GROUP_SIZE, PlanError, build, plan, unproven_rules


def mutant(name: str, service: str, *rules: str, dependents: frozenset[str] = frozenset()) -> Mutant:
    return Mutant(name, service, frozenset(rules), "a test entry", dependents)


def test_a_new_catalogue_entry_becomes_a_case_of_its_target() -> None:
    cases = build([mutant("ts-new", "toolserver", "AUTH-TOK-05"), mutant("img-new", "compression", "IMG-ERR-01")])
    assert [(c.id, c.target, c.suites, c.group) for c in cases] == [
        ("reference-compression", "compression", ("compression",), "matrix-reference-compression"),
        ("reference-tool_server", "tool_server", ("auth", "profile"), "matrix-reference-tool_server"),
        ("img-new", "compression", ("compression",), "matrix-compression"),
        ("ts-new", "tool_server", ("auth",), "matrix-toolserver"),
    ]
    # The reference runs every suite of its target; a mutant the suites of its rules and dependents.
    assert {"AUTH-TOK-05", "PROF-01"} <= cases[1].rules and "IMG-ERR-01" not in cases[1].rules
    assert "AUTH-TOK-05" in cases[3].rules and "PROF-01" not in cases[3].rules


def test_a_large_service_is_shared_out_in_groups() -> None:
    cases = build([mutant(f"ts-{i:02d}", "toolserver", "AUTH-TOK-05") for i in range(GROUP_SIZE + 1)])
    groups = [c.group for c in cases if c.mutant]
    first, second = groups.count("matrix-toolserver-1"), groups.count("matrix-toolserver-2")
    assert first + second == len(groups) and abs(first - second) <= 1 and groups == sorted(groups)


def test_a_mutant_runs_the_suites_of_its_rules_and_dependents() -> None:
    (reference, _, camp, both, profile) = build(
        [
            mutant("a-camp", "platform", "CAMP-03"),
            mutant("b-both", "platform", "TOK-01", dependents=frozenset({"CAMP-03"})),
            mutant("c-prof", "toolserver", "PROF-01"),
        ]
    )
    assert reference.mutant is None and reference.suites == ("platform", "campaigns")
    assert camp.suites == ("campaigns",) and "CAMP-03" in camp.rules and "TOK-01" not in camp.rules
    assert both.suites == ("platform", "campaigns") and {"TOK-01", "CAMP-03"} <= both.rules
    assert profile.suites == ("profile",)


def test_every_case_decides_every_rule_its_mutant_names() -> None:
    """What test_matrix asserts of a mutant (its rules failed, nothing outside rules | dependents) is decided by
    the run only for the rules of the suites it runs: those must hold every rule the mutant names."""
    for case in plan():
        assert case.mutant is None or case.mutant.rules | case.mutant.dependents <= case.rules, case.id


@pytest.mark.parametrize(
    "entry",
    [
        mutant("two-targets", "toolserver", "AUTH-TOK-05", "IMG-ERR-01"),
        mutant("no-rules", "idp"),
        mutant("typo", "idp", "AUTH-FLOW-99"),
        mutant("typo-dependent", "idp", "AUTH-FLOW-01", dependents=frozenset({"AUTH-FLOW-99"})),
    ],
    ids=lambda m: m.name,
)
def test_an_entry_the_matrix_cannot_place_is_refused(entry: Mutant) -> None:
    with pytest.raises(PlanError, match=entry.name):
        build([entry])


def test_a_rule_without_a_mutant_is_named() -> None:
    assert "IMG-ERR-01" in unproven_rules([mutant("only-one", "compression", "IMG-TLS-01")])
    assert "RL-06" not in unproven_rules([])  # a rule about the harness itself has no mutant by design


def test_xdist_shares_out_the_matrix_by_group_and_the_rest_by_module() -> None:
    groups = {"idp-code-reuse": "matrix-idp-1", "reference-tool_server": "matrix-reference-tool_server"}
    matrix = "tests/matrix/test_matrix.py"
    assert xdist_scope(f"{matrix}::test_mutant_fails_exactly_its_rules[idp-code-reuse]", groups) == "matrix-idp-1"
    assert xdist_scope(f"{matrix}::test_every_rule_has_a_mutant", groups) == matrix
    assert xdist_scope("tests/host/test_mcp.py::test_x[idp-code-reuse]", groups) == "tests/host/test_mcp.py"
