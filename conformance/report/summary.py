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

from conformance._exceptions import ConformanceError
from conformance.host import Redactor

STATUS_ORDER = ("passed", "failed", "warning", "skipped", "blocked", "error")
ATTENTION = ("error", "failed", "warning")  # the order problems are listed in
MESSAGE_CHARS = 300
MARKDOWN_ICONS = {"ACCEPTED": "✅", "PASSED LOCALLY": "🟡", "NOT ACCEPTED": "❌", "INCOMPLETE": "⚠️"}


def load_report(path: Path, command: str = "summary") -> dict[str, Any]:
    """report.json, read and checked for the parts every reader needs; a clean error otherwise."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConformanceError(f"{command}: cannot read {path}: {exc}") from None
    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        raise ConformanceError(f"{command}: {path} is not a conformance report (no `results` list)")
    report["results"] = [r for r in report["results"] if isinstance(r, dict)]
    return report


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


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def report_verdict(report: dict[str, Any]) -> dict[str, Any]:
    raw = _mapping(report.get("verdict"))
    status = raw.get("status")
    if not isinstance(status, str):
        accepted = raw.get("accepted")
        status = "ACCEPTED" if accepted is True else "NOT ACCEPTED" if accepted is False else "UNKNOWN"
    exit_code = raw.get("exit_code")
    return {
        "status": _text(status),
        "accepted": raw.get("accepted") is True,
        "exit_code": exit_code if isinstance(exit_code, int) else 1,
        "reason": _text(raw.get("reason")),
    }


def needs_attention(result: dict[str, Any]) -> bool:
    return result.get("status") in ATTENTION or result.get("baseline") == "stale"


def summary_data(report: dict[str, Any]) -> dict[str, Any]:
    """The summary as plain data (the JSON format, and what the other formats render)."""
    targets_info = _mapping(report.get("targets"))
    per_target: dict[str, dict[str, Any]] = {}
    totals = dict.fromkeys(STATUS_ORDER, 0)
    for result in report["results"]:
        status = str(result.get("status"))
        name = _text(result.get("target")) or "unknown"
        entry = per_target.get(name)
        if entry is None:
            info = targets_info.get(name)
            url = info.get("url") if isinstance(info, dict) else result.get("target_url")
            entry = per_target[name] = {
                "url": _text(url),
                "counts": dict.fromkeys(STATUS_ORDER, 0),
                "attention": [],
            }
        entry["counts"][status] = entry["counts"].get(status, 0) + 1
        totals[status] = totals.get(status, 0) + 1
        if needs_attention(result):
            entry["attention"].append(
                {
                    "rule": _text(result.get("rule")),
                    "level": _text(result.get("level")),
                    "status": status,
                    "baseline": _text(result.get("baseline")) or None,
                    "title": _text(result.get("title")),
                    "message": _text(result.get("message")),
                }
            )
    rank = {s: i for i, s in enumerate(ATTENTION)}
    harness = report.get("harness")
    for entry in per_target.values():
        entry["attention"].sort(key=lambda a: (a["baseline"] == "expected", rank.get(a["status"], len(rank))))
    return {
        "verdict": report_verdict(report),
        "started_at": _text(report.get("started_at")),
        "harness": _text(harness.get("version")) if isinstance(harness, dict) else "",
        "total": len(report["results"]),
        "counts": totals,
        "targets": per_target,
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


def render(report: dict[str, Any], fmt: str) -> str:
    data = summary_data(report)
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return render_markdown(data)
    return render_text(data)
