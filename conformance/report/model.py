"""The result model: what one check concluded, and one result per rule per target built from those.

Checks produce :class:`CheckOutcome` (plain dicts on the wire, so pytest-xdist can carry them); the session
aggregates them into :class:`RuleResult` and a :class:`RunReport`, which every writer renders. Evidence stays the
report's JSON exchange dicts (:data:`ExchangeJSON`). No pytest here: ``conformance report`` re-renders without it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any, ClassVar, Protocol

from conformance.core.rules import HARNESS_RULES, RULES, SUITE_TARGET
from conformance.core.rules import Status as Status  # re-exported: the report's words, defined beside Level
from conformance.core.rules import level_status as level_status

ExchangeJSON = dict[str, Any]  # one recorded exchange as report.json holds it


class Baseline(Protocol):
    """Expected failures applied to a run's results (``report/baseline.py`` builds them from a file)."""

    @property
    def source(self) -> str | None: ...

    def apply(self, results: Iterable[RuleResult]) -> list[RuleResult]: ...


# Bytes (UTF-8, as JSON) of exchange bodies report.json holds, spent on the most severe results first: every exchange
# of the run is in the report, and past this budget an exchange keeps its metadata only (``omitted``: its key
# headers, its bodies' length and digest). A normal run's evidence fits whole (docs/performance.md: every suite
# against the reference stack); a hostile target's is bounded.
REPORT_BODY_BYTES = 1_600_000


# When several checks decide one rule, the first status here that occurs wins.
STATUS_PRECEDENCE = (
    Status.ERROR,
    Status.FAILED,
    Status.WARNING,
    Status.BLOCKED,
    Status.PASSED,
    Status.SKIPPED,
)


@dataclass(frozen=True)
class CheckOutcome:
    """What one check concluded about the rules it decides."""

    nodeid: str
    rules: tuple[str, ...]
    status: Status
    message: str = ""
    need: str | None = None
    option: str | None = None
    blocked_by: str | None = None
    evidence: tuple[ExchangeJSON, ...] = ()
    duration_s: float = 0.0
    incomplete: bool = False  # the need kept the run from reaching its target (see ``verdict``)
    throttled: bool = False  # blocked because the target throttled the harness
    target_name: str | None = None  # the named target of a fleet run ("fleets" in conformance/config.py)
    cases: tuple[dict[str, Any], ...] = ()  # the cases of the rules' tables (``AttackRun.records``)

    def to_json(self) -> dict[str, Any]:
        """Plain data, as pytest-xdist carries it from a worker to the controller."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}  # not asdict: no deep copy of the evidence
        data |= {"rules": list(self.rules), "status": self.status.value, "evidence": list(self.evidence)}
        data["cases"] = list(self.cases)
        data["duration_s"] = round(self.duration_s, 4)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckOutcome:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values.update(rules=tuple(data["rules"]), status=Status(data["status"]))
        values["evidence"] = tuple(data.get("evidence") or ())
        values["cases"] = tuple(data.get("cases") or ())
        return cls(**values)


@dataclass(frozen=True)
class RuleResult:
    """One rule's verdict on one target, with the catalog's words and the evidence of the checks that decided it."""

    rule: str
    target: str
    suite: str
    level: str
    status: Status
    title: str
    text: str
    source: str
    message: str = ""
    target_url: str | None = None
    document: str | None = None
    need: str | None = None
    option: str | None = None
    blocked_by: str | None = None
    incomplete: bool = False
    baseline: str | None = None  # "expected" or "stale" when a baseline entry names it
    checks: tuple[str, ...] = ()
    duration_s: float = 0.0
    evidence: tuple[ExchangeJSON, ...] = ()
    evidence_dropped: int = 0  # in reports of older versions only, which kept a bounded count of exchanges per rule
    target_name: str | None = None  # the named target of a fleet run; report.json has the key only then
    # The cases the rule's table tried, each with the numbers (1-based) of its exchanges in ``evidence``;
    # report.json has the key only for a rule with a table.
    cases: tuple[dict[str, Any], ...] = ()

    # report.json's key order (a diff between runs reads better when it never changes)
    _ORDER: ClassVar[tuple[str, ...]] = (
        *("rule", "target_name", "target", "target_url", "suite", "level", "status", "title", "text", "source"),
        *("document",),
        *("message", "need", "option", "blocked_by", "incomplete", "baseline", "checks", "duration_s"),
        *("cases", "evidence", "evidence_dropped"),
    )

    @classmethod
    def for_rule(cls, rule_id: str, status: Status, **values: Any) -> RuleResult:
        """A result for a catalog rule: its target, suite, level and words from the catalog."""
        rule = RULES[rule_id]
        catalog: dict[str, Any] = {"target": SUITE_TARGET[rule.suite], "suite": rule.suite, "level": rule.level.value}
        catalog |= {"title": rule.title, "text": rule.text, "source": rule.source, "document": rule.document}
        return cls(rule=rule_id, status=status, **(catalog | values))

    @property
    def where(self) -> str:
        """The target kind, prefixed by the named target in a fleet (``acme/platform``)."""
        return f"{self.target_name}/{self.target}" if self.target_name else self.target

    def to_json(self) -> dict[str, Any]:
        # written only when there are some
        optional = {"target_name": self.target_name, "cases": self.cases, "evidence_dropped": self.evidence_dropped}
        data = {name: getattr(self, name) for name in self._ORDER if optional.get(name, True)}
        if self.cases:
            data["cases"] = [dict(case) for case in self.cases]
        return data | {"status": self.status.value, "checks": list(self.checks), "evidence": list(self.evidence)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RuleResult:
        values = {k: v for k, v in data.items() if k in cls._ORDER}
        values.update(status=Status(data["status"]), checks=tuple(data["checks"]), evidence=tuple(data["evidence"]))
        values["cases"] = tuple(data.get("cases") or ())
        return cls(**values)


def aggregate(
    outcomes: Iterable[CheckOutcome],
    *,
    unimplemented_suites: Iterable[str] = (),
    implemented: Iterable[str] = (),
    targets: Mapping[str, str] | None = None,
) -> list[RuleResult]:
    """One result per rule per target, in catalog order.

    ``unimplemented_suites``: suites that ran; their rules with no check at all are reported as skipped so that a
    reviewer sees what this harness version does not decide (never a silent pass).
    """
    by_name: dict[str | None, dict[str, list[CheckOutcome]]] = {}  # a fleet run's named targets, else {None: ...}
    for outcome in outcomes:
        for rule_id in outcome.rules:
            by_name.setdefault(outcome.target_name, {}).setdefault(rule_id, []).append(outcome)
    implemented_set = set(implemented)
    results: list[RuleResult] = []
    for name, grouped in by_name.items() or [(None, {})]:
        for suite in unimplemented_suites:
            for rule in RULES.values():
                if rule.suite == suite and rule.id not in grouped and rule.id not in implemented_set:
                    grouped[rule.id] = [_no_check(rule.id, name)]
        results += [_rule_result(rule_id, grouped[rule_id], targets or {}) for rule_id in RULES if rule_id in grouped]
    return results


def _no_check(rule_id: str, target_name: str | None = None) -> CheckOutcome:
    harness = rule_id in HARNESS_RULES
    return CheckOutcome(
        target_name=target_name,
        nodeid="",
        rules=(rule_id,),
        status=Status.SKIPPED,
        message=HARNESS_RULES.get(rule_id, "no check for this rule in this harness version"),
        need="the harness's own test suite" if harness else "a check in this harness version",
    )


def _rule_result(rule_id: str, mine: list[CheckOutcome], targets: Mapping[str, str]) -> RuleResult:
    """The rule's result from the checks that decided it: the worst status wins, with its messages and needs."""
    status = next(s for s in STATUS_PRECEDENCE if any(o.status is s for o in mine))
    deciding = [o for o in mine if o.status is status]
    evidence = [e for o in mine for e in o.evidence]
    target, name = SUITE_TARGET[RULES[rule_id].suite], mine[0].target_name
    return RuleResult.for_rule(
        rule_id,
        status,
        target_name=name,
        target_url=targets.get(f"{name}/{target}" if name else target),
        message="; ".join(dict.fromkeys(o.message for o in deciding if o.message)),
        need=next((o.need for o in deciding if o.need), None),
        option=next((o.option for o in deciding if o.option), None),
        blocked_by=next((o.blocked_by for o in deciding if o.blocked_by), None),
        incomplete=status is Status.SKIPPED and any(o.incomplete for o in deciding),
        checks=tuple(sorted({o.nodeid for o in mine if o.nodeid})),
        duration_s=round(sum(o.duration_s for o in mine), 4),
        evidence=tuple(evidence),
        cases=_cases_of(rule_id, mine, evidence),
    )


def _cases_of(rule_id: str, mine: list[CheckOutcome], evidence: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The rule's case records, each with the numbers of its exchanges in the rule's evidence."""
    cases = []
    for case in (c for o in mine for c in o.cases if c.get("rule") == rule_id):
        numbers = [n for n, exchange in enumerate(evidence, 1) if exchange.get("case") == case.get("case")]
        cases.append({k: v for k, v in case.items() if k != "rule"} | {"exchanges": numbers})
    return tuple(cases)


def within_budget(
    results: Sequence[RuleResult], budget: int = REPORT_BODY_BYTES, reason: str | None = None
) -> list[RuleResult]:
    """``results`` with their exchanges' bodies spent from ``budget`` (bytes), the most severe results first and
    each result's exchanges in order: past it, an exchange keeps its metadata only (``omitted``, with ``reason``).
    Every exchange stays; an exchange without bodies costs nothing."""
    try:
        return _within_budget(results, budget, reason)
    finally:
        _json_bytes.cache_clear()  # nothing of a report outlives its weighing


def _within_budget(results: Sequence[RuleResult], budget: int, reason: str | None) -> list[RuleResult]:
    from conformance.host.exchange import BUDGET_SPENT, body_size, without_details

    left = budget
    changed: dict[int, RuleResult] = {}
    for index in sorted(range(len(results)), key=lambda i: STATUS_PRECEDENCE.index(results[i].status)):
        result = results[index]
        evidence = list(result.evidence)
        slimmed = False
        for n, exchange in enumerate(evidence):
            if "omitted" in exchange:
                continue
            size = _body_bytes(exchange) if left or not body_size(exchange) else 1  # (spent: no need to weigh)
            if size <= left:
                left -= size
            else:
                left = 0  # spent: later (less severe) exchanges keep their metadata only
                evidence[n], slimmed = without_details(exchange, reason or BUDGET_SPENT), True
        if slimmed:
            changed[index] = dataclasses.replace(result, evidence=tuple(evidence))
    return [changed.get(i, r) for i, r in enumerate(results)]


def _body_bytes(exchange: Mapping[str, Any]) -> int:
    """The bytes of the exchange's bodies as report.json holds them: ``[request, response]`` in JSON."""
    bodies = [exchange.get("request_body"), exchange.get("response_body")]
    if bodies == [None, None]:
        return 0
    if all(body is None or type(body) is str for body in bodies):  # "[", ", " and "]" around each one's JSON
        return 4 + _json_bytes(bodies[0]) + _json_bytes(bodies[1])
    return len(json.dumps(bodies, ensure_ascii=False).encode("utf-8", "surrogatepass"))


@functools.lru_cache(maxsize=4096)  # a run's evidence repeats most of its bodies (the same document, the same error)
def _json_bytes(body: str | None) -> int:
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def summarize(results: Sequence[RuleResult]) -> dict[str, Any]:
    summary: dict[str, Any] = {"total": len(results)}
    for status in Status:
        summary[status.value] = sum(1 for r in results if r.status is status)
    by_suite: dict[str, dict[str, int]] = {}
    for result in results:
        counts = by_suite.setdefault(result.suite, {s.value: 0 for s in Status})
        counts[result.status.value] += 1
    summary["by_suite"] = by_suite
    return summary


ACCEPTED, PASSED_LOCALLY, NOT_ACCEPTED, INCOMPLETE = "ACCEPTED", "PASSED LOCALLY", "NOT ACCEPTED", "INCOMPLETE"
_FAILING = (Status.FAILED, Status.WARNING, Status.ERROR)
SLOW = "\x00slow"  # missing_parts' key for the rules a time budget blocked


def missing_parts(results: Sequence[RuleResult]) -> list[str]:
    """What kept the run from reaching its targets: needs marked incomplete (no account linked, no API key, no
    publisher) and rules blocked by a prerequisite this run did not decide (so nothing failed to explain them)."""
    failed = {r.rule for r in results if r.status in _FAILING}
    missing: list[str] = []
    unexplained: dict[str, list[str]] = {}  # blocker -> the rules it blocks
    for result in results:
        if result.incomplete and result.need:
            missing.append(result.need + (f" ({result.option})" if result.option else ""))
        elif result.status is Status.BLOCKED and result.blocked_by is None:
            # No prerequisite: the target was too slow for a time budget, or throttled the harness beyond
            # --max-throttle-wait.
            slow = (result.message or "").startswith("target too slow")
            unexplained.setdefault(SLOW if slow else "", []).append(result.rule)
        elif result.status is Status.BLOCKED and result.blocked_by not in failed:
            unexplained.setdefault(str(result.blocked_by), []).append(result.rule)
    for blocker, rules in unexplained.items():
        listed = ", ".join(rules[:4]) + (" …" if len(rules) > 4 else "")
        if blocker == SLOW:
            missing.append(f"{len(rules)} rule(s) blocked: the target was too slow for the time budget ({listed})")
        elif blocker:
            missing.append(f"{len(rules)} rule(s) blocked by {blocker}, which did not fail in this run ({listed})")
        else:
            missing.append(
                f"{len(rules)} rule(s) blocked: the target throttled the harness beyond --max-throttle-wait ({listed})"
            )
    return list(dict.fromkeys(missing))


@dataclass(frozen=True)
class RunVerdict:
    """The run's verdict: ACCEPTED, PASSED LOCALLY, NOT ACCEPTED or INCOMPLETE, and why."""

    status: str
    reason: str
    missing: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED

    @property
    def exit_code(self) -> int:
        return 0 if self.status in (ACCEPTED, PASSED_LOCALLY) else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "status": self.status,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "missing": list(self.missing),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunVerdict:
        status = data.get("status") or (ACCEPTED if data["accepted"] else NOT_ACCEPTED)  # before format 1.1
        return cls(str(status), str(data["reason"]), tuple(data.get("missing") or ()))


def verdict(
    results: Sequence[RuleResult],
    *,
    strict: bool,
    other_failures: int = 0,
    local: bool = False,
    allow_incomplete: bool = False,
    interrupted: str | None = None,
) -> RunVerdict:
    """ACCEPTED only when no MUST rule failed (nor a SHOULD with strict), nothing errored, no stale baseline, and
    the run reached every target it was given (else INCOMPLETE, unless ``allow_incomplete``), and it was not
    ``interrupted`` (a signal, the run's time budget: INCOMPLETE, whatever was decided). A loopback run
    (``local``: transport not judged) that would be accepted is PASSED LOCALLY: exit 0, but ``accepted`` false."""
    blocking = [
        r.rule
        for r in results
        if r.baseline is None and (r.status in (Status.FAILED, Status.ERROR) or (strict and r.status is Status.WARNING))
    ]
    stale = [r.rule for r in results if r.baseline == "stale"]
    reasons = []
    if blocking:
        reasons.append(
            f"{len(blocking)} rule(s) failed: {', '.join(blocking[:8])}" + (" …" if len(blocking) > 8 else "")
        )
    if stale:
        reasons.append(f"stale baseline entries now pass: {', '.join(stale)}")
    if other_failures:
        reasons.append(f"{other_failures} other test(s) failed")
    decided = sum(1 for r in results if r.status in (Status.PASSED, Status.WARNING))
    missing = missing_parts(results)
    if interrupted:  # whatever was decided, the run did not get to the end of its checks
        status = INCOMPLETE
        reasons.insert(0, f"{interrupted}: the run stopped before its end ({len(results)} rule(s) reported)")
    elif reasons:
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
    return RunVerdict(status, "; ".join(reasons), tuple(missing))


@dataclass(frozen=True)
class Throttle:
    """Waits for the targets' rate limits: seconds waited in all, the run's bound, checks blocked by throttling."""

    waited_s: float
    max_wait_s: float
    blocked_checks: int

    @classmethod
    def of_parts(cls, throttles: Iterable[Throttle | None]) -> Throttle | None:
        """The waits of runs' parts (shards, the demo's runs) in one: seconds waited and checks blocked summed, the
        largest bound; None when no part reported its waits."""
        known = [t for t in throttles if t is not None]
        if not known:
            return None
        return cls(
            waited_s=sum(t.waited_s for t in known),
            max_wait_s=max(t.max_wait_s for t in known),
            blocked_checks=sum(t.blocked_checks for t in known),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "waited_s": round(self.waited_s, 3),
            "max_wait_s": self.max_wait_s,
            "blocked_checks": self.blocked_checks,
        }


def format_duration(seconds: Any) -> str:
    """Seconds in words (milliseconds under a second, tenths of a second under two minutes, then minutes and seconds);
    empty for anything that is not a finite number."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not math.isfinite(seconds):
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def throttle_summary(throttle: Throttle | None) -> str:
    """The run's waits for targets' rate limits, in words ('' when the report has none to tell)."""
    if throttle is None:
        return ""
    blocked = throttle.blocked_checks
    text = f"{format_duration(throttle.waited_s) or '0 s'} waiting for the targets' rate limits"
    text += f" (bound {format_duration(throttle.max_wait_s)})"
    if blocked:
        text += f"; {blocked} check{'s' if blocked != 1 else ''} blocked: the target throttled the harness"
    return text


class InvalidReport(ValueError):
    """A report.json that does not follow the shipped schema (the message says where)."""


@dataclass(frozen=True)
class RunReport:
    """One run: its verdict, its configuration and targets, and one result per rule per target (report.json)."""

    verdict: RunVerdict
    results: tuple[RuleResult, ...]
    harness_version: str = "unknown"
    harness_name: str = "conformance"
    started_at: str = ""
    finished_at: str = ""
    duration_s: float = 0.0
    config: Mapping[str, Any] = field(default_factory=dict)
    targets: Mapping[str, str] = field(default_factory=dict)  # name -> URL (credentials redacted)
    throttle: Throttle | None = None
    format: int = 1
    fleet: tuple[FleetRow, ...] = ()  # a fleet run: one row per named target (conformance/report/fleet.py)

    @property
    def summary(self) -> dict[str, Any]:
        return summarize(self.results)

    @classmethod
    def build(
        cls,
        outcomes: Iterable[CheckOutcome],
        *,
        strict: bool,
        suites_run: Iterable[str],
        implemented: Iterable[str],
        targets: Mapping[str, str],
        baseline: Baseline | None = None,
        other_failures: int = 0,
        config: Mapping[str, Any] | None = None,
        fleet: Sequence[str] = (),
        interrupted: str | None = None,
        **run: Any,  # harness_version, started_at, finished_at, duration_s, throttle
    ) -> RunReport:
        """The run's report from its checks' outcomes: aggregated per rule and target, the baseline applied, the
        verdict reached. ``config`` holds the run's public settings (allow_insecure_loopback, allow_incomplete...)."""
        config = dict(config or {})
        results = aggregate(outcomes, unimplemented_suites=sorted(suites_run), implemented=implemented, targets=targets)
        results = within_budget(results)
        if baseline is not None:
            results = baseline.apply(results)
        decided = verdict(
            results,
            strict=strict,
            other_failures=other_failures,
            local=bool(config.get("allow_insecure_loopback")),
            allow_incomplete=bool(config.get("allow_incomplete")),
            interrupted=interrupted,
        )
        rows: tuple[FleetRow, ...] = ()
        if fleet:
            rows = fleet_rows(results, fleet, targets, strict=strict, config=config)
            decided = fleet_verdict(rows, other_failures)
            if interrupted:
                decided = RunVerdict(INCOMPLETE, f"{interrupted}; {decided.reason}", decided.missing)
        config = {
            "strict": strict,
            "expected_failures": baseline.source if baseline is not None else None,
            "suites": sorted(suites_run),
        } | config
        return cls(verdict=decided, results=tuple(results), config=config, targets=dict(targets), fleet=rows, **run)

    def to_json(self) -> dict[str, Any]:
        """report.json's content (follows conformance/schemas/report.schema.json)."""
        data: dict[str, Any] = {
            "format": self.format,
            "harness": {"name": self.harness_name, "version": self.harness_version},
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": self.duration_s,
            "verdict": self.verdict.to_json(),
            "config": dict(self.config),
            "targets": {name: {"url": url} for name, url in self.targets.items()},
            "summary": self.summary,
        }
        if self.throttle is not None:
            data["throttle"] = self.throttle.to_json()
        if self.fleet:
            data["fleet"] = [row.to_json() for row in self.fleet]
        return data | {"results": [r.to_json() for r in self.results]}

    @classmethod
    def from_json(cls, data: Any, *, validate: bool = True) -> RunReport:
        """A report read back (``conformance report``, ``summary``, ``diff``): checked against the shipped schema
        first, so every writer can trust its shape. Raises :class:`InvalidReport`."""
        if validate:
            _validate(data)
        harness, throttle = data["harness"], data.get("throttle")
        return cls(
            verdict=RunVerdict.from_json(data["verdict"]),
            results=tuple(RuleResult.from_json(r) for r in data["results"]),
            harness_name=harness["name"],
            harness_version=harness["version"],
            started_at=data["started_at"],
            finished_at=data["finished_at"],
            duration_s=data["duration_s"],
            config=dict(data["config"]),
            targets={name: info["url"] for name, info in data["targets"].items()},
            throttle=Throttle(**throttle) if throttle is not None else None,
            format=data["format"],
            fleet=tuple(FleetRow.from_json(row) for row in data.get("fleet") or ()),
        )

    def scrubbed(self, scrub_tree: Callable[[Any], Any]) -> RunReport:
        """The same report with ``scrub_tree`` (a redactor's) applied to everything in it."""
        return RunReport.from_json(scrub_tree(self.to_json()), validate=False)


def report_schema() -> dict[str, Any]:
    """The shipped schema of report.json (conformance/schemas/report.schema.json)."""
    text = resources.files("conformance").joinpath("schemas/report.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _validate(data: Any) -> None:
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(report_schema()).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        raise InvalidReport(f"not a conformance report: at {where}: {error.message[:300]}")


# -- a fleet: one row per named target (conformance/report/fleet.py merges shards) ------------------------------

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
