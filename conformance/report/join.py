"""The reports of one run whose targets were certified by processes of their own (``conformance demo``: one pytest
process per kind of target) joined into the reports one process would have written: report.json's results in
catalog order under a verdict reached anew, report.har's entries by their start, junit.xml's cases in one suite.

Unlike :mod:`conformance.report.fleet` (shards that each certified a named target of a fleet, each keeping its own
row and verdict), the parts here are disjoint kinds of target of one run: no part names a target another names.
Every part was written scrubbed by its own run, which knew the secrets it learnt; joining decodes nothing, so it
shows nothing a part did not show.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.core._exceptions import ConformanceError
from conformance.core.rules import RULES
from conformance.report.har import write_document
from conformance.report.model import (
    INCOMPLETE,
    NOT_ACCEPTED,
    RunReport,
    RunVerdict,
    Throttle,
    verdict,
    within_budget,
)

__all__ = ["JoinError", "join_har", "join_junit", "join_reports"]

_RULE_ORDER = {rule_id: n for n, rule_id in enumerate(RULES)}
# A part's verdict its results alone do not explain (its run was interrupted, another test of it failed) weighs on
# the joined one: the worse of these statuses wins.
_WORSE = (INCOMPLETE, NOT_ACCEPTED)


class JoinError(ConformanceError):
    """Parts that are not of one run (the message says which and why, on one line)."""


def join_reports(parts: Sequence[RunReport]) -> RunReport:
    """One run's report from the reports of its parts, each of other targets: results in catalog order (as one
    process's aggregate lists them), the run's bound on report bodies applied to all of them, the verdict reached
    again from every result. A part whose own verdict differs from what its results alone give (its run was
    interrupted, a test of its own failed) keeps that verdict's reason in the joined one, at its severity."""
    if not parts:
        raise JoinError("join: no report to join")
    if any(part.fleet for part in parts):
        raise JoinError("join: a fleet report is a run of its own (conformance merge joins fleets)")
    named: dict[str, int] = {}
    for number, part in enumerate(parts):
        for target in part.targets:
            if target in named:
                raise JoinError(f"join: target {target!r} is in parts {named[target] + 1} and {number + 1}")
            named[target] = number
    strictness = {bool(part.config.get("strict")) for part in parts}
    if len(strictness) > 1:
        raise JoinError("join: the parts were judged with and without --strict: their verdicts do not compare")
    config: dict[str, Any] = {}
    for part in parts:
        config |= part.config
    config["suites"] = sorted({s for part in parts for s in part.config.get("suites") or ()})
    judge = functools.partial(
        verdict,
        strict=strictness.pop(),
        local=bool(config.get("allow_insecure_loopback")),
        allow_incomplete=bool(config.get("allow_incomplete")),
    )
    results = sorted((r for part in parts for r in part.results), key=lambda r: _RULE_ORDER.get(r.rule, len(RULES)))
    results = within_budget(results)
    decided = judge(results)
    unexplained = [part.verdict for part in parts if part.verdict != judge(part.results)]
    if unexplained:
        statuses = {v.status for v in unexplained} | {decided.status}
        status = next((s for s in _WORSE if s in statuses), decided.status)
        reasons = [v.reason for v in unexplained] + [decided.reason]
        missing = tuple(dict.fromkeys(m for v in [*unexplained, decided] for m in v.missing))
        decided = RunVerdict(status, "; ".join(dict.fromkeys(reasons)), missing)
    first = parts[0]
    return dataclasses.replace(
        first,
        verdict=decided,
        results=tuple(results),
        started_at=min((p.started_at for p in parts if p.started_at), default=""),
        finished_at=max((p.finished_at for p in parts if p.finished_at), default=""),
        duration_s=max(p.duration_s for p in parts),  # the parts ran side by side: the longest is the wall time
        config=config,
        targets={name: url for part in parts for name, url in part.targets.items()},
        throttle=Throttle.of_parts(part.throttle for part in parts),
    )


def join_har(parts: Sequence[Mapping[str, Any]], path: Path) -> None:
    """One report.har of the parts' HAR documents (each already scrubbed by its run): every entry, ordered by
    start as one run's are (stable: a part's own order within a stamp)."""
    if not parts:
        raise JoinError("join: no HAR to join")
    log = dict(parts[0]["log"])
    log["entries"] = sorted((e for d in parts for e in d["log"]["entries"]), key=lambda e: e["startedDateTime"])
    write_document({"log": log}, path)


_COUNTS = ("tests", "errors", "failures", "skipped")


def join_junit(parts: Sequence[Path], path: Path) -> None:
    """One junit.xml of the parts' (pytest's, each already scrubbed by its run): one test suite holding every part's
    cases and properties, its counts the sums, its time the longest part's (they ran side by side), its timestamp
    the earliest."""
    suites = []
    for part in parts:
        root = ET.parse(part).getroot()
        suites += [root] if root.tag == "testsuite" else root.findall("testsuite")
    if not suites:
        raise JoinError("join: no JUnit test suite to join")
    joined = ET.Element("testsuite", dict(suites[0].attrib))
    for count in _COUNTS:
        joined.set(count, str(sum(int(s.get(count) or 0) for s in suites)))
    joined.set("time", f"{max(float(s.get('time') or 0) for s in suites):.3f}")
    stamps = [s.get("timestamp") for s in suites if s.get("timestamp")]
    if stamps:
        joined.set("timestamp", min(str(stamp) for stamp in stamps))
    properties: list[ET.Element] = []
    for suite in suites:
        found = suite.find("properties")
        properties += list(found) if found is not None else []
    if properties:
        ET.SubElement(joined, "properties").extend(properties)
    for suite in suites:
        joined.extend(child for child in suite if child.tag != "properties")
    root = ET.Element("testsuites")
    root.append(joined)
    _replace(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))


def _replace(path: Path, data: bytes) -> None:
    """``path`` written whole or not at all (a viewer never opens half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
