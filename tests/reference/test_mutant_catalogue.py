"""The mutant catalogues are data (``reference/<service>/mutants.toml``): the loader (``all_mutants``) refuses a
duplicate name and a malformed row, and every rule a row names exists in the rule catalogue."""

from __future__ import annotations

import pytest

from conformance.core.rules import RULES
from conformance.reference.mutants import (
    SERVICE_PACKAGES,
    CatalogueError,
    Mutant,
    all_mutants,
    gather,
    load_catalogue,
    parse_catalogue,
    rule_groups,
)


def parse(text: str) -> list[Mutant]:
    return parse_catalogue("idp", text)


def test_every_catalogued_rule_and_group_member_is_a_rule_of_the_catalogue() -> None:
    named = {r for m in all_mutants().values() for r in m.rules | m.dependents}
    assert named and named <= set(RULES), sorted(named - set(RULES))
    assert {r for group in rule_groups().values() for r in group} <= set(RULES)


def test_each_service_loads_its_rows_in_file_order() -> None:
    loaded = {service: load_catalogue(service) for service in SERVICE_PACKAGES}
    assert all(loaded.values()) and {m.service for ms in loaded.values() for m in ms} == set(SERVICE_PACKAGES)
    assert sum(map(len, loaded.values())) == len(all_mutants())
    assert loaded["compression"][0].name == "auth_any_key"


def test_a_row_with_a_group_expands_it_and_keeps_its_own_rules_out_of_the_dependents() -> None:
    (row,) = parse(
        '[mutant.m]\nrules = ["AUTH-ISS-01"]\ndescription = "d"\ndependents = ["@after-flow", "AUTH-ASM-02"]\n'
    )
    assert row == Mutant(
        "m", "idp", frozenset({"AUTH-ISS-01"}), "d", rule_groups()["after-flow"] - {"AUTH-ISS-01"} | {"AUTH-ASM-02"}
    )


def test_a_name_defined_twice_in_a_file_is_refused() -> None:
    row = '[mutant.m]\nrules = ["TOK-01"]\ndescription = "d"\n'
    assert len(parse(row)) == 1
    with pytest.raises(CatalogueError, match=r"mutants.toml: Cannot declare .*'m'.* twice"):
        parse(row + row)


def test_a_name_used_by_two_services_is_refused() -> None:
    row = Mutant("same", "idp", frozenset({"TOK-01"}), "d")
    with pytest.raises(CatalogueError, match="duplicate mutant name 'same'"):
        gather([[row], [Mutant("same", "platform", frozenset({"TOK-02"}), "d")]])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[mutant.m]\nrules = []\ndescription = "d"\n', "at least one rule"),
        ('[mutant.m]\nrules = ["TOK-1"]\ndescription = "d"\n', "'TOK-1' is not a rule ID"),
        ('[mutant.m]\nrules = "TOK-01"\ndescription = "d"\n', "a list of rule IDs"),
        ('[mutant.m]\nrules = ["@after-flow"]\ndescription = "d"\n', "not a rule ID"),
        ('[mutant.m]\nrules = ["TOK-01"]\n', "expected rules, description"),
        ('[mutant.m]\nrules = ["TOK-01"]\ndescription = " "\n', "non-empty"),
        ('[mutant.m]\nrules = ["TOK-01"]\ndescription = "d"\ndependent = ["TOK-02"]\n', "expected rules"),
        ('[mutant.m]\nrules = ["TOK-01"]\ndescription = "d"\ndependents = ["@nope"]\n', "unknown rule group '@nope'"),
        ('[mutants.m]\nrules = ["TOK-01"]\ndescription = "d"\n', "only \\[mutant.NAME\\] tables"),
    ],
)
def test_a_malformed_row_is_refused_naming_it(text: str, says: str) -> None:
    with pytest.raises(CatalogueError, match=says):
        parse(text)
