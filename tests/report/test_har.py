"""report.har: the run's evidence as an HTTP Archive 1.2 that any HAR viewer opens."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.report.har import _query_string, _text_headers, har_log, write_har
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


@pytest.mark.parametrize("report_scrubbed", [False, True])
def test_the_last_redaction_pass_covers_values_the_har_decodes(tmp_path: Path, report_scrubbed: bool) -> None:
    """A secret percent-encoded in a URL or quoted in a cookie shows decoded in queryString and cookies: the run's
    redactor scrubs them, also when the report itself was already scrubbed (they are not in it as such)."""
    from conformance.host._redact import Redactor

    data = build_report(results=1)
    headers = {"cookie": 'sid="s3cr\\145t-value"'}  # SimpleCookie reads the octal escape \145 as "e"
    data["results"][0]["evidence"] = [
        _exchange(url="https://127.0.0.1:8443/cb?state=s3cr%65t-value", request_headers=headers)
    ]
    path = tmp_path / "report.har"
    write_har(RunReport.from_json(data), path, Redactor(["s3cret-value"]).scrub_tree, report_scrubbed=report_scrubbed)
    text = path.read_text(encoding="utf-8")
    request = json.loads(text)["log"]["entries"][0]["request"]
    assert request["queryString"] == [{"name": "state", "value": "[REDACTED]"}]
    assert request["cookies"] == [{"name": "sid", "value": "[REDACTED]"}]
    assert "s3cret-value" not in text


class _CountingRedactor:
    """A run's redactor that remembers every string it was asked to scrub."""

    def __init__(self, secrets: list[str]) -> None:
        from conformance.host._redact import Redactor

        self.redactor = Redactor(secrets)
        self.scrubbed: list[str] = []
        scrub = self.redactor.scrub

        def counting(text: str) -> str:
            self.scrubbed.append(text)
            return scrub(text)

        self.redactor.scrub = counting  # type: ignore[method-assign]


def test_a_report_already_scrubbed_is_not_scrubbed_again_for_the_har(tmp_path: Path) -> None:
    """The HAR of the report the last pass just scrubbed reuses it: the pass is not run over its evidence again
    (only over what the HAR decodes), and the HAR is the same as with a second full pass."""
    body = "a response body the last pass already scrubbed"
    data = build_report(results=2)
    for result in data["results"]:
        result["evidence"] = [_exchange(response_body=body, url="https://127.0.0.1:8443/cb?state=s3cr%65t-value")]
    counting = _CountingRedactor(["s3cret-value"])
    report = RunReport.from_json(data).scrubbed(counting.redactor.scrub_tree)
    assert body in counting.scrubbed  # the report's own pass
    counting.scrubbed.clear()
    once, twice = tmp_path / "once.har", tmp_path / "twice.har"
    write_har(report, once, counting.redactor.scrub_tree, report_scrubbed=True)
    assert body not in counting.scrubbed and "s3cret-value" in counting.scrubbed  # only the decoded values
    write_har(report, twice, counting.redactor.scrub_tree)
    assert body in counting.scrubbed  # what the writer did before: the whole document again
    assert once.read_bytes() == twice.read_bytes()
    assert "s3cret-value" not in once.read_text(encoding="utf-8")


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
    from conformance.cli._main import main

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


@pytest.mark.parametrize("learnt_since", [False, True])
def test_the_run_scrubs_its_har_once_unless_it_learnt_a_secret_since(tmp_path: Path, learnt_since: bool) -> None:
    """write_reports, as the plugin calls it after build_report: the evidence of the report the last pass scrubbed
    is not scrubbed again for the HAR; if a secret was learnt after that pass, the HAR gets the whole pass again
    (and that secret is not in it)."""
    from types import SimpleNamespace

    from conformance.pytest._session import SESSION_KEY, write_reports

    late = "learnt-after-the-last-pass"
    body = f"a response body the last pass already scrubbed, then {late}"
    data = build_report(results=2)
    for result in data["results"]:
        result["evidence"] = [_exchange(response_body=body)]
    counting = _CountingRedactor(["s3cret-value"])
    state = SimpleNamespace(redactor=counting.redactor, report=None, report_generation=None, settings={})
    state.report_generation = counting.redactor.generation  # what build_report does, then its pass
    state.report = report = RunReport.from_json(data).scrubbed(counting.redactor.scrub_tree)
    counting.scrubbed.clear()
    if learnt_since:
        counting.redactor.add_secret(late)
    config = SimpleNamespace(
        stash={SESSION_KEY: state}, getoption=lambda *a, **k: None, option=SimpleNamespace(xmlpath=None)
    )
    write_reports(report, tmp_path, config)  # type: ignore[arg-type]
    assert (body in counting.scrubbed) is learnt_since
    assert (late in (tmp_path / "report.har").read_text(encoding="utf-8")) is not learnt_since


def test_headers_read_the_same_whatever_the_type_of_their_values() -> None:
    # Header sets of text are read once and shared by the entries; others (a report not read from report.json,
    # whose schema wants text) each time.
    texts = {"Content-Type": "text/plain", "X-Count": "1", "Set-Cookie": "sid=a1", "Location": "/next"}
    other = {"Content-Type": "text/plain", "X-Count": 1, "Set-Cookie": "sid=a1", "Location": "/next"}
    report = RunReport.from_json(build_report(results=1))
    entries = [
        har_log(_with_evidence(report, _exchange(response_headers=headers)))["log"]["entries"][0]["response"]
        for headers in (texts, other, texts)
    ]
    assert entries[0] == entries[1] == entries[2]
    assert entries[0]["headers"][1] == {"name": "X-Count", "value": "1"}
    assert entries[0]["cookies"] == [{"name": "sid", "value": "a1"}]
    assert entries[0]["content"]["mimeType"] == "text/plain" and entries[0]["redirectURL"] == "/next"


def _with_evidence(report: RunReport, exchange: dict[str, Any]) -> RunReport:
    return dataclasses.replace(report, results=[dataclasses.replace(report.results[0], evidence=(exchange,))])


def test_nothing_of_a_report_outlives_its_har() -> None:
    document = har_log(RunReport.from_json(build_report()))
    assert document["log"]["entries"]
    assert _text_headers.cache_info().currsize == _query_string.cache_info().currsize == 0
