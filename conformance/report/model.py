"""The result model: what one check concluded, and one result per rule per target built from those.

Checks produce :class:`CheckOutcome` (plain dicts on the wire, so pytest-xdist can carry them); the session
aggregates them into rule results and a run report, which every writer renders.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from conformance.rules import HARNESS_RULES, RULES, SUITE_TARGET, Level

MAX_EVIDENCE_PER_RULE = 40


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # a MUST rule failed
    WARNING = "warning"  # a SHOULD rule failed
    SKIPPED = "skipped"  # could not run: a need is missing
    BLOCKED = "blocked"  # a prerequisite rule failed
    ERROR = "error"  # the harness itself failed


# When several checks decide one rule, the first status here that occurs wins.
STATUS_PRECEDENCE = (
    Status.ERROR,
    Status.FAILED,
    Status.WARNING,
    Status.BLOCKED,
    Status.PASSED,
    Status.SKIPPED,
)


def level_status(failed_status: Status, level: Level, strict: bool = False) -> Status:
    """What a failure of a rule at ``level`` becomes: failed (MUST), warning (SHOULD), passed (INFO)."""
    if failed_status is not Status.FAILED:
        return failed_status
    if level is Level.SHOULD:
        return Status.FAILED if strict else Status.WARNING
    if level is Level.INFO:
        return Status.PASSED
    return Status.FAILED


def check_outcome(
    *,
    nodeid: str,
    rules: list[str],
    status: Status,
    message: str = "",
    need: str | None = None,
    option: str | None = None,
    blocked_by: str | None = None,
    evidence: list[dict[str, Any]] | None = None,
    duration_s: float = 0.0,
    incomplete: bool = False,
) -> dict[str, Any]:
    return {
        "nodeid": nodeid,
        "rules": rules,
        "status": status.value,
        "message": message,
        "need": need,
        "option": option,
        "blocked_by": blocked_by,
        "evidence": evidence or [],
        "duration_s": round(duration_s, 4),
        "incomplete": incomplete,  # the need kept the run from reaching its target (see ``verdict``)
    }


def aggregate(
    outcomes: Iterable[dict[str, Any]],
    *,
    strict: bool = False,
    unimplemented_suites: Iterable[str] = (),
    implemented: Iterable[str] = (),
    targets: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One result per rule per target, in catalog order.

    ``unimplemented_suites``: suites that ran; their rules with no check at all are reported as skipped so that a
    reviewer sees what this harness version does not decide (never a silent pass).
    """
    grouped: dict[str, list[dict[str, Any]]] = {}
    for outcome in outcomes:
        for rule_id in outcome["rules"]:
            grouped.setdefault(rule_id, []).append(outcome)
    implemented_set = set(implemented)
    for suite in unimplemented_suites:
        for rule in RULES.values():
            if rule.suite == suite and rule.id not in grouped and rule.id not in implemented_set:
                grouped[rule.id] = [
                    check_outcome(
                        nodeid="",
                        rules=[rule.id],
                        status=Status.SKIPPED,
                        message=HARNESS_RULES.get(rule.id, "no check for this rule in this harness version"),
                        need="the harness's own test suite"
                        if rule.id in HARNESS_RULES
                        else "a check in this harness version",
                    )
                ]
    results = []
    for rule in RULES.values():
        if rule.id not in grouped:
            continue
        mine = grouped[rule.id]
        statuses = [Status(o["status"]) for o in mine]
        status = next(s for s in STATUS_PRECEDENCE if s in statuses)
        deciding = [o for o in mine if Status(o["status"]) is status]
        messages = list(dict.fromkeys(o["message"] for o in deciding if o["message"]))
        evidence = [e for o in mine for e in o["evidence"]]
        target = SUITE_TARGET[rule.suite]
        results.append(
            {
                "rule": rule.id,
                "target": target,
                "target_url": (targets or {}).get(target),
                "suite": rule.suite,
                "level": rule.level.value,
                "status": status.value,
                "title": rule.title,
                "text": rule.text,
                "source": rule.source,
                "document": rule.document,
                "message": "; ".join(messages),
                "need": next((o["need"] for o in deciding if o.get("need")), None),
                "option": next((o["option"] for o in deciding if o.get("option")), None),
                "blocked_by": next((o["blocked_by"] for o in deciding if o.get("blocked_by")), None),
                "incomplete": status is Status.SKIPPED and any(o.get("incomplete") for o in deciding),
                "baseline": None,
                "checks": sorted({o["nodeid"] for o in mine if o["nodeid"]}),
                "duration_s": round(sum(o["duration_s"] for o in mine), 4),
                "evidence": _keep_ends(evidence, MAX_EVIDENCE_PER_RULE),
                "evidence_dropped": max(0, len(evidence) - MAX_EVIDENCE_PER_RULE),
            }
        )
    return results


def _keep_ends(evidence: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The first exchanges set the scene, the last ones usually decide the verdict: keep both ends."""
    if len(evidence) <= limit:
        return evidence
    head = limit // 4
    return evidence[:head] + evidence[len(evidence) - (limit - head) :]


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"total": len(results)}
    for status in Status:
        summary[status.value] = sum(1 for r in results if r["status"] == status.value)
    by_suite: dict[str, dict[str, int]] = {}
    for result in results:
        counts = by_suite.setdefault(result["suite"], {s.value: 0 for s in Status})
        counts[result["status"]] += 1
    summary["by_suite"] = by_suite
    return summary


ACCEPTED, PASSED_LOCALLY, NOT_ACCEPTED, INCOMPLETE = "ACCEPTED", "PASSED LOCALLY", "NOT ACCEPTED", "INCOMPLETE"


def missing_parts(results: list[dict[str, Any]]) -> list[str]:
    """What kept the run from reaching its targets: needs marked incomplete (no account linked, no API key, no
    publisher) and rules blocked by a prerequisite this run did not decide (so nothing failed to explain them)."""
    failed = {r["rule"] for r in results if r["status"] in ("failed", "warning", "error")}
    missing: list[str] = []
    unexplained: dict[str, list[str]] = {}  # blocker -> the rules it blocks
    for result in results:
        if result.get("incomplete") and result.get("need"):
            option = f" ({result['option']})" if result.get("option") else ""
            missing.append(f"{result['need']}{option}")
        elif result["status"] == Status.BLOCKED.value and result.get("blocked_by") is None:
            # No prerequisite: the target throttled the harness beyond --max-throttle-wait (issue 13).
            unexplained.setdefault("", []).append(result["rule"])
        elif result["status"] == Status.BLOCKED.value and result.get("blocked_by") not in failed:
            unexplained.setdefault(str(result.get("blocked_by")), []).append(result["rule"])
    for blocker, rules in unexplained.items():
        listed = ", ".join(rules[:4]) + (" …" if len(rules) > 4 else "")
        if blocker:
            missing.append(f"{len(rules)} rule(s) blocked by {blocker}, which did not fail in this run ({listed})")
        else:
            missing.append(
                f"{len(rules)} rule(s) blocked: the target throttled the harness beyond --max-throttle-wait ({listed})"
            )
    return list(dict.fromkeys(missing))


def verdict(
    results: list[dict[str, Any]],
    *,
    strict: bool,
    other_failures: int = 0,
    local: bool = False,
    allow_incomplete: bool = False,
) -> dict[str, Any]:
    """ACCEPTED only when no MUST rule failed (nor a SHOULD with strict), nothing errored, no stale baseline, and
    the run reached every target it was given (else INCOMPLETE, unless ``allow_incomplete``). A loopback run
    (``local``: transport not judged) that would be accepted is PASSED LOCALLY: exit 0, but ``accepted`` false."""
    blocking: list[str] = []
    stale: list[str] = []
    for result in results:
        if result["baseline"] == "expected":
            continue
        if result["baseline"] == "stale":
            stale.append(result["rule"])
        elif result["status"] in (Status.FAILED.value, Status.ERROR.value) or (
            strict and result["status"] == Status.WARNING.value
        ):
            blocking.append(result["rule"])
    reasons = []
    if blocking:
        reasons.append(
            f"{len(blocking)} rule(s) failed: {', '.join(blocking[:8])}" + (" …" if len(blocking) > 8 else "")
        )
    if stale:
        reasons.append(f"stale baseline entries now pass: {', '.join(stale)}")
    if other_failures:
        reasons.append(f"{other_failures} other test(s) failed")
    decided = sum(1 for r in results if r["status"] in ("passed", "warning"))
    missing = missing_parts(results)
    if reasons:
        status = NOT_ACCEPTED
    elif not decided:
        status = INCOMPLETE
        reasons.append("no rule could be decided (everything skipped or blocked)")
        if missing:
            reasons.append("missing: " + "; ".join(missing))
    elif missing and not allow_incomplete:
        status = INCOMPLETE
        reasons.append("missing: " + "; ".join(missing))
    else:
        status = PASSED_LOCALLY if local else ACCEPTED
        reasons.append(f"no MUST rule failed ({decided} rule(s) decided)")
        if local:
            reasons.append("transport not judged: loopback run (--allow-insecure-loopback)")
        if missing:
            reasons.append("incomplete, allowed by --allow-incomplete: " + "; ".join(missing))
    return {
        "accepted": status == ACCEPTED,
        "status": status,
        "exit_code": 0 if status in (ACCEPTED, PASSED_LOCALLY) else 1,
        "reason": "; ".join(reasons),
        "missing": missing,
    }
