"""The console summary (rich): a table by suite and status, the failing rules, the verdict and the files."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from conformance.report.model import RunReport, throttle_summary

STATUS_STYLE = {
    "passed": "green",
    "failed": "bold red",
    "warning": "yellow",
    "skipped": "dim",
    "blocked": "magenta",
    "error": "bold white on red",
}
_VERDICT_STYLE = {"ACCEPTED": "bold green", "PASSED LOCALLY": "bold yellow"}
ORDER = ("passed", "failed", "warning", "skipped", "blocked", "error")


def render_summary(report: RunReport, file: TextIO, *, files: list[str] | None = None, color: bool = True) -> None:
    console = Console(file=file, force_terminal=color, no_color=not color, width=110, highlight=False)
    table = Table(title="conformance: rules by suite", show_lines=False)
    table.add_column("suite")
    for status in ORDER:
        table.add_column(status, justify="right", style=STATUS_STYLE[status])
    summary = report.summary
    for suite, counts in summary["by_suite"].items():
        table.add_row(suite, *[str(counts.get(s, 0)) or "0" for s in ORDER])
    table.add_row("total", *[str(summary.get(s, 0)) for s in ORDER], style="bold")
    console.print(table)
    checks = len({check for result in report.results for check in result.checks})
    console.print(
        f"{len(report.results)} rule results from {checks} checks (pytest's own count is of checks: one check may "
        "decide several rules, one rule take several checks)"
    )
    problems = [r for r in report.results if r.status in ("failed", "error", "warning") or r.baseline == "stale"]
    for result in problems[:50]:
        line = Text()
        line.append(f"{result.status.upper():8}", style=STATUS_STYLE[result.status])
        line.append(f" {result.rule} [{result.level}] ")
        if result.baseline:
            line.append(f"(baseline: {result.baseline}) ", style="cyan")
        line.append(result.message[:300] or result.title)
        console.print(line)
    if len(problems) > 50:
        console.print(f"… and {len(problems) - 50} more (see the report files)")
    if report.config.get("mcp_era"):
        spoken = ", ".join(report.config.get("mcp_era_spoken") or []) or "not settled"
        console.print(f"MCP era: {spoken} (--mcp-era {report.config['mcp_era']})")
    throttle = throttle_summary(report.throttle)
    if throttle:
        console.print(Text(f"throttle: {throttle}", style="magenta" if "blocked" in throttle else ""))
    for row in report.fleet:  # a fleet: one line per named target
        line = Text(f"target {row.name}: ")
        line.append(row.verdict.status, style=_VERDICT_STYLE.get(row.verdict.status, "bold red"))
        console.print(line.append(f" — {row.verdict.reason}"))
    label = report.verdict.status
    style = _VERDICT_STYLE.get(label, "bold red")
    console.print(Text(f"verdict: {label} — {report.verdict.reason}", style=style))
    for path in files or []:
        console.print(f"report: {path}")
