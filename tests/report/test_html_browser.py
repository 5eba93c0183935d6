"""The report in a real browser: headless Debian Chromium driven by Playwright (never `playwright install`).

Skipped with the reason when no Chromium is found; in CI (CI=true) that is a failure instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from conformance.report._browser import ENV_VAR, find_chromium, launch_chromium
from conformance.report.html import write_html
from tests.report.report_factory import build_report

REPORTS = Path(__file__).resolve().parents[2] / "reports"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the browser test must run in CI)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
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
    write_html(build_report(), path)
    return path


@pytest.fixture
def page(browser: Any, report_file: Path) -> Iterator[Any]:
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
    page.goto(report_file.as_uri(), wait_until="load")
    yield page
    page.close()


def test_verdict_matrix_and_failed_evidence_are_visible(page: Any) -> None:
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
    assert page.locator("#shown").inner_text().startswith("Showing 22 of 115 results")
    page.get_by_role("button", name="Problems only").click()
    assert page.locator("article.rule.st-skipped:visible").count() == 0
    page.get_by_role("button", name="Show all").click()
    assert passed.is_visible()
    assert page.problems == []


def test_search_and_deep_link(page: Any) -> None:
    page.locator("#q").fill("cimd-03")
    # Polling with expect(): wait_for_function would eval a string, which the report's CSP rightly refuses.
    expect(page.locator("#shown")).to_contain_text("Showing 1 of 115")
    assert page.locator("article.rule:visible").count() == 1
    # A deep link to a rule hidden by the filters clears them and brings the rule into view.
    page.locator('#toolbar input[name="status"][value="passed"]').uncheck()
    page.evaluate("location.hash = '#AUTH-PRM-01'")
    target = page.locator("article#AUTH-PRM-01")
    target.wait_for(state="visible")
    assert target.locator("details.evidence").get_attribute("open") is not None
    assert page.evaluate("document.getElementById('AUTH-PRM-01').getBoundingClientRect().top") < 200
    assert page.problems == []


def test_content_is_readable_without_javascript(browser: Any, report_file: Path) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(report_file.as_uri())
    assert page.locator("#toolbar").is_hidden()  # filters need the script; content does not
    assert page.locator("article.rule").count() == 115
    assert page.locator("article#CAMP-02 details.ex[open] pre.body").last.is_visible()
    assert page.locator("article#AUTH-PRM-01").is_visible()
    context.close()


def test_print_expands_everything(page: Any) -> None:
    body = page.locator("article#AUTH-PRM-01 details.evidence pre").first
    assert body.is_hidden()  # a passed rule's evidence starts collapsed
    page.emulate_media(media="print")
    assert body.is_visible()  # the print stylesheet opens every <details>
    assert page.locator("#toolbar").is_hidden()


def test_a_fleet_is_paginated_and_deep_links_reach_any_page(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "fleet.html"
    write_html(build_report(1200), path)
    page = browser.new_page()
    page.goto(path.as_uri(), wait_until="load")
    shown = page.locator("#shown").inner_text()
    assert shown.startswith("Showing 1200 of 1200 results") and "on this page" in shown
    visible_before = page.locator(".result:visible").count()
    assert 0 < visible_before < 1200
    page.locator("#more").click()
    assert page.locator(".result:visible").count() > visible_before
    last = page.evaluate("document.querySelector('#rule-list > article:last-child .result:last-child').id")
    page.close()
    page = browser.new_page()
    page.goto(f"{path.as_uri()}#{last}", wait_until="load")
    assert page.locator(f"[id='{last}']").is_visible()  # it was on the last page
    page.close()
