"""Size and render time of the HTML report: a full run and a fleet of targets (5,000 results by default).

    .venv/bin/python benchmarks/report_html.py [--results 5000] [--runs 3] [--no-browser] [--keep DIR]

Measures the writer (report.json dict → HTML string), the file size, and in headless Chromium the time to the
`load` event, the first contentful paint, and one filter operation (hiding passed results) done by the page script.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the synthetic report generator lives with the tests

from conformance.report._browser import find_chromium, launch_chromium  # noqa: E402
from conformance.report.html import render_html  # noqa: E402
from conformance.report.model import RunReport  # noqa: E402
from tests.report.report_factory import build_report  # noqa: E402


def _writer(report: dict[str, Any], runs: int) -> tuple[str, list[float]]:
    """Reading report.json into the model (schema check included) and rendering it, as ``conformance report``."""
    times, html = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        html = render_html(RunReport.from_json(report))
        times.append(time.perf_counter() - start)
    return html, times


def _browser(path: Path, runs: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    measured: dict[str, list[float]] = {"load": [], "first paint": [], "filter": []}
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for _ in range(runs):
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            start = time.perf_counter()
            page.goto(path.as_uri(), wait_until="load")
            measured["load"].append(time.perf_counter() - start)
            paint = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1")
            measured["first paint"].append(paint / 1000)
            # One filter change, timed inside the page (script work + the style/layout it forces).
            filter_ms = page.evaluate(
                """() => {
                  const box = document.querySelector('#toolbar input[name="status"][value="passed"]');
                  const t0 = performance.now();
                  box.click();
                  document.body.offsetHeight;
                  return performance.now() - t0;
                }"""
            )
            measured["filter"].append(filter_ms / 1000)
            page.close()
        browser.close()
    return measured


def _line(name: str, values: list[float]) -> str:
    return (
        f"  {name:<14} median {statistics.median(values) * 1000:8.0f} ms   (runs: "
        + ", ".join(f"{v * 1000:.0f}" for v in values)
        + ")"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--keep", type=Path, help="write the rendered files into this directory")
    args = parser.parse_args()

    chromium = None if args.no_browser else find_chromium()
    if not args.no_browser and chromium is None:
        print("no Chromium found: browser timings skipped (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.keep or Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for label, report in (("full run", build_report()), (f"{args.results} results", build_report(args.results))):
            html, times = _writer(report, args.runs)
            path = out_dir / f"report-{label.replace(' ', '-')}.html"
            path.write_text(html, encoding="utf-8")
            size = path.stat().st_size
            targets = len(report["targets"])
            print(f"{label}: {len(report['results'])} results, {targets} targets, {size / 1e6:.2f} MB ({size} bytes)")
            print(_line("writer", times))
            if chromium:
                for name, values in _browser(path, args.runs).items():
                    print(_line(name, values))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
