"""``conformance diff OLD.json NEW.json``: what changed between two runs, rule by rule and target by target.

A result is keyed by (target, rule). Statuses rank by what they say about the target:

- *regression*: the new result fails (failed, error) where the old one did not, or warns where it passed;
- *fix*: the old result failed or warned and the new one passes;
- *changed*: any other change of status (passed → skipped: the rule is no longer decided, say);
- *new* / *removed*: the result exists in one run only (another harness version, another suite selection).

The exit status is 1 when there is a regression, so CI can gate on "no worse than the last certification".
"""

from __future__ import annotations

import json
from typing import Any

from conformance.report.model import RuleResult, RunReport
from conformance.report.summary import md, report_verdict

FAILING = frozenset({"failed", "error"})
KINDS = ("regression", "fix", "changed", "new", "removed")


def classify(old: str | None, new: str | None) -> str | None:
    """The kind of change from status ``old`` to status ``new`` (None: unchanged)."""
    if old is None:
        return "new"
    if new is None:
        return "removed"
    if old == new:
        return None
    if (new in FAILING and old not in FAILING) or (new == "warning" and old == "passed"):
        return "regression"
    if new == "passed" and (old in FAILING or old == "warning"):
        return "fix"
    return "changed"


def _status(result: RuleResult | None) -> str | None:
    return None if result is None else result.status.value


def index(report: RunReport) -> dict[tuple[str, str], RuleResult]:
    """The report's results by (target, rule)."""
    return {(r.where, r.rule): r for r in report.results}  # a fleet's "name/kind": each named target apart


def diff_reports(old: RunReport, new: RunReport) -> dict[str, Any]:
    """Every change, grouped by target then kind, plus the two verdicts."""
    before, after = index(old), index(new)
    targets: dict[str, dict[str, list[dict[str, Any]]]] = {}
    counts = dict.fromkeys(KINDS, 0)
    for key in [*after, *(k for k in before if k not in after)]:
        was, now = before.get(key), after.get(key)
        kind = classify(_status(was), _status(now))
        if kind is None:
            continue
        current = now or was
        assert current is not None
        target, rule = key
        entry = {
            "rule": rule,
            "level": current.level,
            "title": current.title,
            "old": _status(was),
            "new": _status(now),
            "message": " ".join(now.message.split()) if now is not None else "",
            "baseline": now.baseline if now is not None else None,
        }
        targets.setdefault(target, {k: [] for k in KINDS})[kind].append(entry)
        counts[kind] += 1
    return {
        "old": {"started_at": old.started_at, "verdict": report_verdict(old)},
        "new": {"started_at": new.started_at, "verdict": report_verdict(new)},
        "counts": counts,
        "targets": targets,
    }


def compare_map(old: RunReport, new: RunReport) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(target, rule) → (kind, old status) for every result of ``new`` that changed: what the HTML marks."""
    before = index(old)
    marks: dict[tuple[str, str], tuple[str, str | None]] = {}
    for key, result in index(new).items():
        previous = _status(before.get(key))
        kind = classify(previous, result.status.value)
        if kind is not None:
            marks[key] = (kind, previous)
    return marks


def _arrow(entry: dict[str, Any]) -> str:
    return f"{entry['old'] or '—'} → {entry['new'] or '—'}"


def render_markdown(data: dict[str, Any]) -> str:
    old, new = data["old"]["verdict"]["status"], data["new"]["verdict"]["status"]
    counts = data["counts"]
    icon = "❌" if counts["regression"] else "✅"
    lines = [f"## {icon} Conformance changes: {counts['regression']} regression(s), {counts['fix']} fix(es)", ""]
    lines.append(f"Verdict: {md(old)} → **{md(new)}**" if old != new else f"Verdict: **{md(new)}** (unchanged)")
    for target, kinds in data["targets"].items():
        lines += ["", f"### {md(target)}", "", "| change | rule | level | status | message |", "|---|---|---|---|---|"]
        for kind in KINDS:
            for entry in kinds[kind]:
                message = md(entry["message"][:300]) if kind in ("regression", "new", "changed") else ""
                lines.append(
                    f"| {kind} | {md(entry['rule'])} | {md(entry['level'])} | {md(_arrow(entry))} | {message} |"
                )
    if not data["targets"]:
        lines += ["", "No result changed."]
    return "\n".join(lines) + "\n"


def render_console(data: dict[str, Any], color: bool) -> str:
    from io import StringIO

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=120, highlight=False)
    styles = {"regression": "bold red", "fix": "green", "changed": "yellow", "new": "cyan", "removed": "dim"}
    old, new = data["old"]["verdict"]["status"], data["new"]["verdict"]["status"]
    console.print(f"verdict: {old} → {new}" if old != new else f"verdict: {new} (unchanged)", markup=False)
    for target, kinds in data["targets"].items():
        table = Table(title=Text(target), title_justify="left")
        for column in ("change", "rule", "level", "status", "message"):
            table.add_column(column, overflow="fold")
        for kind in KINDS:
            for entry in kinds[kind]:
                message = entry["message"][:200] if kind in ("regression", "new", "changed") else ""
                cells = (kind, entry["rule"], entry["level"], _arrow(entry), message)
                table.add_row(*(Text(c) for c in cells), style=styles[kind])  # Text: a target's words are no markup
        console.print(table)
    counts = data["counts"]
    console.print(", ".join(f"{n} {k}" for k, n in counts.items()) if data["targets"] else "no result changed")
    return buffer.getvalue()


def render(data: dict[str, Any], fmt: str, *, color: bool = False) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return render_markdown(data)
    return render_console(data, color)


def compare_report_option(value: str) -> str:
    """``--compare-report``'s check at parse time: a run learns of a bad file before its first check."""
    import argparse
    from pathlib import Path

    from conformance.core._exceptions import ConformanceError
    from conformance.report.summary import load_report

    try:
        load_report(Path(value), "--compare-report")
    except ConformanceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value
