"""A rule's attack table in the report: each case a record (citation, expected, outcome, what the target did) with
the numbers of its own exchanges in the rule's evidence, and each of those exchanges naming its case."""

from __future__ import annotations

import pytest

from tests._checks_run import DEAD_TOOL_SERVER, run_checks

CHECK = """
from conformance import rule
from conformance.host import Redactor, record_exchange
from conformance.suites._cases import Attack, AttackRun, attack_table, cited

TABLE = attack_table(
    "AUTH-TOK-09",
    *cited("RFC 6750 §2.3", "query string", "form body"),
    Attack("cookie", "RFC 6750 §5.3", expected="not accepted"),
    Attack("header twice", "RFC 6750 §2.1"),
)
REDACTOR = Redactor()


def exchange(path, status):
    record_exchange(REDACTOR, method="GET", url="https://rs.test" + path, status=status)


@rule("AUTH-TOK-09")
def test_table():
    run = AttackRun.of("AUTH-TOK-09")
    exchange("/setup", 200)  # no case's: made before the first case began
    with run.attempt("query string"):
        exchange("/mcp?access_token=x", 401)
    exchange("/mcp (form)", 200)
    run.tried_case("form body", "accepted the token in a form body")
    run.not_tried("cookie", "the server sets no cookie")
    run.inapplicable("header twice", "one header only")
    run.conclude()
"""


def test_cases_are_records_with_their_own_exchanges(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_table=CHECK)
    report = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_table.py", how="forked").report
    (result,) = [r for r in report["results"] if r["rule"] == "AUTH-TOK-09"]
    assert result["status"] == "warning"  # a SHOULD rule whose form-body case the target got wrong
    cases = {c["case"]: c for c in result["cases"]}
    assert list(cases) == ["query string", "form body", "cookie", "header twice"]
    assert cases["query string"] == {
        "case": "query string",
        "source": "RFC 6750 §2.3",
        "expected": "refused",
        "outcome": "passed",
        "got": "as expected",
        "exchanges": [2],
    }
    assert cases["form body"]["outcome"] == "failed" and "form body" in cases["form body"]["got"]
    assert cases["cookie"]["outcome"] == "not tried" and cases["cookie"]["expected"] == "not accepted"
    assert cases["header twice"]["outcome"] == "not applicable" and cases["header twice"]["exchanges"] == []
    evidence = result["evidence"]
    assert "case" not in evidence[0]  # the set-up exchange belongs to no case
    assert evidence[cases["query string"]["exchanges"][0] - 1]["case"] == "query string"
    assert [evidence[n - 1]["url"] for n in cases["form body"]["exchanges"]] == ["https://rs.test/mcp (form)"]


CONCURRENT_CHECK = """
import threading

from conformance import fail, rule
from conformance.core._exceptions import TargetUnreachable
from conformance.host import Redactor, record_exchange
from conformance.suites._cases import AttackRun, Untried, attack_table, cited

CASES = ("first", "second", "third", "fourth")
TABLE = attack_table("AUTH-TOK-09", *cited("RFC 6750 §2.3", *CASES))
REDACTOR = Redactor()
DONE = {case: threading.Event() for case in CASES}


def exchange(path, status):
    record_exchange(REDACTOR, method="GET", url="https://rs.test" + path, status=status)


def send(case):
    later = CASES[CASES.index(case) + 1:]
    if later:
        assert DONE[later[0]].wait(10)  # each case ends after the next one: they finish in reverse order
    try:
        exchange("/" + case, 401)
        exchange("/" + case + "/again", 401)
        if case == "second":
            fail("second was accepted")
        if case == "third":
            raise TargetUnreachable("connection reset")
        if case == "fourth":
            return Untried("the store could not be read back")
        return None
    finally:
        DONE[case].set()


@rule("AUTH-TOK-09")
def test_table():
    run = AttackRun.of("AUTH-TOK-09")
    exchange("/setup", 200)
    run.each(CASES, send, limit=4)
    run.conclude()
"""


def test_cases_run_at_once_read_in_the_tables_order(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_table=CONCURRENT_CHECK)
    report = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_table.py", how="forked").report
    (result,) = [r for r in report["results"] if r["rule"] == "AUTH-TOK-09"]
    assert result["status"] == "warning"  # the second case failed (a SHOULD rule)
    cases = {c["case"]: c for c in result["cases"]}
    assert [cases[c]["outcome"] for c in ("first", "second", "third", "fourth")] == [
        "passed",
        "failed",
        "not tried",
        "not tried",
    ]
    assert "second was accepted" in cases["second"]["got"] and "connection reset" in cases["third"]["got"]
    assert "the store could not be read back" in cases["fourth"]["got"]
    evidence = result["evidence"]
    assert [e["url"].removeprefix("https://rs.test") for e in evidence] == [
        "/setup",
        *(path for case in ("first", "second", "third", "fourth") for path in (f"/{case}", f"/{case}/again")),
    ]
    for case in ("first", "second", "third", "fourth"):
        assert [evidence[n - 1]["case"] for n in cases[case]["exchanges"]] == [case, case]
