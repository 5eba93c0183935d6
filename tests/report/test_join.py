"""Reports of one run's targets, each certified by a process of its own, joined (conformance/report/join.py): the
report one process would have written, its verdict reached again, the HAR and JUnit files of the parts in one."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.report.join import JoinError, join_har, join_junit, join_reports
from conformance.report.json_writer import validate_report
from conformance.report.model import INCOMPLETE, NOT_ACCEPTED, CheckOutcome, RunReport, RunVerdict, Status

URLS = {
    "tool_server": "https://127.0.0.1:1/mcp",
    "platform": "https://127.0.0.1:2",
    "compression": "https://127.0.0.1:3",
}
RULES_BY_TARGET = {
    "tool_server": ("AUTH-PRM-01", "PROF-01"),
    "platform": ("TOK-01", "CAMP-01"),
    "compression": ("IMG-SHRINK-01",),
}


def _outcome(rule: str, status: Status = Status.PASSED) -> CheckOutcome:
    return CheckOutcome(f"test_{rule}", (rule,), status, "broken" if status is Status.FAILED else f"{rule} held")


def _report(*targets: str, failing: str | None = None, strict: bool = False, **run: object) -> RunReport:
    outcomes = [
        _outcome(rule, Status.FAILED if rule == failing else Status.PASSED)
        for target in targets
        for rule in RULES_BY_TARGET[target]
    ]
    return RunReport.build(
        outcomes,
        strict=strict,
        suites_run=[],
        implemented=[],
        targets={t: URLS[t] for t in targets},
        harness_version="t",
        **run,  # type: ignore[arg-type]
    )


def _pairs(report: RunReport) -> list[tuple[str, str]]:
    return [(r.rule, r.status.value) for r in report.results]


def test_the_joined_report_is_the_one_a_single_run_would_write() -> None:
    parts = [_report("compression"), _report("platform"), _report("tool_server")]
    joined = join_reports(parts)
    single = _report("tool_server", "platform", "compression")
    assert _pairs(joined) == _pairs(single)  # catalog order, whatever order the parts came in
    assert joined.targets == single.targets and joined.verdict == single.verdict
    assert joined.verdict.reason == "no MUST rule failed (5 rule(s) decided)"
    validate_report(joined.to_json())


def test_a_failure_in_one_part_fails_the_joined_run() -> None:
    joined = join_reports([_report("tool_server"), _report("platform", failing="TOK-01")])
    assert joined.verdict.status == NOT_ACCEPTED and "TOK-01" in joined.verdict.reason


def test_a_part_whose_verdict_its_results_do_not_explain_keeps_its_reason() -> None:
    """A part's run was interrupted (or another test of it failed): its results alone would be accepted, its
    verdict says otherwise, and so does the joined one."""
    interrupted = _report("platform", interrupted="interrupted (SIGTERM)")
    assert interrupted.verdict.status == INCOMPLETE
    joined = join_reports([_report("tool_server"), interrupted])
    assert joined.verdict.status == INCOMPLETE
    assert joined.verdict.reason.startswith("interrupted (SIGTERM): the run stopped before its end")
    other = _report("compression")
    other = RunReport(**{**vars(other), "verdict": RunVerdict(NOT_ACCEPTED, "1 other test(s) failed")})
    assert join_reports([_report("tool_server"), other]).verdict.status == NOT_ACCEPTED


@pytest.mark.parametrize(
    ("parts", "problem"),
    [
        ([], "no report to join"),
        ([_report("platform"), _report("platform")], "target 'platform' is in parts 1 and 2"),
        ([_report("platform"), _report("compression", strict=True)], "with and without --strict"),
    ],
    ids=["none", "same target twice", "strictness differs"],
)
def test_parts_not_of_one_run_are_refused(parts: list[RunReport], problem: str) -> None:
    with pytest.raises(JoinError, match=problem):
        join_reports(parts)


def _har(*starts: str) -> dict[str, Any]:
    entries = [{"startedDateTime": s, "request": {"url": f"https://x/{s}"}} for s in starts]
    return {"log": {"version": "1.2", "creator": {"name": "c"}, "entries": entries}}


def test_the_har_entries_of_the_parts_are_ordered_by_their_start(tmp_path: Path) -> None:
    a = _har("2026-01-01T00:00:01Z", "2026-01-01T00:00:03Z")
    b = _har("2026-01-01T00:00:02Z")
    join_har([a, b], tmp_path / "report.har")
    log = json.loads((tmp_path / "report.har").read_text())["log"]
    assert [e["startedDateTime"][-3:-1] for e in log["entries"]] == ["01", "02", "03"]
    assert log["version"] == "1.2"


def _junit(path: Path, *cases: tuple[str, str | None], time: str, stamp: str) -> Path:
    suite = ET.Element("testsuite", name="pytest", tests=str(len(cases)), errors="0", skipped="0", time=time)
    suite.set("failures", str(sum(1 for _, outcome in cases if outcome == "failure")))
    suite.set("timestamp", stamp)
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name=path.stem, value="1")
    for name, outcome in cases:
        case = ET.SubElement(suite, "testcase", name=name)
        if outcome:
            ET.SubElement(case, outcome, message="broken")
    root = ET.Element("testsuites")
    root.append(suite)
    path.write_bytes(ET.tostring(root, xml_declaration=True, encoding="utf-8"))
    return path


def test_the_junit_cases_of_the_parts_are_one_suite(tmp_path: Path) -> None:
    a = _junit(tmp_path / "a.xml", ("t1", None), ("t2", "failure"), time="4.5", stamp="2026-01-01T00:00:02")
    b = _junit(tmp_path / "b.xml", ("t3", None), time="6.25", stamp="2026-01-01T00:00:01")
    join_junit([a, b], tmp_path / "junit.xml")
    (suite,) = ET.parse(tmp_path / "junit.xml").getroot().findall("testsuite")
    assert [c.get("name") for c in suite.findall("testcase")] == ["t1", "t2", "t3"]
    assert (suite.get("tests"), suite.get("failures"), suite.get("time")) == ("3", "1", "6.250")
    assert suite.get("timestamp") == "2026-01-01T00:00:01"
    assert [p.get("name") for p in suite.iter("property")] == ["a", "b"]
