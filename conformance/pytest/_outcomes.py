"""From a finished check to its outcome: the judge's verdict (:func:`conformance.verdict._verdicts.judge`) with the
exchanges it recorded, carried on pytest's report (xdist forwards it) and gathered on the controller."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from conformance.core import _context
from conformance.core.rules import RULES, SUITE_TARGET
from conformance.pytest._session import SESSION_KEY, ConformanceSession
from conformance.report.model import CheckOutcome, Status
from conformance.verdict._verdicts import Judgement, judge

NEED_KEY = pytest.StashKey[tuple[str, str]]()  # (need, option) of a check skipped for want of its target
STARTED = pytest.StashKey[float]()
_JUDGED = pytest.StashKey[tuple[pytest.CallInfo[None], Judgement]]()  # see judgement_of


FLEET_FIXTURE = "conformance_fleet_target"  # the parameter naming a check's target in a fleet run


def fleet_target_of(item: pytest.Item) -> str | None:
    """The named target a check certifies in a fleet run (None outside fleets)."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get(FLEET_FIXTURE) if callspec is not None else None


def judgement_of(item: pytest.Item, call: pytest.CallInfo[None], rules: Sequence[str]) -> Judgement:
    """The judge's verdict on the check from its phase ``call``, judged once: the report made ahead of pytest's
    (``plugin.pytest_runtest_makereport_without_traceback``) keeps it on the item, :func:`decide` takes it back."""
    kept = item.stash.get(_JUDGED, None)
    if kept is not None and kept[0] is call:
        return kept[1]
    state = item.config.stash[SESSION_KEY]
    record = _context.current()
    judgement = judge(
        call.excinfo.value if call.excinfo is not None else None,
        rules,
        strict=state.strict,
        notes=list(record.notes) if record else [],
        first_failure=record.first_failure if record else None,
        first_failing_exchange=record.failing_exchange if record else None,
        missing_target=item.stash.get(NEED_KEY, None),
        redact=state.redactor.scrub,
    )
    item.stash[_JUDGED] = (call, judgement)
    return judgement


def decide(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport, rules: Sequence[str]) -> None:
    """Judge the check, put its outcome on ``report`` (``report.conformance``) and make pytest's outcome agree."""
    state = item.config.stash[SESSION_KEY]
    record = _context.current()
    judgement = judgement_of(item, call, rules)
    del item.stash[_JUDGED]  # the phase's exception and its frames are not kept for the rest of the run
    evidence = list(record.exchanges) if record else []
    if judgement.failing_exchange is not None:
        evidence = _up_to_failure(evidence, judgement.failing_exchange)
    outcome = CheckOutcome(
        nodeid=item.nodeid,
        rules=tuple(rules),
        status=judgement.status,
        message=judgement.message,
        need=judgement.need,
        option=judgement.option,
        blocked_by=judgement.blocked_by,
        evidence=tuple(evidence),
        duration_s=time.monotonic() - item.stash.get(STARTED, time.monotonic()),
        incomplete=judgement.incomplete,
        throttled=judgement.throttled,
        target_name=fleet_target_of(item),
        cases=tuple(record.cases) if record else (),
    )
    report.conformance = outcome.to_json()  # type: ignore[attr-defined]
    report.user_properties = [*report.user_properties, ("conformance.status", outcome.status.value)]
    item.user_properties.append(("conformance.status", outcome.status.value))
    _agree(state, call, report, outcome)


def harness_error(item: pytest.Item, report: pytest.TestReport, rules: Sequence[str], exc: Exception) -> None:
    """The judging itself broke: a loud error verdict, never a crash of the run."""
    report.outcome = "failed"
    report.longrepr = f"conformance harness error while judging {item.nodeid}: {exc!r}"
    outcome = CheckOutcome(
        item.nodeid, tuple(rules), Status.ERROR, f"harness error: {exc!r}", target_name=fleet_target_of(item)
    )
    report.conformance = outcome.to_json()  # type: ignore[attr-defined]


def _agree(
    state: ConformanceSession, call: pytest.CallInfo[None], report: pytest.TestReport, outcome: CheckOutcome
) -> None:
    """Make pytest's own outcome agree with the verdict (:func:`keeps_traceback` says where pytest's traceback
    stays)."""
    status, message = outcome.status, outcome.message
    if _expected(state, status, outcome.rules):
        report.outcome = "skipped"
        report.wasxfail = f"expected failure (baseline): {message}"
    elif status is Status.FAILED:
        report.outcome = "failed"
        report.longrepr = f"[{', '.join(outcome.rules)}] {message}"
    elif status is Status.WARNING or (status is Status.PASSED and call.excinfo is not None):
        if call.when == "call":
            report.outcome = "passed"
            report.longrepr = None
    elif status is Status.ERROR:
        report.outcome = "failed"  # keep pytest's traceback (a harness error must be loud), scrubbed of secrets
        report.longrepr = state.redactor.scrub(str(report.longrepr))
    elif status in (Status.BLOCKED, Status.SKIPPED) and not report.skipped:
        # The host's signals (TargetThrottled, InvalidResponse of a prerequisite) are no pytest skips: say skipped
        # as Blocked and Throttled do, so -x, --lf and junit.xml see no failure.
        path, line, _ = report.location
        report.outcome = "skipped"
        report.longrepr = (path, (line or 0) + 1, f"Skipped: {message}")


def _expected(state: ConformanceSession, status: Status, rules: Sequence[str]) -> bool:
    """Whether ``status`` is a failure the run's baseline expects: a failing status, every one of ``rules`` expected
    to fail."""
    baseline = state.baseline
    return (
        status in (Status.FAILED, Status.WARNING, Status.ERROR)
        and baseline is not None
        and all(baseline.expects(r, SUITE_TARGET[RULES[r].suite]) for r in rules)
    )


def keeps_traceback(state: ConformanceSession, when: str, judgement: Judgement, rules: Sequence[str]) -> bool:
    """Whether the report of a check's phase that raised (no pytest skip) keeps pytest's traceback once it agrees
    with ``judgement`` (:func:`_agree`): a harness error's, a failure the baseline expects, a warning or an
    observation raised in a set-up. Otherwise the verdict's words, or none, take its place."""
    status = judgement.status
    if _expected(state, status, rules) or status is Status.ERROR:
        return True
    return status in (Status.WARNING, Status.PASSED) and when != "call"


def _up_to_failure(evidence: list[dict[str, Any]], failing: dict[str, Any]) -> list[dict[str, Any]]:
    """Evidence that ends with the exchange the first failure was raised on (replays after it are noise)."""
    at = next((i for i, exchange in enumerate(evidence) if exchange is failing), None)
    return [*evidence, failing] if at is None else evidence[: at + 1]


def hand_over_throttle_wait(report: pytest.TestReport) -> None:
    """Carry the running check's new throttle waits on its report (xdist forwards them to the controller)."""
    record = _context.current()
    if record is not None and record.throttle_wait_s > record.throttle_reported_s:
        report.conformance_throttle_wait_s = record.throttle_wait_s - record.throttle_reported_s  # type: ignore[attr-defined]
        record.throttle_reported_s = record.throttle_wait_s


def terminal_status(report: pytest.TestReport) -> Any:
    """How the terminal shows a check: what its verdict says (warning, blocked), not what pytest would call it."""
    result = getattr(report, "conformance", None)
    if result is None or hasattr(report, "wasxfail"):
        return None
    status = result["status"]
    if status == "warning":
        return "passed", "W", ("WARNING", {"yellow": True})
    if status == "blocked":
        return "blocked", "B", ("BLOCKED", {"purple": True})
    # pytest would call a failure in a fixture an "error" and a harness bug in the check a "failure": say what the
    # verdict says instead (the target failed; the harness erred).
    if status == "failed" and report.when == "setup":
        return "failed", "F", ("FAILED", {"red": True})
    if status == "error" and report.when == "call":
        return "error", "E", ("ERROR", {"red": True})
    return None


class OutcomeCollector:
    """Gathers verdicts on the controller (xdist forwards worker reports with their attributes)."""

    def __init__(self, state: ConformanceSession) -> None:
        self.state = state

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: learn the secrets it learnt, for the last redaction pass."""
        exported = getattr(node, "workeroutput", {}).get("conformance_secrets")
        if isinstance(exported, dict):
            self.state.redactor.add_secrets(exported)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.state.throttle_wait_s += getattr(report, "conformance_throttle_wait_s", 0.0)
        result = getattr(report, "conformance", None)
        if result is not None:
            outcome = CheckOutcome.from_json(result)
            self.state.throttled_checks += outcome.throttled
            self.state.outcomes.append(outcome)
            # Under xdist the controller collects nothing: the suites that ran are known from their verdicts.
            self.state.suites_run.update(RULES[r].suite for r in outcome.rules if r in RULES)
        elif report.failed and report.when != "teardown":
            self.state.other_failures += 1
