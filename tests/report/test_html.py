"""The HTML writer on synthetic results: statuses, hostile strings, redaction, self-containment, size."""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import re
import shlex
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jinja2
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape

from conformance.core.rules import catalog
from conformance.core.targets import SUITE_NAMES
from conformance.report import html as writer
from conformance.report import model
from conformance.report.html import auth_stage, curl_command, parse_source
from conformance.report.model import InvalidReport, RunReport
from tests.report.report_factory import HOSTILE_SCRIPT, HOSTILE_STRINGS, SECRET_IN_TEST, build_report

ALLOWED_EXTERNAL = "https://www.rfc-editor.org/rfc/rfc"


def render_html(report: dict[str, Any]) -> str:
    """The writer on a report.json dict, read as ``conformance report`` reads one (checked against the schema)."""
    return writer.render_html(RunReport.from_json(report))


def write_html(report: dict[str, Any], path: Path) -> None:
    writer.write_html(RunReport.from_json(report), path)


class Tags(HTMLParser):
    """Every element and attribute the browser would build from the document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data: dict[str, list[str]] = {}
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._stack:
            self.data.setdefault(self._stack[-1], []).append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def parse(document: str) -> Tags:
    tags = Tags()
    tags.feed(document)
    tags.close()
    return tags


@pytest.fixture(scope="module")
def full_report() -> dict[str, Any]:
    return build_report()


@pytest.fixture(scope="module")
def full_html(full_report: dict[str, Any]) -> str:
    return render_html(full_report)


def _result(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "rule": "AUTH-PRM-01",
        "target": "tool_server",
        "suite": "auth",
        "level": "MUST",
        "status": "passed",
        "title": "Protected resource metadata is served",
        "text": "Protected resource metadata is served as JSON.",
        "source": "A Endpoints; RFC 9728 §3",
        "message": "",
        "baseline": None,
        "checks": [],
        "duration_s": 0.0,
        "evidence": [],
    }
    return {**base, **fields}


def _report(*results: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "format": 1,
        "harness": {"name": "conformance", "version": "0"},
        "started_at": "",
        "finished_at": "",
        "duration_s": 0,
        "verdict": {"accepted": True, "exit_code": 0, "reason": ""},
        "config": {},
        "targets": {},
        "summary": {s: 0 for s in ("total", "passed", "failed", "warning", "skipped", "blocked", "error")}
        | {"by_suite": {}},
        "results": list(results),
        **fields,
    }


def test_the_synthetic_run_is_a_valid_report_json(full_report: dict[str, Any]) -> None:
    schema = json.loads((Path(writer.__file__).parents[1] / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(full_report, schema)  # the fixture stands for a real run: keep it honest


def test_every_status_is_shown_with_its_word_and_icon(full_report: dict[str, Any], full_html: str) -> None:
    statuses = {r["status"] for r in full_report["results"]}
    assert statuses == set(writer.STATUSES)  # the fixture covers them all
    for status in writer.STATUSES:
        assert f'data-status="{status}"' in full_html
        # Colour is never the only signal: each badge carries an icon and the status word.
        assert re.search(
            rf'class="badge st-{status}"[^>]*><span class="ico" aria-hidden="true">.</span> {status}', full_html
        )
    assert "Not accepted" in full_html
    assert "3 MUST rules failed: AUTH-CIMD-03, AUTH-ISS-01, CAMP-02" in full_html


def test_failed_rules_come_first(full_html: str) -> None:
    statuses = re.findall(r'<article class="rule st-(\w+)"', full_html)
    order = [writer.STATUSES.index(s) for s in statuses]
    assert statuses[0] == "failed"
    assert order == sorted(order)


def test_hostile_strings_never_become_markup(full_html: str) -> None:
    tags = parse(full_html)
    assert tags.named("script") == [{"type": "application/json", "id": "exchange-data"}, {}]  # ours only
    assert tags.named("img") == []
    assert [t for t in tags.named("h1")] == [{}]  # no injected "FAKE VERDICT" heading
    assert not any(k.startswith("on") for _, attrs in tags.tags for k in attrs)
    assert HOSTILE_SCRIPT not in full_html
    assert "&lt;script&gt;alert(" in full_html  # shown to the reviewer as text
    assert "{{ 7*7 }}" in full_html  # not evaluated as a template
    visible_text = "".join(tags.data.get("pre", []))
    assert HOSTILE_STRINGS[2] in visible_text  # the fake markup is visible, verbatim, as evidence


def test_controls_bidi_and_surrogates_are_shown_as_escapes(full_html: str, tmp_path: Path) -> None:
    assert "\x00" not in full_html and "\x1b" not in full_html and "\x7f" not in full_html
    assert "\u202e" not in full_html  # a right-to-left override could disguise a URL
    assert "\\x00\\x01\\x02garbage" in full_html  # binary garbage in a non-JSON body
    assert "\\u202eevil.com" in full_html
    assert "\u65e5\u672c\u8a9e \U0001f512" in full_html  # ordinary unicode is kept
    # A lone surrogate (valid in JSON strings) must not break writing UTF-8.
    report = _report(_result(message="bad \ud800 surrogate"))
    write_html(report, tmp_path / "sub" / "report.html")
    assert "bad \ufffd surrogate" in (tmp_path / "sub" / "report.html").read_text(encoding="utf-8")


def exchange_data_of(document: str) -> str:
    start = document.index('<script type="application/json" id="exchange-data">')
    start = document.index(">", start) + 1
    return document[start : document.index("</script>", start)]


def test_long_bodies_are_capped_and_every_exchange_is_in_the_file(full_report: dict[str, Any], full_html: str) -> None:
    camp02 = next(r for r in full_report["results"] if r["rule"] == "CAMP-02")
    assert len(camp02["evidence"][-1]["response_body"]) > writer.BODY_CHARS[True]
    assert "more characters in report.json" in full_html
    many = next(r for r in full_report["results"] if r["rule"] == "CAMP-08")
    view = writer.build_view(RunReport.from_json(full_report))
    (result,) = [r for rule in view["rules"] if rule.id == "CAMP-08" for r in rule.results]
    assert [e.number for e in result.exchanges] == list(range(1, len(many["evidence"]) + 1))
    head, tail = writer.EXCHANGES_HEAD_TAIL[False]
    middle = result.exchanges[head : len(result.exchanges) - tail]
    assert middle and all(e.compact for e in middle)  # one line each in the page, their details as data
    assert sorted(result.data, key=int) == [str(e.number) for e in middle]
    data = json.loads(exchange_data_of(full_html))
    assert data[result.anchor][str(middle[0].number)]["curl"] == middle[0].curl
    assert f'id="{result.anchor}-x{len(many["evidence"])}"' in full_html
    lines = sum(len(r["evidence"]) for r in full_report["results"])
    assert len(re.findall(r'<li value="\d+" (?:class="cx" )?id="', full_html)) == lines  # every exchange
    assert "exchanges not shown" not in full_html and "not kept" not in full_html


def test_an_older_reports_dropped_exchanges_are_counted() -> None:
    old = _result(status="failed", message="x", evidence=[_plain_exchange(1)])
    old["evidence_dropped"] = 7
    document = render_html(_report(old))
    assert "… and 7 more exchanges that the harness version which wrote this report did not keep." in document


def _plain_exchange(n: int, **extra: Any) -> dict[str, Any]:
    return {"method": "GET", "url": f"https://t.example/{n}", "status": 200, "request_headers": {}} | {
        "response_headers": {"content-type": "text/plain"},
        "response_body": f"body {n}",
        "elapsed_s": 0.01,
        **extra,
    }


def test_an_exchange_past_the_budget_keeps_its_metadata_and_says_so() -> None:
    from conformance.host.exchange import without_details

    whole = _plain_exchange(2, request_body="x" * 50 + "… [950 more characters]")
    whole["request_headers"] = {"authorization": "Bearer [REDACTED]", "x-trace": "abc"}
    slim = without_details(whole)
    assert slim["response_body"] is None and slim["request_headers"] == {"authorization": "Bearer [REDACTED]"}
    assert slim["omitted"]["request_body"]["chars"] == 1000
    assert slim["omitted"]["request_headers"] == 1
    document = render_html(_report(_result(status="failed", message="x", evidence=[slim])))
    assert "body omitted: run body budget spent (request body 1000 characters, sha256 " in document
    assert "1 request header" in document


def test_evidence_budget_keeps_failures_whole(monkeypatch: pytest.MonkeyPatch, full_report: dict[str, Any]) -> None:
    monkeypatch.setattr(writer, "EVIDENCE_BUDGET_BYTES", 40_000)
    view = writer.build_view(RunReport.from_json(full_report))
    results = [r for rule in view["rules"] for r in rule.results]
    failed = [e for r in results if r.status == "failed" for e in r.exchanges]
    passed = [e for r in results if r.status == "passed" for e in r.exchanges]
    assert failed and not any(e.compact for e in failed)
    assert passed and all(e.compact for e in passed[-5:])  # their details are the file's data
    assert all(str(e.number) in r.data for r in results for e in r.exchanges if e.compact)


def test_redaction_markers_survive_and_become_placeholders(full_html: str) -> None:
    assert SECRET_IN_TEST not in full_html
    assert "authorization: Bearer [REDACTED]" in full_html
    assert "-H 'authorization: Bearer '\"${ACCESS_TOKEN}\"" in full_html
    assert "# set ACCESS_TOKEN" in full_html


def _curl_words(command: str) -> list[str]:
    lines = [line for line in command.splitlines() if not line.startswith("#")]
    return shlex.split("\n".join(lines).replace("\\\n", " "))


def test_curl_reproducer_is_valid_shell_with_placeholders() -> None:
    hostile = "x'; rm -rf / #$(reboot)`id`"
    exchange = {
        "method": "POST",
        "url": "https://as.example/token?code=[REDACTED]&state=a'b",
        "request_headers": {
            "authorization": "Basic [REDACTED]",
            "content-type": "application/x-www-form-urlencoded",
            "x-weird": hostile,
            "content-length": "99",
        },
        "request_body": "grant_type=authorization_code&client_assertion=[REDACTED]&note=" + hostile,
    }
    command = curl_command(exchange)
    assert command.startswith("# set CODE, BASIC_CREDENTIALS, CLIENT_ASSERTION first")
    words = _curl_words(command)
    assert words[:3] == ["curl", "-sS", "-i"]
    assert "https://as.example/token?code=${CODE}&state=a'b" in words
    assert "authorization: Basic ${BASIC_CREDENTIALS}" in words
    assert f"x-weird: {hostile}" in words  # quoted, never executed
    assert not any(w.startswith("content-length") for w in words)
    assert words[-2:] == [
        "--data-raw",
        "grant_type=authorization_code&client_assertion=${CLIENT_ASSERTION}&note=" + hostile,
    ]


def test_curl_for_binary_truncated_and_bodyless_requests() -> None:
    upload = curl_command(
        {"method": "POST", "url": "https://c.example/shrink", "request_body": "<binary body: 10 bytes, image/png>"}
    )
    assert "--data-binary @body.bin" in upload and "save it as body.bin" in upload
    cut = curl_command({"method": "PUT", "url": "https://p.example/x", "request_body": '{"a": 1}… [5 more characters]'})
    assert _curl_words(cut)[-2:] == ["--data-raw", '{"a": 1}'] and "-X PUT" in cut and "truncated" in cut
    delete = curl_command({"method": "DELETE", "url": "https://p.example/x"})
    assert _curl_words(delete) == ["curl", "-sS", "-i", "-X", "DELETE", "https://p.example/x"]


def test_no_external_url_except_rule_sources(full_html: str) -> None:
    tags = parse(full_html)
    links = [attrs.get(a) or "" for _, attrs in tags.tags for a in ("src", "href", "action", "srcset") if a in attrs]
    assert links
    for link in links:
        assert link.startswith(("#", "data:", ALLOWED_EXTERNAL)), link
    assert any(link.startswith(ALLOWED_EXTERNAL + "9728#section-3") for link in links)
    assert tags.named("link") == [{"rel": "icon", "href": "data:,"}]  # no favicon request either
    assert not re.search(r"url\(|@import", full_html.split("</style>")[0])  # no fetch from CSS


def test_content_security_policy_allows_exactly_the_inline_blocks(full_html: str) -> None:
    csp = next(a["content"] for a in parse(full_html).named("meta") if a.get("http-equiv") == "Content-Security-Policy")
    assert csp and csp.startswith("default-src 'none';")
    for tag in ("style", "script"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", full_html, re.S)
        assert body
        digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
        assert f"{tag}-src 'sha256-{digest}'" in csp
    assert " style=" not in full_html  # inline style attributes would be refused by the policy


def test_skipped_and_blocked_rules_say_why(full_report: dict[str, Any], full_html: str) -> None:
    skipped = next(r for r in full_report["results"] if r["status"] == "skipped")
    assert f"Supply it with <code>{skipped['option']}</code>" in full_html
    assert '<b>Blocked by:</b> <a href="#AUTH-ISS-01">AUTH-ISS-01</a>' in full_html
    assert "expected failure (listed in the baseline)" in full_html
    assert "stale entry: listed in the baseline but now passing" in full_html


def test_rule_shows_id_level_title_source_and_deep_link(full_html: str) -> None:
    article = full_html[full_html.index('id="AUTH-PRM-01"') :]
    article = article[: article.index("</article>")]
    assert '<a class="rid" href="#AUTH-PRM-01">AUTH-PRM-01</a>' in article
    assert '<span class="lvl lvl-MUST"' in article
    assert "<cite>Tool-Server Authorization Contract</cite> › Endpoints" in article
    assert 'href="https://www.rfc-editor.org/rfc/rfc9728#section-3"' in article


def test_sources_are_parsed_into_documents_sections_and_rfc_links() -> None:
    refs = parse_source("A Errors; Endpoints; RFC 7523 §3.1; OAuth 2.1 §4.1.3; Field")
    assert [(r.document, r.section, r.href) for r in refs] == [
        ("Tool-Server Authorization Contract", "Errors", None),
        ("Tool-Server Authorization Contract", "Endpoints", None),
        (None, "RFC 7523 §3.1", "https://www.rfc-editor.org/rfc/rfc7523#section-3.1"),
        (None, "OAuth 2.1 §4.1.3", None),
        (None, "field practice (the contract is silent)", None),
    ]
    assert parse_source("P Campaigns; Limits 9")[1].document == "Platform API"
    assert parse_source("A Auth 4")[0].section == "Authentication 4"
    assert parse_source(None) == []


def test_every_auth_rule_of_the_catalog_has_a_stage() -> None:
    auth = [r.id for r in catalog() if r.suite == "auth"]
    assert {rid: auth_stage(rid) for rid in auth if auth_stage(rid) is None} == {}
    assert auth_stage("AUTH-PRM-01") == "metadata"
    assert auth_stage("AUTH-DCR-02") == "client-identified"
    assert auth_stage("AUTH-CHAL-02") == "client-ready"
    assert auth_stage("AUTH-ISS-03") == "authorizing"
    assert auth_stage("AUTH-TOOL-05") == "linked"
    assert auth_stage("CAMP-01") is None


def test_stage_flow_names_where_linking_breaks(full_html: str) -> None:
    flow = full_html[full_html.index('id="flow-h"') :]
    flow = flow[: flow.index("</section>")]
    assert "Linking would break at <b>Client identified</b>" in flow
    assert re.findall(r'<li class="stage st-(\w+)', flow) == ["warning", "failed", "passed", "failed", "passed"]
    assert flow.count("Linking breaks here") == 1


def test_matrix_counts_results_by_suite_and_status(full_report: dict[str, Any], full_html: str) -> None:
    tags = parse(full_html)
    assert [a for a in tags.named("table") if a.get("class") == "matrix"]
    assert len(tags.named("th")) >= 7 and all(a.get("scope") for a in tags.named("th"))
    failed_campaigns = sum(r["suite"] == "campaigns" and r["status"] == "failed" for r in full_report["results"])
    row = re.search(r'<tr><th scope="row">campaigns</th>(.*?)</tr>', full_html)
    assert row and re.findall(r">(\d+)<", row.group(1))[0] == str(failed_campaigns)


def test_accepted_and_minimal_reports_render() -> None:
    accepted = render_html(_report(_result()))
    assert "✓</span>\nAccepted" in accepted or "Accepted</h2>" in accepted
    assert "every MUST rule passed" in accepted
    with pytest.raises(InvalidReport, match="not a conformance report"):  # never rendered as if it were one
        render_html(_report(_result(status="weird")))


def test_full_run_stays_small_and_renders_deterministically(full_report: dict[str, Any], full_html: str) -> None:
    assert len(full_html.encode()) < 2_000_000
    assert render_html(copy.deepcopy(full_report)) == full_html


_KEYS = ["rule", "target", "suite", "level", "status", "title", "text", "source", "message", "need", "option"]
_KEYS += ["blocked_by", "baseline", "checks", "duration_s", "evidence", "evidence_dropped", "target_url"]
_EXCHANGE_KEYS = ["method", "url", "status", "request_headers", "request_body", "response_headers"]
_EXCHANGE_KEYS += ["response_body", "elapsed_s", "error", "started_at"]
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=40))
_values = st.one_of(
    _scalars,
    st.sampled_from([*HOSTILE_STRINGS, "passed", "failed", "[REDACTED]", "A Endpoints; RFC 9728 §3"]),
    st.lists(st.text(max_size=20), max_size=3),
    st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=3),
)
_exchanges = st.lists(st.one_of(_scalars, st.dictionaries(st.sampled_from(_EXCHANGE_KEYS), _values)), max_size=3)
_results = st.dictionaries(st.sampled_from(_KEYS), st.one_of(_values, _exchanges))


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(results=st.lists(_results, max_size=4), verdict=_values, targets=_values, config=_values)
def test_any_json_is_refused_in_one_line_or_read(
    results: list[dict[str, Any]], verdict: Any, targets: Any, config: Any
) -> None:
    """Reading never crashes on a shape: the schema refuses it (InvalidReport, one line), or the model holds it."""
    try:
        report = RunReport.from_json(_report(*results, verdict=verdict, targets=targets, config=config))
    except InvalidReport as exc:
        assert "\n" not in str(exc) and str(exc).startswith("not a conformance report")
    else:
        assert RunReport.from_json(report.to_json()) == report  # what it holds survives a round trip


_texts = st.one_of(st.text(max_size=40), st.sampled_from([*HOSTILE_STRINGS, "[REDACTED]", "A Endpoints; RFC 9728 §3"]))
_optional_texts = st.one_of(st.none(), _texts)
_headers = st.dictionaries(_texts, _texts, max_size=3)
_exchange = st.fixed_dictionaries(
    {
        "method": _texts,
        "url": _texts,
        "status": st.one_of(st.none(), st.integers(-5, 999)),
        "request_headers": _headers,
        "response_headers": _headers,
        "elapsed_s": st.floats(0, 100),
    },
    optional={"request_body": _optional_texts, "response_body": _optional_texts, "error": _optional_texts},
)
_valid_results = st.builds(
    _result,
    rule=st.from_regex(r"[A-Z]{1,4}(-[A-Z]{1,3})?-[0-9]{1,3}", fullmatch=True),
    target=_texts,
    status=st.sampled_from(writer.STATUSES),
    level=st.sampled_from(writer.LEVELS),
    suite=st.sampled_from(SUITE_NAMES),
    title=_texts,
    text=_texts,
    source=_texts,
    message=_texts,
    need=_optional_texts,
    option=_optional_texts,
    blocked_by=_optional_texts,
    baseline=st.sampled_from([None, "expected", "stale"]),
    checks=st.lists(_texts, max_size=2),
    evidence=st.lists(_exchange, max_size=3),
)
_verdicts = st.fixed_dictionaries(
    {"accepted": st.booleans(), "exit_code": st.integers(0, 3), "reason": _texts},
    optional={"status": st.sampled_from(["ACCEPTED", "PASSED LOCALLY", "NOT ACCEPTED", "INCOMPLETE"])},
)


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    results=st.lists(_valid_results, max_size=4),
    verdict=_verdicts,
    targets=st.dictionaries(_texts, st.fixed_dictionaries({"url": _texts}), max_size=2),
    config=st.dictionaries(_texts, _values, max_size=3),
)
def test_any_report_renders_without_markup_injection(
    results: list[dict[str, Any]], verdict: Any, targets: Any, config: Any
) -> None:
    """Every report the schema admits renders, whatever a hostile target put in its strings."""
    report = RunReport.from_json(_report(*results, verdict=verdict, targets=targets, config=config))
    document = writer.render_html(report)
    tags = parse(document)
    assert tags.named("script") == [{"type": "application/json", "id": "exchange-data"}, {}]
    assert tags.named("img") == []
    json.loads(exchange_data_of(document))  # the data block reads back whatever the strings
    assert not any(k.startswith("on") for _, attrs in tags.tags for k in attrs)
    document.encode("utf-8")  # lone surrogates and controls never reach the output


_HEAVY_EXCHANGE = {
    "method": "POST",
    "url": "https://127.0.0.1:8443/mcp?" + "q=1&" * 100,
    "request_headers": {f"x-header-{i}": "v" * 60 for i in range(12)},
    "request_body": "<" * 2048 + "… [99999 more characters]",  # escaping makes it 4 bytes a character
    "status": 200,
    "response_headers": {f"x-header-{i}": "v" * 60 for i in range(12)},
    "response_body": "\u65e5" * 2048 + "… [99999 more characters]",  # 3 bytes a character in UTF-8
    "elapsed_s": 0.01,
}


def test_worst_case_run_stays_bounded(full_report: dict[str, Any]) -> None:
    """Every rule with 6 exchanges, each with 2 KB bodies both ways (escaping to 4 bytes a character) and 24
    headers: past the report's budget of bodies the later ones keep their metadata, and the file holds every
    exchange, the bodies within the budget (in the page, or as data), each other exchange a line."""
    heavy = copy.deepcopy(full_report)
    for result in heavy["results"]:
        result["evidence"] = [_HEAVY_EXCHANGE] * 6
    document = render_html(heavy)
    assert len(document.encode()) < 3_500_000
    assert len(re.findall(r'<li value="\d+" (?:class="cx" )?id="', document)) == 6 * len(heavy["results"])
    assert OUTSIDE_BUDGET_NOTE in document


OUTSIDE_BUDGET_NOTE = "body omitted: " + writer.OUTSIDE_BUDGET


def test_any_count_of_exchanges_is_listed_with_details_bounded(full_report: dict[str, Any]) -> None:
    """A report of thousands of heavy exchanges (an older version's, or edited): a line each, and the details of
    only as many as the budget holds, so that the file grows by a line per exchange."""
    heavy = copy.deepcopy(full_report)
    for result in heavy["results"]:
        result["evidence"] = [_HEAVY_EXCHANGE] * 40
    count = 40 * len(heavy["results"])
    document = render_html(heavy)
    assert len(re.findall(r'<li value="\d+" (?:class="cx" )?id="', document)) == count
    budget = writer.REPORT_BODY_BYTES * 5 // 4
    assert len(document.encode()) < 2 * budget + 1_500 * count  # a 430-character URL: in its line and reproducer


def test_inbound_and_foreign_client_exchanges_are_labelled() -> None:
    common = {"request_headers": {}, "response_headers": {}, "elapsed_s": 0.01, "request_body": None}
    inbound = {
        **common,
        "direction": "inbound",
        "peer": "127.0.0.1",
        "document": "jwks<script>",
        "method": "GET",
        "url": "https://127.0.0.1:9/oauth/jwks.json",
        "status": 200,
    }
    boto = {**common, "client": "boto3", "method": "GET", "url": "https://127.0.0.1:9/bucket/key.jpg", "status": 200}
    plain = {**common, "method": "GET", "url": "https://127.0.0.1:9/plain", "status": 200}
    document = render_html(_report(_result(status="failed", message="x", evidence=[inbound, boto, plain])))
    assert '<span class="via in">inbound from 127.0.0.1 · jwks&lt;script&gt;</span>' in document
    assert '<span class="via">via boto3</span>' in document
    assert document.count('class="via') == 2  # the harness's own exchanges carry no label
    assert document.count('<span class="muted">· the target sent this request to the harness') == 1
    schema = json.loads((Path(writer.__file__).parents[1] / "schemas" / "report.schema.json").read_text())
    for exchange in (inbound, boto, plain):
        jsonschema.validate(exchange, {"$defs": schema["$defs"], "$ref": "#/$defs/exchange"})


def test_the_replay_line_of_a_fleet_names_the_target() -> None:
    case = {"case": "alg none", "source": "RFC 8725 §3.1", "expected": "refused", "outcome": "failed"}
    case |= {"got": "accepted (200)", "exchanges": [1]}
    common = {"status": "failed", "message": "x", "evidence": [_plain_exchange(1)], "cases": [case]}
    fleet = render_html(_report(_result(target_name="acme corp", **common)))
    assert "conformance replay report.json AUTH-PRM-01 &#39;alg none&#39; --target-name &#39;acme corp&#39;" in fleet
    single = render_html(_report(_result(**common)))
    assert "conformance replay report.json AUTH-PRM-01 &#39;alg none&#39;</code>" in single


def test_an_exchange_that_is_evidence_for_several_rules_renders_as_separate_copies_do(
    full_report: dict[str, Any],
) -> None:
    """A run's report holds an exchange that several rules' evidence share as one object; the page lays it out
    once, and reads exactly as the same report with a copy of it in each rule's evidence."""
    report = copy.deepcopy(full_report)
    results = report["results"]
    failing = next(r for r in results if r["status"] == "failed" and r["evidence"])
    passing = next(r for r in results if r["status"] == "passed" and r["evidence"])
    shared = failing["evidence"][0]
    passing["evidence"] = [shared, *passing["evidence"], shared]
    copied = copy.deepcopy(report)  # every exchange its own object
    read = RunReport.from_json(report)
    evidence = read.results[next(i for i, r in enumerate(results) if r is passing)].evidence
    assert evidence[0] is evidence[-1]  # still one object in the model the writer reads
    assert writer.render_html(read) == render_html(copied)


def test_text_clean_leaves_as_it_is_is_printable_but_for_tabs_and_line_feeds() -> None:
    # clean() returns such text without a scan: only right while every character it escapes is unprintable.
    unsafe = writer._UNSAFE_CHARS.findall("".join(map(chr, range(sys.maxunicode + 1))))
    assert unsafe and "\t" not in unsafe and "\n" not in unsafe
    assert not any(character.isprintable() for character in unsafe)
    assert writer.clean("a\tb\nc\r\nd\re\u202e") == "a\tb\nc\nd\\x0de\\u202e"


# The markup the template wrote for an exchange's line and for the list item of one whose details are data, before
# html.py made them: what they make must stay byte for byte what the template's autoescape made of the same values.
_TEMPLATE_LINE = (
    "{% if ex.origin %}<span class=\"via{{ ' in' if ex.inbound }}\">{{ ex.origin }}</span> {% endif %}"
    '<span class="m">{{ ex.method }}</span> <span class="u">{{ ex.url }}</span> '
    '<span class="code {{ ex.status_class }}">'
    "→ {% if ex.error %}error{% elif ex.status is not none %}{{ ex.status }}{% else %}no response{% endif %}</span>"
    '{% if ex.elapsed %} <span class="t">{{ ex.elapsed }}</span>{% endif %}'
    '{% if ex.case %} <span class="case-tag" title="the case it was made for">{{ ex.case }}</span>{% endif %}'
)
_TEMPLATE_ITEM = (
    '<li value="{{ ex.number }}" class="cx" id="{{ anchor }}-x{{ ex.number }}" tabindex="0">{{ line }}'
    '{% if ex.omitted_line %} <span class="omit">{{ ex.omitted_line }}</span>{% endif %}</li>'
)


@functools.cache
def _templates() -> tuple[jinja2.Template, jinja2.Template]:
    """The two templates, compiled once with the report's environment (each example renders them)."""
    environment = writer._environment()
    return environment.from_string(_TEMPLATE_LINE), environment.from_string(_TEMPLATE_ITEM)


_line_texts = st.one_of(st.sampled_from(["", "GET", "https://t/a?b=1&c=<2>", *HOSTILE_STRINGS]), st.text(max_size=30))


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.fixed_dictionaries({k: _line_texts for k in ("origin", "method", "url", "elapsed", "case", "error")}),
    status=st.one_of(st.none(), st.integers(0, 999)),
    inbound=st.booleans(),
    omitted_line=_line_texts,
    anchor=_line_texts,
)
def test_exchange_lines_are_what_the_template_made_of_them(
    texts: dict[str, str], status: int | None, inbound: bool, omitted_line: str, anchor: str
) -> None:
    fields = {**texts, "status": status, "inbound": inbound}
    exchange = writer.Exchange(
        number=7, started_at="", request_headers="", request_body=None, response_headers="", response_body=None,
        curl="", omitted_line=omitted_line, **fields,
    )  # fmt: skip
    template_line, template_item = _templates()
    line = template_line.render(ex=exchange)
    assert writer.exchange_line(fields) == line
    exchange.line = writer.exchange_line(fields)
    item = template_item.render(ex=exchange, anchor=anchor, line=exchange.line)
    assert writer._compact_item(writer.escaped(anchor), exchange) == item
    assert writer.escaped(anchor) == str(escape(anchor))


def test_reproducers_of_requests_alike_but_for_the_types_of_their_values_differ() -> None:
    # Reproducers of text-only requests are made once each: 1, 1.0 and True are one key to a cache, not one text.
    made = [
        curl_command({"method": "PUT", "url": "https://t/n", "request_headers": {"x-n": value}})
        for value in ("1", 1, 1.0, True, "1")
    ]
    headers = [line.rpartition("-H ")[2] for line in made]
    assert headers == ["'x-n: 1'", "'x-n: 1'", "'x-n: 1.0'", "'x-n: True'", "'x-n: 1'"]


def test_nothing_of_a_report_outlives_its_page(full_report: dict[str, Any]) -> None:
    render_html(full_report)
    caches = (writer._text_header_lines, writer._text_curl_command, writer._text_bytes, model._json_bytes)
    assert [cached.cache_info().currsize for cached in caches] == [0, 0, 0, 0]
