"""Merging the reports of shards (CI matrix jobs, each certifying one or more targets) into one fleet report
(``conformance merge``). A fleet's rows and its verdict (the worst row's) belong to the result model
(:mod:`conformance.report.model`): every report, merged or not, builds them the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from conformance.core._exceptions import ConformanceError
from conformance.report.model import FleetRow, RuleResult, RunReport, Throttle, fleet_rows, fleet_verdict

__all__ = ["FleetRow", "MergeError", "fleet_rows", "fleet_verdict", "merge_reports"]


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
        throttle=Throttle.of_parts(report.throttle for _, report in shards),
        fleet=tuple(rows),
    )
