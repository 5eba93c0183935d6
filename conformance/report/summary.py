"""``conformance summary``: a report.json told in a few lines (CI job summaries, chat, terminals).

The verdict, the counts, and every rule that needs a reader's attention (failed, error, warning, stale baseline
entry), per target. Markdown is what a CI job summary shows (``>> $GITHUB_STEP_SUMMARY``); every value from the
report is escaped, as a hostile target's words can reach a rule's message.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from conformance.core._exceptions import ConformanceError
from conformance.host import Redactor
from conformance.report.model import RuleResult, RunReport

STATUS_ORDER = ("passed", "failed", "warning", "skipped", "blocked", "error")
ATTENTION = ("error", "failed", "warning")  # the order problems are listed in
MESSAGE_CHARS = 300
MARKDOWN_ICONS = {"ACCEPTED": "✅", "PASSED LOCALLY": "🟡", "NOT ACCEPTED": "❌", "INCOMPLETE": "⚠️"}


def load_report(path: Path, command: str = "summary") -> RunReport:
    """report.json, read and checked against the shipped schema; a clean error otherwise."""
    from conformance.report.json_writer import read_report
    from conformance.report.model import InvalidReport

    try:
        return read_report(path)
    except InvalidReport as exc:
        raise ConformanceError(f"{command}: {path} is {exc}") from None
    except (OSError, ValueError) as exc:
        raise ConformanceError(f"{command}: cannot read {path}: {exc}") from None


def env_redactor() -> Redactor:
    """The report's own redactor, fed with the secrets this environment configures (a CI job has the same
    secrets as the run it summarizes). report.json is already redacted; this pass is a second fence, and it also
    catches credentials by shape (JWTs, private keys, credential-named URL parameters)."""
    try:
        from conformance.config import resolve
        from conformance.host import redactor_for

        return redactor_for(resolve(env=os.environ))
    except Exception:  # an unusable environment must not cost the summary: fall back to the shape rules
        return Redactor()


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def report_verdict(report: RunReport) -> dict[str, Any]:
    verdict = report.verdict
    return {
        "status": _text(verdict.status),
        "accepted": verdict.accepted,
        "exit_code": verdict.exit_code,
        "reason": _text(verdict.reason),
    }


def needs_attention(result: RuleResult) -> bool:
    return result.status in ATTENTION or result.baseline == "stale"


def summary_data(report: RunReport) -> dict[str, Any]:
    """The summary as plain data (the JSON format, and what the other formats render)."""
    per_target: dict[str, dict[str, Any]] = {}
    totals = dict.fromkeys(STATUS_ORDER, 0)
    for result in report.results:
        status = result.status.value
        entry = per_target.get(result.where)  # in a fleet, "name/kind"
        if entry is None:
            url = report.targets.get(result.where, result.target_url)
            entry = per_target[result.where] = {
                "url": _text(url),
                "counts": dict.fromkeys(STATUS_ORDER, 0),
                "attention": [],
            }
        entry["counts"][status] += 1
        totals[status] += 1
        if needs_attention(result):
            entry["attention"].append(
                {
                    "rule": _text(result.rule),
                    "level": _text(result.level),
                    "status": status,
                    "baseline": _text(result.baseline) or None,
                    "title": _text(result.title),
                    "message": _text(result.message),
                }
            )
    rank = {s: i for i, s in enumerate(ATTENTION)}
    for entry in per_target.values():
        entry["attention"].sort(key=lambda a: (a["baseline"] == "expected", rank.get(a["status"], len(rank))))
    return {
        "verdict": report_verdict(report),
        "started_at": _text(report.started_at),
        "harness": _text(report.harness_version),
        "total": len(report.results),
        "counts": totals,
        "targets": per_target,
        # a fleet: each named target's verdict
        "fleet": [
            {"name": _text(row.name), "status": _text(row.verdict.status), "reason": _text(row.verdict.reason)}
            for row in report.fleet
        ],
    }


def _short(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


# Enough to keep a value from becoming markup in a table cell (emphasis, code, links, cells, strike-through).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md(text: str) -> str:
    """Plain text as inert Markdown: HTML and Markdown syntax escaped, one line (table cells)."""
    text = _text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _label(item: dict[str, Any]) -> str:
    if item["baseline"] == "stale":
        return "stale baseline"
    if item["baseline"] == "expected":
        return f"{item['status']} (baseline)"
    return str(item["status"])


def render_markdown(data: dict[str, Any]) -> str:
    verdict = data["verdict"]
    icon = MARKDOWN_ICONS.get(verdict["status"], "❔")
    lines = [f"## {icon} Conformance: {md(verdict['status'])}", ""]
    if verdict["reason"]:
        lines += [md(verdict["reason"]), ""]
    if data["fleet"]:
        lines += ["| target | verdict | why |", "|---|---|---|"]
        for row in data["fleet"]:
            icon = MARKDOWN_ICONS.get(row["status"], "❔")
            lines.append(f"| **{md(row['name'])}** | {icon} {md(row['status'])} | {md(row['reason'])} |")
        lines.append("")
    counts = data["counts"]
    lines += [
        "| target | " + " | ".join(STATUS_ORDER) + " |",
        "|---|" + "---:|" * len(STATUS_ORDER),
    ]
    for name, entry in data["targets"].items():
        url = f" ({md(entry['url'])})" if entry["url"] else ""
        lines.append(f"| **{md(name)}**{url} | " + " | ".join(str(entry["counts"][s]) for s in STATUS_ORDER) + " |")
    lines.append("| **all** | " + " | ".join(f"**{counts[s]}**" for s in STATUS_ORDER) + " |")
    for name, entry in data["targets"].items():
        if not entry["attention"]:
            continue
        lines += ["", f"### {md(name)}: {len(entry['attention'])} rule(s) to look at", ""]
        lines += ["| rule | level | status | message |", "|---|---|---|---|"]
        for item in entry["attention"]:
            message = md(_short(item["message"] or item["title"]))
            lines.append(f"| {md(item['rule'])} | {md(item['level'])} | {md(_label(item))} | {message} |")
    lines += ["", f"<sub>{data['total']} results · harness {md(data['harness']) or 'unknown'}"]
    lines[-1] += f" · run started {md(data['started_at'])}</sub>" if data["started_at"] else "</sub>"
    return "\n".join(lines) + "\n"


def render_text(data: dict[str, Any]) -> str:
    verdict = data["verdict"]
    lines = [f"verdict: {verdict['status']}" + (f": {verdict['reason']}" if verdict["reason"] else "")]
    for row in data["fleet"]:
        lines.append(f"target {row['name']}: {row['status']}" + (f": {row['reason']}" if row["reason"] else ""))
    counts = data["counts"]
    lines.append(f"{data['total']} results: " + ", ".join(f"{counts[s]} {s}" for s in STATUS_ORDER))
    for name, entry in data["targets"].items():
        url = f" {entry['url']}" if entry["url"] else ""
        tally = ", ".join(f"{entry['counts'][s]} {s}" for s in STATUS_ORDER if entry["counts"][s])
        lines.append(f"{name}{url}: {tally}")
        for item in entry["attention"]:
            message = _short(item["message"] or item["title"])
            lines.append(f"  {_label(item).upper():20} {item['rule']} [{item['level']}] {message}")
    return "\n".join(lines) + "\n"


def render(report: RunReport, fmt: str) -> str:
    data = summary_data(report)
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return render_markdown(data)
    return render_text(data)
