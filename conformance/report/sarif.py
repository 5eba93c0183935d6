"""report.sarif: the run's failed and warned rules as SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

One SARIF result per failed or warned rule result (per target of a fleet); the rule's catalog entry (its text and
citation) is the SARIF rule; the target's URL is the result's location (the harness certifies a service, not a file
of the repository: code scanning shows such an alert without a source snippet). A rule failed but expected by the
baseline is a result with ``baselineState: unchanged`` and no error level (``note``), so that a vendor's accepted
failures are visible without failing code scanning's gate. ``partialFingerprints`` keep one alert per rule and
target across runs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from conformance.report.model import RuleResult, RunReport, Status

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

# SARIF's own levels: a MUST rule that failed is an error, a SHOULD (or a MUST that only warned) a warning.
_LEVEL = {Status.FAILED: "error", Status.WARNING: "warning", Status.ERROR: "error"}
_DEFAULT_LEVEL = {"MUST": "error", "SHOULD": "warning", "INFO": "note"}
REPORTED = frozenset(_LEVEL)


def _rule_descriptor(result: RuleResult) -> dict[str, Any]:
    return {
        "id": result.rule,
        "name": result.rule.replace("-", ""),
        "shortDescription": {"text": result.title},
        "fullDescription": {"text": result.text},
        "help": {"text": f"{result.text}\nSource: {result.source}"},
        "defaultConfiguration": {"level": _DEFAULT_LEVEL.get(result.level, "warning")},
        "properties": {"tags": ["conformance", result.suite, result.level], "source": result.source},
    }


def _fingerprint(result: RuleResult) -> str:
    return hashlib.sha256(f"{result.rule}\0{result.where}\0{result.target_url or ''}".encode()).hexdigest()


def _result(result: RuleResult, rule_index: int) -> dict[str, Any]:
    expected = result.baseline == "expected"
    text = result.message or result.title
    entry: dict[str, Any] = {
        "ruleId": result.rule,
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": "note" if expected else _LEVEL[result.status],
        "message": {"text": f"{result.rule} [{result.level}] on {result.where}: {text}"},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": {"uri": result.target_url or result.where}},
                "logicalLocations": [{"name": result.where, "kind": "module"}],
            }
        ],
        "partialFingerprints": {"conformanceRuleTarget/v1": _fingerprint(result)},
        "properties": {"status": result.status.value, "suite": result.suite, "checks": list(result.checks)},
    }
    if expected:
        entry["baselineState"] = "unchanged"
    return entry


def to_sarif(report: RunReport) -> dict[str, Any]:
    """The SARIF log of a report: one run, one result per failed, warned or errored rule result."""
    shown = [r for r in report.results if r.status in REPORTED]
    rules: dict[str, int] = {}
    descriptors: list[dict[str, Any]] = []
    results = []
    for result in shown:
        if result.rule not in rules:
            rules[result.rule] = len(descriptors)
            descriptors.append(_rule_descriptor(result))
        results.append(_result(result, rules[result.rule]))
    invocation: dict[str, Any] = {
        "executionSuccessful": report.verdict.exit_code == 0,
        "exitCode": report.verdict.exit_code,
        "exitCodeDescription": f"{report.verdict.status}: {report.verdict.reason}",
    }
    if report.started_at:
        invocation["startTimeUtc"] = report.started_at
    if report.finished_at:
        invocation["endTimeUtc"] = report.finished_at
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": report.harness_name,
                        "version": report.harness_version,
                        "rules": descriptors,
                    }
                },
                "automationDetails": {"id": "conformance/" + "+".join(sorted(report.targets)) + "/"},
                "invocations": [invocation],
                "results": results,
                "properties": {"verdict": report.verdict.status, "targets": dict(report.targets)},
            }
        ],
    }


def write_sarif(report: RunReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_sarif(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
