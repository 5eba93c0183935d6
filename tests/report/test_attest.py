"""``conformance attest``: an in-toto Statement v1 whose subject is report.json by digest and whose predicate is the
test-result predicate v0.1 (result, configuration, passed/warned/failed rules)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conformance.cli._main import main
from conformance.report.attest import PREDICATE_TYPE, STATEMENT_TYPE, ci_run_url
from conformance.report.model import CheckOutcome, RunReport, Status


def _report(tmp_path: Path, *statuses: tuple[str, Status]) -> Path:
    outcomes = [CheckOutcome(f"t::{rule}", (rule,), status, "") for rule, status in statuses]
    report = RunReport.build(outcomes, strict=False, suites_run=["platform"], implemented=(), targets={})
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.to_json()), encoding="utf-8")
    return path


def test_the_statement_names_report_json_by_its_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _report(tmp_path, ("TOK-01", Status.PASSED), ("TOK-02", Status.FAILED), ("TOK-05", Status.WARNING))
    assert main(["attest", str(path), "--url", "https://ci.example/run/7"]) == 0
    statement = json.loads(capsys.readouterr().out)
    assert statement["_type"] == STATEMENT_TYPE and statement["predicateType"] == PREDICATE_TYPE
    (subject,) = statement["subject"]
    assert subject["name"] == "report.json"
    assert subject["digest"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()  # it verifies
    predicate = statement["predicate"]
    assert predicate["result"] == "FAILED" and predicate["url"] == "https://ci.example/run/7"
    assert predicate["passedTests"] == ["platform:TOK-01"]
    assert predicate["failedTests"] == ["platform:TOK-02"] and predicate["warnedTests"] == ["platform:TOK-05"]
    assert predicate["configuration"][0]["annotations"]["verdict"] == "NOT ACCEPTED"
    path.write_text(path.read_text(encoding="utf-8") + " ", encoding="utf-8")  # a changed report no longer matches
    assert subject["digest"]["sha256"] != hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_accepted_run_passes_or_warns_and_the_predicate_stands_alone(tmp_path: Path) -> None:
    out = tmp_path / "predicate.json"
    path = _report(tmp_path, ("TOK-01", Status.PASSED), ("TOK-05", Status.WARNING))
    assert main(["attest", str(path), "--predicate-only", "-o", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["result"] == "WARNED"
    path = _report(tmp_path, ("TOK-01", Status.PASSED))
    assert main(["attest", str(path), "--predicate-only", "-o", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["result"] == "PASSED"


def test_the_ci_run_is_found_in_the_environment() -> None:
    env = {"GITHUB_RUN_ID": "42", "GITHUB_REPOSITORY": "acme/tools", "GITHUB_SERVER_URL": "https://github.com"}
    assert ci_run_url(env) == "https://github.com/acme/tools/actions/runs/42"
    assert ci_run_url({"CI_JOB_URL": "https://gitlab.example/j/1"}) == "https://gitlab.example/j/1"
    assert ci_run_url({}) is None
