"""A fleet's report: one row per named target (its verdict, URLs and counts) and the overall verdict; merging the
reports of shards (CI matrix jobs, each certifying one or more targets) into one (``conformance merge``).

The overall verdict is the worst row's: NOT ACCEPTED over INCOMPLETE over PASSED LOCALLY over ACCEPTED, so a fleet
is ACCEPTED only when every target is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance._exceptions import ConformanceError
from conformance.report.model import (
    ACCEPTED,
    INCOMPLETE,
    NOT_ACCEPTED,
    PASSED_LOCALLY,
    RuleResult,
    RunReport,
    RunVerdict,
    Throttle,
    summarize,
    verdict,
)

_RANK = {NOT_ACCEPTED: 0, INCOMPLETE: 1, PASSED_LOCALLY: 2, ACCEPTED: 3}


@dataclass(frozen=True)
class FleetRow:
    """One named target of a fleet: its verdict, its URLs by target kind, its counts."""

    name: str
    verdict: RunVerdict
    targets: Mapping[str, str] = field(default_factory=dict)  # kind -> URL (credentials redacted)
    summary: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "verdict": self.verdict.to_json(),
            "targets": {kind: {"url": url} for kind, url in self.targets.items()},
            "summary": dict(self.summary),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FleetRow:
        targets = {kind: info["url"] for kind, info in (data.get("targets") or {}).items()}
        return cls(data["name"], RunVerdict.from_json(data["verdict"]), targets, dict(data.get("summary") or {}))


def fleet_rows(
    results: Sequence[RuleResult],
    names: Sequence[str],
    targets: Mapping[str, str],
    *,
    strict: bool,
    config: Mapping[str, Any],
) -> tuple[FleetRow, ...]:
    """Each named target's row: the run's verdict rules applied to its results alone."""
    rows = []
    for name in names:
        mine = [r for r in results if r.target_name == name]
        decided = verdict(
            mine,
            strict=strict,
            local=bool(config.get("allow_insecure_loopback")),
            allow_incomplete=bool(config.get("allow_incomplete")),
        )
        urls = {key.split("/", 1)[1]: url for key, url in targets.items() if key.split("/", 1)[0] == name}
        rows.append(FleetRow(name, decided, urls, summarize(mine)))
    return tuple(rows)


def fleet_verdict(rows: Sequence[FleetRow], other_failures: int = 0) -> RunVerdict:
    """The fleet's verdict: the worst of its targets' (and NOT ACCEPTED when other tests failed)."""
    if not rows:
        return RunVerdict(INCOMPLETE, "no named target was certified")
    status = min((row.verdict.status for row in rows), key=lambda s: _RANK.get(s, 0))
    reasons = [f"{len(rows)} target(s): " + ", ".join(f"{row.name} {row.verdict.status}" for row in rows)]
    if other_failures:
        status = NOT_ACCEPTED
        reasons.append(f"{other_failures} other test(s) failed")
    missing = tuple(f"{row.name}: {item}" for row in rows for item in row.verdict.missing)
    return RunVerdict(status, "; ".join(reasons), missing)


class MergeError(ConformanceError):
    """Shards that cannot be merged into one report (the message says which and why, on one line)."""


def merge_reports(shards: Sequence[tuple[str, RunReport]], sources: Sequence[str] = ()) -> RunReport:
    """One fleet report from shards (label, report), in their order. A report of a single target without a fleet
    row becomes the row named by its label. The same named target in two shards is refused (which would win?).
    ``sources`` name the shards in messages (their files), by default their labels."""
    if not shards:
        raise MergeError("merge: nothing to merge")
    rows: list[FleetRow] = []
    results: list[RuleResult] = []
    targets: dict[str, str] = {}
    seen: dict[str, str] = {}
    strictness = {bool(report.config.get("strict")) for _, report in shards}
    if len(strictness) > 1:
        raise MergeError("merge: the shards were judged with and without --strict: their verdicts do not compare")
    for number, (label, report) in enumerate(shards):
        source = sources[number] if number < len(sources) else label
        mine = report.fleet or (FleetRow(label, report.verdict, dict(report.targets), report.summary),)
        for row in mine:
            if row.name in seen:
                raise MergeError(f"merge: target {row.name!r} is in both {seen[row.name]} and {source}")
            seen[row.name] = source
        rows += mine
        if report.fleet:
            results += report.results
            targets |= report.targets
        else:
            results += [dataclasses.replace(r, target_name=label) for r in report.results]
            targets |= {f"{label}/{kind}": url for kind, url in report.targets.items()}
    first = shards[0][1]
    throttles = [report.throttle for _, report in shards if report.throttle is not None]
    suites = sorted({s for _, report in shards for s in report.config.get("suites") or ()})
    return RunReport(
        verdict=fleet_verdict(rows),
        results=tuple(results),
        harness_version=first.harness_version,
        harness_name=first.harness_name,
        started_at=min((r.started_at for _, r in shards if r.started_at), default=""),
        finished_at=max((r.finished_at for _, r in shards if r.finished_at), default=""),
        duration_s=max(r.duration_s for _, r in shards),  # shards run side by side: the longest is the wall time
        config=dict(first.config) | {"suites": suites, "merged_from": list(sources) or [label for label, _ in shards]},
        targets=targets,
        throttle=Throttle(
            waited_s=sum(t.waited_s for t in throttles),
            max_wait_s=max(t.max_wait_s for t in throttles),
            blocked_checks=sum(t.blocked_checks for t in throttles),
        )
        if throttles
        else None,
        fleet=tuple(rows),
    )
