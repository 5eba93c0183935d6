"""AUTH-TOOL-03/04, PROF-11 and AUTH-FLOW-06 iterate cited attack tables.

The reference mutants prove each table catches what a single probe misses (tests/matrix: the mutants
``ts-empty-query-token-as-user``, ``ts-profile-guest-on-expired``, ``idp-code-consume-race``); here, the tables'
shape and how an empty-credential case is judged over every tool: data back fails the case, a case whose every call
failed in transport is not tried, never failed.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from conformance.core._exceptions import TargetUnreachable
from conformance.host.mcp import RawResult
from conformance.suites._cases import Attack, AttackRun, cited, unreached_text
from conformance.suites._checks import catalog_rows
from conformance.suites._credentials import absent_credentials
from conformance.suites._era_cases import ROUTED_NAME
from conformance.suites._tool_access import CallOutcome
from conformance.suites.auth import test_flow, test_tools
from conformance.suites.profile import test_result
from conformance.verdict._verdicts import Failure

NEW_TABLES = {"AUTH-TOOL-03": 6, "AUTH-TOOL-04": 5, "PROF-11": 8, "AUTH-FLOW-06": 5}


def test_each_rule_counts_its_cited_cases() -> None:
    rows = {row["id"]: row for row in catalog_rows()}
    tables = {
        "AUTH-TOOL-03": test_tools.TOOL03,
        "AUTH-TOOL-04": test_tools.TOOL04,
        "PROF-11": test_result.PROF11,
        "AUTH-FLOW-06": test_flow.FLOW06,
    }
    for rule_id, count in NEW_TABLES.items():
        assert rows[rule_id]["cases"] == count == len(tables[rule_id])
        assert all("RFC" in a.source or "contract" in a.source for a in tables[rule_id])
    # Every empty-credential placement the fixture sends is a case of both anonymous tables, and nothing else is but
    # AUTH-TOOL-03's routing case (the modern MCP era's Mcp-Name header naming another tool).
    empty = {"no Authorization header", *test_tools.EMPTY_CREDENTIALS}
    assert {a.case for a in test_tools.TOOL03} == {*empty, ROUTED_NAME}
    assert {a.case for a in test_tools.TOOL04} == empty


def _outcome(result: dict[str, Any] | None, status: int = 200) -> CallOutcome:
    message = {"jsonrpc": "2.0", "id": 1, "result": result} if result is not None else None
    return CallOutcome(RawResult(status, httpx.Headers(), message, [], None, "call", None, "", b""))


DATA = {"content": [{"type": "text", "text": "orders"}], "isError": False}
AUTH_ERROR = {"content": [{"type": "text", "text": "sign in"}], "isError": True}


def _run(outcomes: dict[str, dict[str, CallOutcome | str]]) -> AttackRun:
    run = AttackRun.of("AUTH-TOOL-03")
    run.tried_case("no Authorization header")
    test_tools._judge_empty_credentials(run, outcomes, {"list_orders": "declared oauth2 only"})
    return run


def test_data_back_on_one_placement_fails_naming_it() -> None:
    outcomes: dict[str, dict[str, CallOutcome | str]] = {
        case: {"list_orders": _outcome(AUTH_ERROR)} for case in test_tools.EMPTY_CREDENTIALS
    }
    outcomes["an empty access_token query parameter"]["list_orders"] = _outcome(DATA)
    run = _run(outcomes)
    with pytest.raises(Failure, match=r"an empty access_token query parameter: 'list_orders'.*\[.*RFC 6750 §2.3"):
        run.conclude()


def test_a_placement_lost_in_transport_is_not_tried() -> None:
    lost = unreached_text(TargetUnreachable("connection reset by peer"))
    outcomes: dict[str, dict[str, CallOutcome | str]] = {
        case: {"list_orders": _outcome(AUTH_ERROR)} for case in test_tools.EMPTY_CREDENTIALS
    }
    outcomes["a Basic header"]["list_orders"] = lost
    run = _run(outcomes)
    assert "a Basic header" in run.untried and not run.problems
    assert len(run.tried) == 4


def test_one_family_feeds_both_rules() -> None:
    """The empty-credentials family has one home; each rule's rows are the family's, under its own prefix."""
    family = {c.case: c for c in absent_credentials()}
    for rule_prefix, table in (
        (test_tools.A_AUTH_6, tuple(a for a in test_tools.TOOL03 if a.case != ROUTED_NAME)),
        (test_result.PROF11_CONTRACT, test_result.PROF11[: len(test_result.PROF11_EMPTY)]),
    ):
        for attack in table:
            assert attack.source.startswith(f"{rule_prefix}; {family[attack.case].cites}")
            assert attack.named == family[attack.case].named
    assert {c.case: c.send for c in absent_credentials() if c.send} == test_tools.EMPTY_CREDENTIALS
    assert test_result.PROF11_EMPTY[0].headers is None  # "no Authorization header" sends none
    assert test_tools.TOOL03[3].source.endswith("; RFC 7617")  # AUTH-TOOL-03's own further source is kept


def test_cited_writes_one_source_for_each_case() -> None:
    rows = cited("RFC X §1", "a", "b", named=True)
    assert rows == (Attack("a", "RFC X §1", named=True), Attack("b", "RFC X §1", named=True))
    assert cited("RFC Y") == ()
