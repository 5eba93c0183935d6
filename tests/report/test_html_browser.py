"""The report in a real browser: headless Debian Chromium driven by Playwright (never `playwright install`).

Skipped with the reason when no Chromium is found; in CI (CI=true) that is a failure instead.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from conformance.report._browser import ENV_VAR, find_chromium, launch_chromium
from conformance.report.html import write_html
from conformance.report.model import RunReport
from tests.report.report_factory import build_report

REPORTS = Path(__file__).resolve().parents[2] / "reports"
REAL_REPORT_VAR = "CONFORMANCE_BROWSER_REPORT"  # a real run's report.json; default: reports/report.json


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the browser test must run in CI)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:  # Playwright is imported when the browser is wanted, not when the suite is collected
        from playwright.sync_api import sync_playwright
    except ImportError:  # the `browser` extra is missing: skipped (or failed in CI) with the reason
        _unavailable("the playwright package is not installed (extra `browser`)")
    executable = find_chromium()
    if executable is None:
        _unavailable(f"no Chromium: install Debian's package (apt-get install -y chromium) or set {ENV_VAR}")
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright, executable)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A full run: every rule of the catalog on three targets, every status, hostile evidence.
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_html(RunReport.from_json(build_report()), path)
    return path


def watched_page(browser: Any) -> Any:
    """A page that records what must never happen: console errors, dialogs, network requests."""
    page = browser.new_page(viewport={"width": 1280, "height": 1700})
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in {"error", "warning"} else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def on_dialog(dialog: Any) -> None:  # a hostile alert() that ran would show up here
        problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(f"request: {r.url}"))
    page.problems = problems
    return page


def load(page: Any, path: Path) -> Any:
    """``path`` freshly loaded in a watched page (a full navigation: no script state, filter, scroll or fragment of
    an earlier load survives it; screen media), with no problem recorded yet. The report keeps nothing in storage or
    cookies."""
    page.emulate_media(media="null")
    page.problems.clear()
    page.goto(path.as_uri(), wait_until="load")
    assert page.url == path.as_uri()
    return page


@pytest.fixture(scope="module")
def report_page(browser: Any) -> Iterator[Any]:
    """One watched page for the tests on a report, each loading its report in it: a new page is a new renderer
    process (costly to start), a load in this one costs less."""
    page = watched_page(browser)
    yield page
    page.close()


@pytest.fixture
def page(report_page: Any, report_file: Path) -> Any:
    return load(report_page, report_file)


def check_report_page(page: Any, report: dict[str, Any]) -> None:
    """What any run's report must show: verdict, matrix, a failed rule's evidence, a working status filter, and every
    exchange report.json holds."""
    verdict = "Accepted" if report["verdict"]["accepted"] else "Not accepted"
    assert page.get_by_role("heading", name=verdict, exact=True).is_visible()
    matrix = page.get_by_role("table", name="Results per suite and status")
    assert matrix.is_visible()
    for suite in {r["suite"] for r in report["results"]}:
        assert matrix.get_by_role("rowheader", name=suite, exact=True).is_visible()
    failed = next((r for r in report["results"] if r["status"] == "failed" and r["evidence"]), None)
    if failed:
        article = page.locator(f"article[id='{failed['rule']}']")
        assert article.locator(".msg").first.is_visible()
        assert article.locator("details.ex[open] pre").first.is_visible()
    assert page.locator("ol.exchanges > li").count() == sum(len(r["evidence"]) for r in report["results"])
    passed = next(r for r in report["results"] if r["status"] == "passed")
    passed_rule = page.locator(f"article[id='{passed['rule']}']")
    assert passed_rule.is_visible()
    page.locator('#toolbar input[name="status"][value="passed"]').uncheck()
    assert passed_rule.is_hidden()
    if failed:
        assert page.locator(f"article[id='{failed['rule']}']").is_visible()
    page.locator('#toolbar input[name="status"][value="passed"]').check()
    assert page.problems == []


def test_a_real_full_run(report_page: Any, demo_run: tuple[int, Path, str]) -> None:
    source = Path(os.environ.get(REAL_REPORT_VAR) or demo_run[1] / "report.json")
    if not source.is_file():
        pytest.skip(f"no real run's report.json at {source} (python3 run.py demo writes one; or set {REAL_REPORT_VAR})")
    try:
        report = json.loads(source.read_text(encoding="utf-8"))
    except ValueError as exc:  # e.g. a demo writing it right now
        pytest.skip(f"{source} is not readable JSON: {exc}")
    path = REPORTS / "report-browser-check.html"
    write_html(
        RunReport.from_json(report), path
    )  # rendered now, by this writer, whatever wrote the report.html beside it
    try:
        page = load(report_page, path)
        check_report_page(page, report)
        page.screenshot(path=str(REPORTS / "report-screenshot-full-run.png"))
    finally:
        path.unlink()


def test_verdict_matrix_and_failed_evidence_are_visible(page: Any) -> None:
    check_report_page(page, build_report())
    assert page.get_by_role("heading", name="Not accepted", exact=True).is_visible()
    assert "AUTH-CIMD-03, AUTH-ISS-01, CAMP-02" in page.locator(".verdict .reason").inner_text()
    matrix = page.get_by_role("table", name="Results per suite and status")
    assert matrix.is_visible()
    assert matrix.get_by_role("rowheader", name="campaigns").is_visible()
    flow = page.locator("ol.flow")
    assert flow.locator("li.stage").count() == 5
    assert flow.locator("li.breaks").inner_text().startswith("2 Client identified")

    failed = page.locator("article#CAMP-02")
    assert failed.locator(".msg").inner_text().startswith("a 2-character name was accepted (201) <script>")
    last = failed.locator("details.ex[open]").last
    assert last.locator("summary").inner_text().startswith("POST https://127.0.0.1:8444/v1/campaigns → 201")
    assert last.locator("pre.body").last.is_visible()
    curl = last.locator("pre.curl").inner_text()
    assert curl.startswith("# set ACCESS_TOKEN first") and '--data-raw \'{"name": "ab"' in curl
    assert last.get_by_role("button", name="Copy the curl command").is_visible()
    assert page.locator("img").count() == 0  # hostile markup stayed text
    page.screenshot(path=str(REPORTS / "report-screenshot.png"))
    failed.screenshot(path=str(REPORTS / "report-screenshot-failed-rule.png"))
    assert page.problems == []


def test_status_filter_hides_passed_rules(page: Any) -> None:
    passed, failed = page.locator("article#AUTH-PRM-01"), page.locator("article#AUTH-ISS-01")
    assert passed.is_visible() and failed.is_visible()
    page.locator('#toolbar input[name="status"][value="passed"]').uncheck()
    assert passed.is_hidden() and failed.is_visible()
    results = build_report()["results"]
    shown = f"Showing {sum(r['status'] != 'passed' for r in results)} of {len(results)} results"
    assert page.locator("#shown").inner_text().startswith(shown)
    page.get_by_role("button", name="Problems only").click()
    assert page.locator("article.rule.st-skipped:visible").count() == 0
    page.get_by_role("button", name="Show all").click()
    assert passed.is_visible()
    assert page.problems == []


def test_search_and_deep_link(page: Any) -> None:
    from playwright.sync_api import expect  # the `page` fixture has imported it

    page.locator("#q").fill("cimd-03")
    # Polling with expect(): wait_for_function would eval a string, which the report's CSP rightly refuses.
    expect(page.locator("#shown")).to_contain_text(f"Showing 1 of {len(build_report()['results'])}")
    assert page.locator("article.rule:visible").count() == 1
    # A deep link to a rule hidden by the filters clears them and brings the rule into view.
    page.locator('#toolbar input[name="status"][value="passed"]').uncheck()
    page.evaluate("location.hash = '#AUTH-PRM-01'")
    target = page.locator("article#AUTH-PRM-01")
    target.wait_for(state="visible")
    assert target.locator("details.evidence").get_attribute("open") is not None
    # Polled: the scroll into view can land after the rule shows, on a loaded machine (seen once in CI: 208 px).
    top = "document.getElementById('AUTH-PRM-01').getBoundingClientRect().top"
    deadline = time.monotonic() + 5
    while page.evaluate(top) >= 200 and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert page.evaluate(top) < 200
    page.evaluate("location.hash = '#%E0%A4%A'")  # a malformed link is ignored, without a script error
    assert page.problems == []


def test_every_exchange_of_the_report_is_in_the_page_and_opens(page: Any) -> None:
    """As many exchanges in the page as in report.json; a line whose details are the file's data opens whole."""
    report = build_report()
    assert page.locator("ol.exchanges > li").count() == sum(len(r["evidence"]) for r in report["results"])
    line = page.locator("article#CAMP-08 ol.exchanges > li.cx").first
    number = line.get_attribute("value")
    page.locator("article#CAMP-08 details.evidence > summary").click()
    line.click()
    item = page.locator(f"article#CAMP-08 ol.exchanges > li[value='{number}']")
    details = item.locator("details.ex")
    assert details.get_attribute("open") is not None
    assert details.locator("pre.curl").inner_text().startswith(("curl", "# set"))
    assert details.locator("p.lbl").first.is_visible()
    assert page.problems == []


def test_content_is_readable_without_javascript(browser: Any, report_file: Path) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(report_file.as_uri())
    assert page.locator("#toolbar").is_hidden()  # filters need the script; content does not
    assert page.locator("article.rule").count() == len(build_report()["results"])
    assert page.locator("article#CAMP-02 details.ex[open] pre.body").last.is_visible()
    assert page.locator("article#AUTH-PRM-01").is_visible()
    context.close()


def test_print_expands_everything(page: Any) -> None:
    body = page.locator("article#AUTH-PRM-01 details.evidence pre").first
    assert body.is_hidden()  # a passed rule's evidence starts collapsed
    page.emulate_media(media="print")
    assert body.is_visible()  # the print stylesheet opens every <details>
    assert page.locator("#toolbar").is_hidden()


def test_a_fleet_is_paginated_and_deep_links_reach_any_page(report_page: Any, tmp_path: Path) -> None:
    path = tmp_path / "fleet.html"
    write_html(RunReport.from_json(build_report(1200)), path)
    page = load(report_page, path)
    shown = page.locator("#shown").inner_text()
    assert shown.startswith("Showing 1200 of 1200 results") and "on this page" in shown
    visible_before = page.locator(".result:visible").count()
    assert 0 < visible_before < 1200
    from playwright.sync_api import expect  # the `browser` fixture has imported it

    # The clicks that reach the button, counted before the report's own handler runs.
    page.evaluate(
        "window.moreClicks = 0;"
        " document.getElementById('more').addEventListener('click', () => { window.moreClicks += 1; }, true)"
    )
    page.locator("#more").click()
    if page.evaluate("window.moreClicks") == 0:
        page.locator("#more").click()  # an input event the loaded browser lost: the automation's, not the page's
    assert page.evaluate("window.moreClicks") == 1
    # Polled, not read once: on a loaded machine the click's re-render can land after a single read.
    expect(page.locator("#shown")).not_to_contain_text(shown, timeout=15_000)
    assert page.locator(".result:visible").count() > visible_before
    last = page.evaluate("document.querySelector('#rule-list > article:last-child .result:last-child').id")
    page.goto("about:blank")  # the deep link is then a new document's load, not a jump within this one
    page.goto(f"{path.as_uri()}#{last}", wait_until="load")
    assert page.locator(f"[id='{last}']").is_visible()  # it was on the last page


def test_a_matrix_count_filters_to_its_suite_and_status(page: Any) -> None:
    page.get_by_role("table", name="Results per suite and status").get_by_title(
        "Show the failed results of auth"
    ).click()
    results = build_report()["results"]
    failed = sum(r["suite"] == "auth" and r["status"] == "failed" for r in results)
    assert (
        page.locator("#shown").inner_text().startswith(f"Showing {failed} of {len(results)} results in {failed} rules")
    )
    assert page.locator("article#AUTH-CIMD-03").is_visible() and page.locator("article#CAMP-02").is_hidden()
    assert page.problems == []


def test_compare_marks_changes_without_breaking_the_page(report_page: Any, tmp_path: Path) -> None:
    """--compare: the changes section is shown, its links reach the changed rules, and the page stays clean (no
    console error, no request: the policy still lets only the inline assets in)."""
    old, new = build_report(), build_report()
    passed = next(r for r in new["results"] if r["status"] == "passed")
    passed["status"], passed["message"] = "failed", "now broken"
    path = tmp_path / "report.html"
    write_html(RunReport.from_json(new), path, RunReport.from_json(old))
    page = load(report_page, path)
    section = page.get_by_role("region", name="Changes since the compared run")
    assert section.is_visible()
    section.get_by_role("link", name=passed["rule"], exact=True).click()
    result = page.locator(f"article[id='{passed['rule']}'] .chg-regression").first
    assert result.is_visible() and result.inner_text() == "regression: was passed"
    check_report_page(page, new)


def test_a_failing_rule_shows_its_cases_and_each_case_opens_its_exchanges(report_page: Any, tmp_path: Path) -> None:
    """A rule with an attack table: a case table, failed cases first, each case's exchange numbers linking to the
    exchange (opened, scrolled below the sticky toolbar); every exchange in the file; a deep link to the rule lands
    with its heading visible."""
    data = build_report()
    result = next(r for r in data["results"] if r["suite"] == "auth" and r["status"] == "failed")
    evidence = [
        {"method": "POST", "url": f"https://127.0.0.1:8443/mcp?n={n}", "status": 401 if n != 31 else 200}
        | {"request_headers": {}, "response_headers": {}, "elapsed_s": 0.01}
        | ({"case": "alg none"} if n in (30, 31) else {"case": "expired"} if n in (10, 11) else {})
        for n in range(1, 41)
    ]
    result |= {"evidence": evidence, "evidence_dropped": 0, "message": "alg none: the token was accepted"}
    result["cases"] = [
        {"case": "expired", "source": "RFC 7519 §4.1.4", "expected": "refused", "outcome": "passed",
         "got": "as expected", "exchanges": [10, 11]},
        {"case": "alg none", "source": "RFC 8725 §3.1", "expected": "refused", "outcome": "failed",
         "got": "the token was accepted (200)", "exchanges": [30, 31]},
    ]  # fmt: skip
    path = tmp_path / "cases.html"
    write_html(RunReport.from_json(data), path)
    page = load(report_page, path)
    anchor = f"{result['rule']}--tool_server"
    table = page.locator(f"li[id='{anchor}'] table.cases")
    assert table.is_visible()
    rows = table.locator("tbody tr")
    assert rows.first.locator("th").inner_text() == "alg none"  # failed first
    assert "the token was accepted" in rows.first.inner_text()
    assert page.locator(f"li[id='{anchor}'] ol.exchanges > li").count() == 40  # every exchange, none elided
    rows.first.get_by_role("link", name="31").click()
    exchange = page.locator(f"li[id='{anchor}-x31']")
    exchange.wait_for(state="visible")
    assert exchange.locator("details.ex").get_attribute("open") is not None
    toolbar = page.evaluate("document.getElementById('toolbar').getBoundingClientRect().bottom")
    top = f"document.getElementById('{anchor}-x31').getBoundingClientRect().top"
    deadline = time.monotonic() + 5
    while page.evaluate(top) < toolbar and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert toolbar <= page.evaluate(top) < toolbar + 200  # below the toolbar, not hidden under it
    assert "alg none" in exchange.inner_text()  # the exchange names its case
    # Each case row opens its own exchanges below it, whole: "expired"'s are lines of the evidence list whose
    # details are the file's data, rendered now; the evidence list itself is left as it was.
    expired = rows.nth(1)
    assert expired.locator("th").inner_text() == "expired"
    assert page.locator(f"li[id='{anchor}-x10']").get_attribute("class") == "cx"
    expired.get_by_role("button", name="Show this case's exchanges").click()
    opened = table.locator("tr.case-ex").first
    assert opened.is_visible()
    cases_exchanges = opened.locator("ol.case-exchanges > li")
    assert cases_exchanges.count() == 2
    first = cases_exchanges.first.locator("details.ex")
    assert first.get_attribute("open") is not None
    assert first.locator("summary").inner_text().startswith("POST https://127.0.0.1:8443/mcp?n=10 → 401")
    assert first.locator("pre.curl").inner_text().endswith("'https://127.0.0.1:8443/mcp?n=10'")
    assert page.locator(f"li[id='{anchor}-x10']").get_attribute("class") == "cx"
    expired.get_by_role("button", name="Show this case's exchanges").click()
    assert opened.is_hidden()
    table.screenshot(path=str(REPORTS / "report-screenshot-cases.png"))
    page.goto("about:blank")
    page.goto(f"{path.as_uri()}#{result['rule']}", wait_until="load")
    heading = f"document.getElementById('{result['rule']}-h').getBoundingClientRect().top"
    deadline = time.monotonic() + 5
    while page.evaluate(heading) < toolbar and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert page.evaluate(heading) >= page.evaluate("document.getElementById('toolbar').getBoundingClientRect().bottom")
    assert page.problems == []
