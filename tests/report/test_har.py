"""report.har: the run's evidence as an HTTP Archive 1.2 that any HAR viewer opens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.report.har import har_log, write_har
from conformance.report.model import RunReport
from tests.report.har_schema import validate_har
from tests.report.report_factory import HOSTILE_STRINGS, build_report


def _exchange(**values: Any) -> dict[str, Any]:
    base = {
        "method": "POST",
        "url": "https://127.0.0.1:8443/token?a=1&b=x%20y",
        "request_headers": {"content-type": "application/x-www-form-urlencoded", "cookie": "sid=abc; theme=dark"},
        "request_body": "grant_type=authorization_code&code=[REDACTED]",
        "status": 302,
        "response_headers": {"location": "https://127.0.0.1:1/cb?code=[REDACTED]", "set-cookie": "sid=def; Path=/"},
        "response_body": None,
        "elapsed_s": 0.0125,
        "started_at": "2026-11-24T10:00:00.000Z",
    }
    return base | values


def test_a_synthetic_full_report_is_a_valid_har_with_every_exchange_once() -> None:
    report = RunReport.from_json(build_report())
    document = har_log(report)
    validate_har(document)
    distinct = {json.dumps(e, sort_keys=True) for r in report.results for e in r.evidence}
    assert len(document["log"]["entries"]) == len(distinct) > 0
    # Hostile strings survive as data (JSON-escaped by the writer), never dropped.
    text = json.dumps(document, ensure_ascii=False)
    assert any(s in text for s in HOSTILE_STRINGS)


def test_an_exchange_shared_by_rules_is_one_entry_naming_them_all(tmp_path: Path) -> None:
    data = build_report(results=2)
    shared = _exchange()
    failed = _exchange(status=None, error="connection refused", started_at="2026-11-24T09:59:59.000Z")
    data["results"][0]["evidence"] = [shared, failed]
    # A redacted userinfo is not a URL urlsplit reads (it takes "[REDACTED]" for an IPv6 host): still one entry.
    odd = _exchange(url="https://user:[REDACTED]@127.0.0.1:1/x?k=v", started_at="2026-11-24T10:00:01.000Z")
    data["results"][1]["evidence"] = [shared, odd]
    report = RunReport.from_json(data)
    path = tmp_path / "report.har"
    write_har(report, path)
    document = json.loads(path.read_text(encoding="utf-8"))
    validate_har(document)
    first, second, third = document["log"]["entries"]  # chronological
    assert third["request"]["queryString"] == [{"name": "k", "value": "v"}]
    assert first["_error"] == "connection refused" and first["response"]["status"] == 0
    rules = [data["results"][0]["rule"], data["results"][1]["rule"]]
    assert second["_rules"] == rules and second["comment"] == "evidence for " + ", ".join(rules)
    request, response = second["request"], second["response"]
    assert request["queryString"] == [{"name": "a", "value": "1"}, {"name": "b", "value": "x y"}]
    assert request["cookies"] == [{"name": "sid", "value": "abc"}, {"name": "theme", "value": "dark"}]
    assert request["postData"]["mimeType"] == "application/x-www-form-urlencoded"
    assert response["statusText"] == "Found" and response["redirectURL"].startswith("https://127.0.0.1:1/cb")
    assert response["cookies"] == [{"name": "sid", "value": "def"}]
    assert second["time"] == 12.5 and second["timings"]["wait"] == 12.5


def test_the_last_redaction_pass_covers_values_the_har_decodes(tmp_path: Path) -> None:
    """A secret percent-encoded in a URL shows decoded in queryString: the run's redactor scrubs the document."""
    from conformance.host._redact import Redactor

    data = build_report(results=1)
    data["results"][0]["evidence"] = [_exchange(url="https://127.0.0.1:8443/cb?state=s3cr%65t-value")]
    path = tmp_path / "report.har"
    write_har(RunReport.from_json(data), path, Redactor(["s3cret-value"]).scrub_tree)
    text = path.read_text(encoding="utf-8")
    assert "s3cret-value" not in text and "[REDACTED]" in text


def test_a_demo_run_writes_a_valid_har_of_its_evidence(demo_run: tuple[int, Path, str]) -> None:
    _, report_dir, output = demo_run
    document = json.loads((report_dir / "report.har").read_text(encoding="utf-8"))
    validate_har(document)
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    entries = document["log"]["entries"]
    urls = {e["url"] for r in report["results"] for e in r["evidence"]}
    assert {e["request"]["url"] for e in entries} == urls and len(entries) > 50, output[-2000:]
    assert all(e["_rules"] for e in entries)
    assert document["log"]["creator"] == report["harness"]


def test_conformance_report_re_renders_the_har(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    source = tmp_path / "report.json"
    source.write_text(json.dumps(build_report()), encoding="utf-8")
    assert main(["report", str(source), "-o", str(tmp_path / "out"), "--har", str(tmp_path / "out.har")]) == 0
    assert f"wrote {tmp_path / 'out.har'}" in capsys.readouterr().out
    document = json.loads((tmp_path / "out.har").read_text(encoding="utf-8"))
    validate_har(document)
    expected = har_log(RunReport.from_json(json.loads(source.read_text())))["log"]["entries"]
    # (not the whole document: the file holds a hostile body's lone surrogate as "?", which UTF-8 cannot hold)
    assert [(e["request"]["url"], e["_rules"]) for e in document["log"]["entries"]] == [
        (e["request"]["url"], e["_rules"]) for e in expected
    ]
