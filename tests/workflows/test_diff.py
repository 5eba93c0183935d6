"""`conformance diff` and the HTML report's --compare: regressions, fixes, new and removed rules per target."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conformance.cli._main import main
from conformance.report.diff import classify
from conformance.report.html import render_html
from conformance.report.model import RuleResult, RunReport, RunVerdict, Status
from tests._checks_run import DEAD_TOOL_SERVER, run_checks
from tests.report.report_factory import build_report


def _set(report: dict[str, Any], rule: str, status: str, message: str = "") -> None:
    for result in report["results"]:
        if result["rule"] == rule:
            result["status"], result["message"] = status, message
            return
    raise AssertionError(rule)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, dict[str, Any], dict[str, Any]]:
    old = build_report()
    new = copy.deepcopy(old)
    _set(new, "AUTH-PRM-01", "failed", "PRM now served as text/html")  # passed → failed
    _set(new, "AUTH-ISS-01", "passed")  # failed → passed
    _set(new, "TOK-06", "passed")  # warning → passed: a fix too
    _set(new, "CAMP-01", "skipped")  # passed → skipped: a change, not a regression
    removed = next(
        r
        for r in old["results"]
        if r["suite"] == "compression" and r["status"] == "passed" and r["rule"] != "IMG-AUTH-01"
    )
    new["results"] = [r for r in new["results"] if r["rule"] != removed["rule"]]
    old["results"] = [r for r in old["results"] if r["rule"] != "IMG-AUTH-01"]  # "new" in the later run
    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(json.dumps(old))
    new_path.write_text(json.dumps(new))
    return old_path, new_path, old, new


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ("passed", "failed", "regression"),
        ("skipped", "error", "regression"),
        ("passed", "warning", "regression"),
        ("failed", "passed", "fix"),
        ("warning", "passed", "fix"),
        ("passed", "skipped", "changed"),
        ("failed", "error", "changed"),
        ("warning", "failed", "regression"),
        ("passed", "passed", None),
        (None, "failed", "new"),
        ("passed", None, "removed"),
    ],
)
def test_classify(old: str | None, new: str | None, kind: str | None) -> None:
    assert classify(old, new) == kind


def test_json_diff_lists_each_change_per_target(
    pair: tuple[Path, Path, dict[str, Any], dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    old_path, new_path, _, _ = pair
    assert main(["diff", str(old_path), str(new_path), "--format", "json"]) == 1  # a regression: non-zero
    data = json.loads(capsys.readouterr().out)
    tool, platform, compression = (data["targets"][t] for t in ("tool_server", "platform", "compression"))
    assert [e["rule"] for e in tool["regression"]] == ["AUTH-PRM-01"]
    assert tool["regression"][0]["message"] == "PRM now served as text/html"
    assert [e["rule"] for e in tool["fix"]] == ["AUTH-ISS-01"]
    assert [e["rule"] for e in platform["fix"]] == ["TOK-06"]
    assert [(e["rule"], e["old"], e["new"]) for e in platform["changed"]] == [("CAMP-01", "passed", "skipped")]
    assert [e["rule"] for e in compression["new"]] == ["IMG-AUTH-01"]
    assert len(compression["removed"]) == 1 and compression["removed"][0]["new"] is None
    assert data["counts"] == {"regression": 1, "fix": 2, "changed": 1, "new": 1, "removed": 1}


def test_no_regression_exits_zero_and_same_report_has_no_change(
    pair: tuple[Path, Path, dict[str, Any], dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    old_path, new_path, _, _ = pair
    assert main(["diff", str(old_path), str(old_path)]) == 0
    assert "no result changed" in capsys.readouterr().out
    # Reversed, the fixes are regressions: PRM-01 is a fix, ISS-01 and TOK-06 regress.
    assert main(["diff", str(new_path), str(old_path), "--format", "markdown"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("## ❌ Conformance changes: 2 regression(s), 1 fix(es)")
    assert "| regression | AUTH-ISS-01 | MUST | passed → failed |" in out


def test_console_diff_shows_a_targets_words_as_text(
    pair: tuple[Path, Path, dict[str, Any], dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    old_path, new_path, _, new = pair
    _set(new, "AUTH-PRM-01", "failed", "[bold]not markup[/bold] [link=https://evil]x[/link]")
    new_path.write_text(json.dumps(new))
    assert main(["diff", str(old_path), str(new_path)]) == 1
    out = capsys.readouterr().out
    assert "[bold]not markup[/bold]" in out and "regression" in out and "AUTH-PRM-01" in out


def test_diff_of_a_non_report_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(build_report()))
    (tmp_path / "bad.json").write_text("[]")
    assert main(["diff", str(good), str(tmp_path / "bad.json")]) == 2
    assert "not a conformance report" in capsys.readouterr().err


def test_html_compare_marks_the_changed_rules(pair: tuple[Path, Path, dict[str, Any], dict[str, Any]]) -> None:
    _, _, old, new = pair
    plain = render_html(RunReport.from_json(new))
    html = render_html(RunReport.from_json(new), compare=RunReport.from_json(old))
    assert "Changes since the compared run" not in plain and 'class="chg' not in plain
    assert "Changes since the compared run" in html
    assert re.search(r'<article class="rule st-failed" id="AUTH-PRM-01" [^>]*data-change="regression"', html)
    assert '<span class="chg chg-regression" title="since the compared run">regression: was passed</span>' in html
    assert '<span class="chg chg-fix" title="since the compared run">fix: was failed</span>' in html
    assert '<span class="chg chg-changed" title="since the compared run">changed: was passed</span>' in html
    assert '<span class="chg chg-removed">removed</span>' in html
    assert html.count('class="chg chg-') == 2 * 5 + 1 + 5  # a chip per change (list + rule), removed, counts


def test_report_command_takes_compare(
    pair: tuple[Path, Path, dict[str, Any], dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old_path, new_path, _, _ = pair
    out = tmp_path / "out.html"
    assert main(["report", str(new_path), "-o", str(out), "--compare", str(old_path)]) == 0
    assert 'data-change="regression"' in out.read_text()
    assert main(["report", str(new_path), "-o", str(out), "--compare", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_live_run_takes_compare_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
from conformance import fail, observe, rule

@rule("AUTH-PRM-01")
def test_prm():
    fail("served as text/html")

@rule("AUTH-PRM-02")
def test_prm2():
    observe("fine")
"""
    )
    results = (RuleResult.for_rule("AUTH-PRM-01", Status.PASSED), RuleResult.for_rule("AUTH-PRM-02", Status.FAILED))
    old = RunReport(RunVerdict("NOT ACCEPTED", "1 rule(s) failed: AUTH-PRM-02"), results)
    (pytester.path / "old.json").write_text(json.dumps(old.to_json()))
    args = ("--target-url", DEAD_TOOL_SERVER)
    result = run_checks(pytester, *args, "--compare-report", "old.json", "test_checks.py")
    assert result.ret == 1
    html = (result.report_dir / "report.html").read_text()
    assert "regression: was passed" in html and "fix: was failed" in html
    bad = run_checks(pytester, *args, "--compare-report", "nope.json", "test_checks.py")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "cannot read nope.json" in bad.stderr.str()
