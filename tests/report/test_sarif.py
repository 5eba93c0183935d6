"""report.sarif: valid SARIF 2.1.0 (the standard's JSON Schema), one result per failed or warned rule result, the
rule's catalog words and citation, the target as the location; written when asked for, by a run or by
``conformance report --sarif``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.cli._main import main
from conformance.core.rules import RULES
from conformance.report.model import RunReport
from conformance.report.sarif import to_sarif, write_sarif
from tests.report.report_factory import build_report


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    from tests.thirdparty.install import sarif_schema

    schema = json.loads(sarif_schema().read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _full_run() -> tuple[dict[str, Any], RunReport]:
    data = build_report()
    return data, RunReport.from_json(data)


def test_a_full_run_is_valid_sarif_with_one_result_per_problem(sarif_validator: Any) -> None:
    data, report = _full_run()
    log = json.loads(json.dumps(to_sarif(report)))  # what a reader gets from the file
    errors = sorted(sarif_validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert errors == [], [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    (run,) = log["runs"]
    problems = [r for r in data["results"] if r["status"] in ("failed", "warning", "error")]
    assert problems, "the synthetic run has failed and warned rules"
    assert len(run["results"]) == len(problems)
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {p["rule"] for p in problems}
    for result in run["results"]:
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"]
        assert rule["fullDescription"]["text"] == RULES[result["ruleId"]].text
        assert RULES[result["ruleId"]].source in rule["help"]["text"]
        (location,) = result["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"].startswith("https://127.0.0.1:")
    levels = {(r["ruleId"], r["level"]) for r in run["results"]}
    failed_must = next(p["rule"] for p in problems if p["status"] == "failed" and p["level"] == "MUST")
    assert (failed_must, "error") in levels
    assert run["invocations"][0]["executionSuccessful"] is False


def test_an_expected_failure_is_a_note_in_the_baseline(sarif_validator: Any) -> None:
    data, report = _full_run()
    expected = [r for r in data["results"] if r.get("baseline") == "expected" and r["status"] == "failed"]
    if not expected:  # the factory's baseline names IMG-PRS-03; make it fail, as a baseline entry is for
        for r in data["results"]:
            if r["rule"] == "IMG-PRS-03":
                r["status"], r["baseline"] = "failed", "expected"
        report = RunReport.from_json(data)
    log = to_sarif(report)
    (note,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "IMG-PRS-03"]
    assert note["level"] == "note" and note["baselineState"] == "unchanged"
    assert list(sarif_validator.iter_errors(json.loads(json.dumps(log)))) == []


def test_report_command_and_run_setting_write_it(tmp_path: Path, sarif_validator: Any) -> None:
    _, report = _full_run()
    source = tmp_path / "report.json"
    source.write_text(json.dumps(report.to_json()), encoding="utf-8")
    out = tmp_path / "out" / "report.sarif"
    assert main(["report", str(source), "-o", str(tmp_path / "r.html"), "--sarif", str(out)]) == 0
    assert list(sarif_validator.iter_errors(json.loads(out.read_text(encoding="utf-8")))) == []
    again = tmp_path / "again.sarif"
    write_sarif(report, again)
    assert json.loads(again.read_text(encoding="utf-8")) == json.loads(out.read_text(encoding="utf-8"))
