"""A fleet's report (conformance/report/fleet.py): a row per named target with its verdict, the overall verdict,
the writers (JSON and its schema, summary, HTML, JUnit), and `conformance merge` of shards."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.cli._main import main
from conformance.report.json_writer import read_report, write_json
from conformance.report.junit import add_fleet_verdicts
from conformance.report.model import CheckOutcome, RunReport, Status
from tests.report.report_factory import build_report

URLS = {
    "acme/platform": "https://a.example",
    "beta/platform": "https://b.example",
    "gamma/platform": "https://g.example",
}


def _outcomes(name: str, failing: str | None = None) -> list[CheckOutcome]:
    rules = ("TOK-01", "TOK-04", "TOK-06")
    return [
        CheckOutcome(
            f"platform/test_tokens.py::test_{rule}[{name}]",
            (rule,),
            Status.FAILED if rule == failing else Status.PASSED,
            "broken" if rule == failing else "",
            target_name=name,
        )
        for rule in rules
    ]


def _fleet(*members: tuple[str, str | None], targets: dict[str, str] | None = None) -> RunReport:
    outcomes = [o for name, failing in members for o in _outcomes(name, failing)]
    names = [name for name, _ in members]
    urls = targets if targets is not None else {k: v for k, v in URLS.items() if k.split("/")[0] in names}
    return RunReport.build(
        outcomes, strict=False, suites_run=[], implemented=[], targets=urls, fleet=names, harness_version="t"
    )


def _pairs(report: RunReport) -> set[tuple[str | None, str, str]]:
    return {(r.target_name, r.rule, r.status.value) for r in report.results}


def test_one_row_per_named_target_and_the_worst_verdict_overall() -> None:
    report = _fleet(("acme", None), ("beta", "TOK-04"), ("gamma", "TOK-06"))
    assert [(row.name, row.verdict.status) for row in report.fleet] == [
        ("acme", "ACCEPTED"),
        ("beta", "NOT ACCEPTED"),
        ("gamma", "NOT ACCEPTED"),
    ]
    assert report.fleet[1].verdict.reason == "1 rule(s) failed: TOK-04"
    assert report.fleet[0].targets == {"platform": "https://a.example"}
    assert report.verdict.status == "NOT ACCEPTED" and report.verdict.exit_code == 1
    assert "acme ACCEPTED, beta NOT ACCEPTED, gamma NOT ACCEPTED" in report.verdict.reason
    # a rule is judged once per named target
    assert len(report.results) == 9 and ("beta", "TOK-04", "failed") in _pairs(report)
    assert ("acme", "TOK-04", "passed") in _pairs(report)
    assert _fleet(("acme", None), ("beta", None)).verdict.status == "ACCEPTED"


def test_a_fleet_report_follows_the_schema_and_reads_back(tmp_path: Path) -> None:
    report = _fleet(("acme", None), ("beta", "TOK-04"))
    write_json(report, tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text())
    assert [row["name"] for row in data["fleet"]] == ["acme", "beta"]
    assert data["fleet"][1]["verdict"]["status"] == "NOT ACCEPTED"
    assert all(r["target_name"] in ("acme", "beta") for r in data["results"])
    again = read_report(tmp_path / "report.json")  # schema-checked
    assert again.fleet == report.fleet and _pairs(again) == _pairs(report)


def test_a_report_of_one_target_keeps_its_shape_and_old_reports_still_read(tmp_path: Path) -> None:
    data = build_report()
    assert "fleet" not in data and all("target_name" not in r for r in data["results"])
    report = RunReport.from_json(data)
    assert report.fleet == () and all(r.target_name is None for r in report.results)
    out = report.to_json()
    assert "fleet" not in out and all("target_name" not in r for r in out["results"])


def _write(path: Path, report: RunReport) -> str:
    write_json(report, path)
    return str(path)


def test_merge_of_shards_equals_the_fleet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fleet = _fleet(("acme", None), ("beta", "TOK-04"), ("gamma", "TOK-06"))
    shards = [
        _write(tmp_path / f"{name}.json", _fleet((name, failing)))
        for name, failing in (("acme", None), ("beta", "TOK-04"), ("gamma", "TOK-06"))
    ]
    out = tmp_path / "merged" / "fleet.json"
    assert main(["merge", *shards, "-o", str(out), "--html", str(tmp_path / "fleet.html")]) == 0
    merged = read_report(out)
    assert _pairs(merged) == _pairs(fleet)
    assert [(r.name, r.verdict.status) for r in merged.fleet] == [(r.name, r.verdict.status) for r in fleet.fleet]
    assert merged.verdict.status == fleet.verdict.status and merged.targets == fleet.targets
    assert merged.config["merged_from"] == shards
    html = (tmp_path / "fleet.html").read_text()
    assert 'class="fleet-table"' in html and "gamma" in html
    assert "verdict: NOT ACCEPTED" in capsys.readouterr().out


def test_a_single_target_report_is_named_by_its_label_or_its_directory(tmp_path: Path) -> None:
    data = build_report()
    single = RunReport.from_json(data)
    (tmp_path / "acme").mkdir()
    first, second = tmp_path / "acme" / "report.json", tmp_path / "other.json"
    for path in (first, second):  # as the factory's dict (its hostile strings escaped)
        path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "fleet.json"
    assert main(["merge", str(first), f"beta={second}", "-o", str(out)]) == 0
    merged = read_report(out)
    assert [row.name for row in merged.fleet] == ["acme", "beta"]
    assert {r.target_name for r in merged.results} == {"acme", "beta"}
    assert set(merged.targets) == {f"{n}/{k}" for n in ("acme", "beta") for k in single.targets}
    assert merged.fleet[0].verdict == single.verdict


@pytest.mark.parametrize("problem", ["duplicate", "missing", "not json", "not a report", "strictness"])
def test_merge_refuses_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str) -> None:
    acme = _write(tmp_path / "acme.json", _fleet(("acme", None)))
    other = tmp_path / "other.json"
    if problem == "duplicate":
        _write(other, _fleet(("beta", None), ("acme", "TOK-04")))
    elif problem == "not json":
        other.write_text("{not json", encoding="utf-8")
    elif problem == "not a report":
        other.write_text('{"format": 1}', encoding="utf-8")
    elif problem == "strictness":
        strict = RunReport.build(
            _outcomes("beta"), strict=True, suites_run=[], implemented=[], targets={}, fleet=["beta"]
        )
        _write(other, strict)
    out = tmp_path / "fleet.json"
    assert main(["merge", acme, str(other), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conformance: merge: ") and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
    if problem == "duplicate":
        assert f"target 'acme' is in both {acme} and {other}" in err


def test_summary_markdown_has_a_row_per_named_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "fleet.json", _fleet(("acme", None), ("beta", "TOK-04")))
    assert main(["summary", path, "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| **acme** | ✅ ACCEPTED |" in out
    assert "| **beta** | ❌ NOT ACCEPTED | 1 rule(s) failed: TOK-04 |" in out
    assert "| **acme/platform** (https://a.example) |" in out and "### beta/platform: 1 rule(s)" in out
    assert main(["summary", path, "--format", "text"]) == 0
    assert "target beta: NOT ACCEPTED: 1 rule(s) failed: TOK-04" in capsys.readouterr().out


def test_junit_gains_the_verdict_of_each_named_target(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites><testsuite name="pytest"><testcase name="t"/></testsuite></testsuites>')
    add_fleet_verdicts(junit, _fleet(("acme", None), ("beta", "TOK-04")))
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).iter("property")}
    assert properties == {
        "conformance.verdict": "NOT ACCEPTED",
        "conformance.verdict.acme": "ACCEPTED",
        "conformance.verdict.beta": "NOT ACCEPTED",
    }
