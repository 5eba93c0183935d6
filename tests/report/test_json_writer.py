from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.report.json_writer import dumps, read_report, write_json
from conformance.report.model import RunReport
from tests.report.report_factory import build_report

EXCHANGE = {"method": "GET", "url": "https://t/x", "status": 200, "response_body": "é \ud800"}
DOCUMENT: dict[str, Any] = {
    "format": 1,
    "verdict": {"status": "ACCEPTED", "missing": []},
    "results": [
        {"rule": "AUTH-PRM-01", "status": "passed", "evidence": [EXCHANGE, {**EXCHANGE, "status": 404}]},
        {"rule": "AUTH-PRM-02", "status": "skipped", "evidence": []},
        {"rule": "AUTH-PRM-03", "status": "passed"},
    ],
    "empty": {},
}


def test_the_text_reads_back_as_the_document() -> None:
    for document in (DOCUMENT, {}, {"results": []}, {"results": [{"evidence": [{}]}]}):
        assert json.loads(dumps(document)) == document


def test_each_member_result_and_exchange_is_a_line_of_its_own() -> None:
    lines = dumps(DOCUMENT).splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert lines[1] == '  "format": 1,'
    assert lines[2] == '  "verdict": {"status": "ACCEPTED", "missing": []},'
    assert lines[4].startswith('    {"rule": "AUTH-PRM-01"') and lines[4].endswith('"evidence": [')
    assert [json.loads(line.rstrip(",")) for line in lines[5:7]] == [EXCHANGE, {**EXCHANGE, "status": 404}]
    assert lines[8] == '    {"rule": "AUTH-PRM-02", "status": "skipped", "evidence": []},'
    assert lines[9] == '    {"rule": "AUTH-PRM-03", "status": "passed"}'


def test_non_ascii_text_stays_as_it_is() -> None:
    assert '"é \ud800"' in dumps({"results": [{"evidence": [EXCHANGE]}]})


def test_a_written_report_reads_back_the_same_from_valid_utf8(tmp_path: Path) -> None:
    report = RunReport.from_json(build_report(40))  # hostile bodies among them: a lone surrogate, controls
    path = tmp_path / "report.json"
    write_json(report, path)
    path.read_bytes().decode("utf-8")  # strict: every byte is UTF-8
    assert read_report(path).to_json() == report.to_json()


def test_an_exchange_that_is_evidence_for_several_results_is_written_in_each() -> None:
    # One object in the document (a check deciding several rules): its text is made once, written every time.
    shared = {"method": "GET", "url": "https://t/shared", "response_body": "x" * 100}
    document = {
        "results": [
            {"rule": "AUTH-PRM-01", "evidence": [shared, EXCHANGE]},
            {"rule": "AUTH-PRM-02", "evidence": [shared]},
            {"rule": "AUTH-PRM-03", "evidence": [EXCHANGE, shared]},
        ]
    }
    text = dumps(document)
    assert json.loads(text) == document
    assert text.count(json.dumps(shared, ensure_ascii=False)) == 3
