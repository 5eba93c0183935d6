"""`conformance summary`: the verdict, counts and failed rules per target, in Markdown, text and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli._main import main
from tests._checks_run import DEAD_TOOL_SERVER, run_checks
from tests.report.report_factory import HOSTILE_SCRIPT, build_report


@pytest.fixture
def report_file(tmp_path: Path) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(build_report()), encoding="utf-8")
    return path


def _summary(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["summary", *args]) == 0
    return capsys.readouterr().out


def test_json_summary_counts_match_the_report(report_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(report_file.read_text())
    data = json.loads(_summary(capsys, str(report_file), "--format", "json"))
    assert data["verdict"]["status"] == "NOT ACCEPTED"
    assert data["total"] == len(report["results"])
    for status, count in data["counts"].items():
        assert count == sum(r["status"] == status for r in report["results"])
    assert set(data["targets"]) == {r["target"] for r in report["results"]}
    tool = data["targets"]["tool_server"]
    listed = {item["rule"]: item for item in tool["attention"]}
    assert {"AUTH-ISS-01", "AUTH-CIMD-03"} <= set(listed)  # the failed MUST rules
    assert "AUTH-PRM-06" in listed and listed["AUTH-PRM-06"]["status"] == "warning"
    assert all(item["status"] != "passed" or item["baseline"] == "stale" for item in tool["attention"])
    assert data["targets"]["platform"]["attention"][0]["status"] in ("error", "failed")  # worst first


def test_markdown_summary_is_a_job_summary_with_inert_values(
    report_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _summary(capsys, str(report_file), "--format", "markdown")
    assert out.startswith("## ❌ Conformance: NOT ACCEPTED")
    assert "| target | passed | failed | warning | skipped | blocked | error |" in out
    assert "### tool\\_server:" in out and "AUTH-ISS-01" in out
    # CAMP-02's message carries a target's <script>: escaped, never live HTML in the job summary.
    assert HOSTILE_SCRIPT not in out and "&lt;script&gt;" in out
    for line in out.splitlines():
        if line.startswith("| ") and "AUTH" in line:
            assert line.count(" | ") == 3  # no cell broke the table


def test_text_summary_and_exit_code(report_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _summary(capsys, str(report_file))
    assert out.splitlines()[0].startswith("verdict: NOT ACCEPTED")
    assert "FAILED" in out and "AUTH-ISS-01" in out
    assert "STALE BASELINE" in out  # CAMP-15 is listed in the baseline but passes: a failure
    assert main(["summary", str(report_file), "--exit-code"]) == 1
    accepted: dict[str, Any] = json.loads(report_file.read_text())
    accepted["verdict"] = {"accepted": True, "status": "ACCEPTED", "exit_code": 0, "reason": "ok"}
    report_file.write_text(json.dumps(accepted))
    assert main(["summary", str(report_file), "--exit-code"]) == 0


def test_summary_runs_the_redactor_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.json is redacted at capture; the summary scrubs it once more with the secrets of its environment
    (and JWT-shaped strings), so a report written by an older or buggy writer cannot leak through a job summary."""
    secret = "pk-live-0123456789abcdef"
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
    report = build_report()
    failed = next(r for r in report["results"] if r["status"] == "failed")
    failed["message"] = f"key {secret} rejected; token {jwt}"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    monkeypatch.setenv("CONFORMANCE_PLATFORM_API_KEY", secret)
    for fmt in ("markdown", "text", "json"):
        out = _summary(capsys, str(path), "--format", fmt)
        assert secret not in out and jwt not in out
        assert "REDACTED" in out


@pytest.mark.parametrize("content", ["{not json", "[]", '{"results": 3}'])
def test_summary_of_something_else_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    path = tmp_path / "report.json"
    path.write_text(content)
    assert main(["summary", str(path)]) == 2
    assert capsys.readouterr().err.startswith("conformance: summary:")


def test_summary_of_a_real_run(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    """The report the plugin writes (not a synthetic one) summarizes: failed and errored rules listed, passes not."""
    pytester.makepyfile(
        test_checks="""
from conformance import fail, observe, rule

@rule("AUTH-PRM-01")
def test_passes():
    observe("fine")

@rule("AUTH-PRM-02")
def test_fails():
    fail("resource was http://evil <b>bold</b> | pipe")

@rule("AUTH-TOK-04")
def test_harness_bug():
    {}["missing"]
"""
    )
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_checks.py")
    assert result.ret == 1
    capsys.readouterr()  # the inner run's own output
    report = result.report_path
    data = json.loads(_summary(capsys, str(report), "--format", "json"))
    listed = {i["rule"]: i["status"] for i in data["targets"]["tool_server"]["attention"]}
    assert listed == {"AUTH-PRM-02": "failed", "AUTH-TOK-04": "error"}
    out = _summary(capsys, str(report), "--format", "markdown")
    assert "| AUTH-PRM-02 | MUST | failed | resource was http://evil &lt;b&gt;bold&lt;/b&gt; \\| pipe |" in out
