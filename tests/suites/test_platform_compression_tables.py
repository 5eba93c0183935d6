"""The platform and compression negative rules iterate cited attack tables rather than one probe, and
`conformance rules --json` counts their cases. Each table's mutant (passes a single probe, fails the table)
is proven by the matrix (tests/matrix); this pins the tables' breadth and citations."""

from __future__ import annotations

from conformance.suites._cases import ATTACK_TABLES
from conformance.suites._checks import catalog_rows

EXPECTED = {
    "CAMP-06": 7,
    "CAMP-09": 5,  # the budget updates; PATCH and PUT are reported, not judged
    "CAMP-10": 8,
    "CAMP-11": 10,
    "CAMP-13": 5,  # other intended_use values and one audience on both sides are reported, not judged
    "CAMP-14": 3,
    "IMG-AUTH-01": 24,  # eight kinds of bad credentials on each of the three endpoints
    "IMG-RSZ-01": 5,
    "IMG-RSZ-02": 4,  # fit, cover and thumb: every way of giving fewer than both dimensions
    "IMG-RSZ-03": 4,
    "IMG-RSZ-04": 4,
    "IMG-TLS-01": 3,
}


def test_each_rule_counts_its_cases_and_cites_the_documents() -> None:
    rows = {row["id"]: row for row in catalog_rows()}
    assert {rule: rows[rule]["cases"] for rule in EXPECTED} == EXPECTED
    for rule in EXPECTED:
        table = ATTACK_TABLES[rule]
        assert any(attack.named for attack in table), rule  # the rule's own case cannot go untried unnoticed
        assert all(rule in attack.source or "contract" in attack.source for attack in table), rule
