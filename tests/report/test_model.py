"""The result model keeps every exchange of the run and bounds the bytes of their details (report.json)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core.rules import RULES
from conformance.report.model import REPORT_BODY_BYTES, CheckOutcome, RunReport, Status, _body_bytes, within_budget


def _exchange(n: int, body: str = "{}", **extra: Any) -> dict[str, Any]:
    return {
        "method": "POST",
        "url": f"https://t.example/mcp?n={n}",
        "request_headers": {"authorization": "Bearer [REDACTED]", "x-trace": "t" * 40},
        "request_body": body,
        "status": 200,
        "response_headers": {"content-type": "application/json", "x-huge": "h" * 2048 + "… [98000 more characters]"},
        "response_body": body,
        "elapsed_s": 0.01,
        **extra,
    }


def _build(outcomes: list[CheckOutcome]) -> RunReport:
    return RunReport.build(outcomes, strict=False, suites_run=(), implemented=(), targets={})


def test_every_exchange_of_a_rule_is_kept_with_its_cases_numbers() -> None:
    evidence = tuple(
        _exchange(n, case="late case" if n == 150 else "first case" if n == 1 else None) for n in range(1, 151)
    )
    cases = [
        {"rule": "AUTH-TOK-06", "case": name, "source": "RFC 8707 §2", "expected": "refused", "outcome": "failed"}
        | {"got": "accepted"}
        for name in ("first case", "late case")
    ]
    outcome = CheckOutcome("t::a", ("AUTH-TOK-06",), Status.FAILED, "x", evidence=evidence, cases=tuple(cases))
    (result,) = _build([outcome]).results
    assert len(result.evidence) == 150 and result.evidence_dropped == 0
    assert [c["exchanges"] for c in result.cases] == [[1], [150]]
    data = result.to_json()
    assert "evidence_dropped" not in data  # a key of older reports only
    assert not any("omitted" in e for e in data["evidence"])


def test_past_the_budget_the_least_severe_results_keep_metadata_only() -> None:
    body = "b" * 5000
    failed = CheckOutcome(
        "t::f", ("AUTH-TOK-06",), Status.FAILED, "x", evidence=tuple(_exchange(n, body) for n in range(5))
    )
    passed = CheckOutcome("t::p", ("AUTH-PRM-01",), Status.PASSED, evidence=tuple(_exchange(n, body) for n in range(5)))
    results = _build([passed, failed]).results  # the catalogue's order: AUTH-PRM-01 first
    spent = within_budget(results, budget=65_000)
    by_rule = {r.rule: r for r in spent}
    assert not any("omitted" in e for e in by_rule["AUTH-TOK-06"].evidence)  # the failure first, whole
    kept = by_rule["AUTH-PRM-01"].evidence
    assert len(kept) == 5 and "omitted" in kept[-1] and kept[-1]["omitted"]["response_body"]["chars"] == 5000
    assert kept[-1]["response_headers"] == {"content-type": "application/json"}
    assert within_budget(spent, budget=65_000) == spent  # what is omitted costs nothing again


def test_a_hostile_run_keeps_every_exchange_and_its_bodies_within_the_budget() -> None:
    """Every rule with 10 exchanges, each with 2 KB bodies both ways and a cut 100 KB header: every exchange is in
    report.json, their bodies within the budget, so that the file grows by an exchange's metadata past it."""
    body = "<\u202e" * 1024 + "… [99999 more characters]"
    rules = list(RULES)[:124]
    outcomes = [
        CheckOutcome(f"t::{rule}", (rule,), Status.FAILED, "x", evidence=tuple(_exchange(n, body) for n in range(10)))
        for rule in rules
    ]
    report = _build(outcomes)
    count = sum(len(r.evidence) for r in report.results)
    assert count == 10 * len(rules)
    whole = [e for r in report.results for e in r.evidence if "omitted" not in e]
    body_bytes = len(json.dumps([body, body], ensure_ascii=False).encode())
    assert 0 < len(whole) * body_bytes <= REPORT_BODY_BYTES < count * body_bytes
    text = json.dumps(report.to_json(), indent=2, ensure_ascii=False)
    assert len(text.encode()) < REPORT_BODY_BYTES + 3_000 * count  # headers cut per exchange, and metadata


@settings(max_examples=200, deadline=None, database=None)
@given(
    request=st.one_of(st.none(), st.text(), st.dictionaries(st.text(max_size=5), st.integers())),
    response=st.one_of(st.none(), st.text(), st.sampled_from(['é \ud800 " \\\\ \x00', "x" * 3000])),
)
def test_the_weight_of_bodies_is_their_json_in_report_json(request: Any, response: Any) -> None:
    bodies = [request, response]
    weight = _body_bytes({"request_body": request, "response_body": response})
    text = json.dumps(bodies, ensure_ascii=False)
    assert weight == (0 if bodies == [None, None] else len(text.encode("utf-8", "surrogatepass")))
