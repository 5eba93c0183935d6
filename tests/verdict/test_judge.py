"""The judge (conformance.verdict._verdicts.judge): what a check raised, mapped to a verdict without pytest objects.

Each mapping once lived in the plugin's ``_decide``; the host's own signals (``InvalidResponse``,
``TargetThrottled``) must land exactly where the verdict exceptions they replace (``Failure``, ``Blocked``,
``Throttled``) land, so the host can stop importing verdicts without a single rule changing status.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from conformance.core import _context
from conformance.core._exceptions import InvalidResponse, TargetThrottled, TargetUnreachable
from conformance.core.rules import RULES, Level, Rule
from conformance.report.model import CheckOutcome, RunReport, Status
from conformance.verdict._verdicts import Blocked, Failure, Judgement, NeedsUnmet, Throttled, judge
from tests._checks_run import run_checks

MUST, SHOULD, INFO = ["AUTH-PRM-01"], ["AUTH-PRM-06"], ["X-INFO-1"]
EXCHANGE: dict[str, Any] = {"method": "GET", "url": "https://t/x", "status": 200, "request_headers": {}}


@pytest.fixture(autouse=True)
def info_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog has no INFO rule today; the judge must still treat one as observed, never failed."""
    monkeypatch.setitem(RULES, INFO[0], Rule(INFO[0], Level.INFO, "auth", "observed", "observed", "Field"))


def test_the_rules_have_the_levels_this_file_assumes() -> None:
    assert [RULES[r[0]].level.value for r in (MUST, SHOULD, INFO)] == ["MUST", "SHOULD", "INFO"]


def test_a_check_that_returned_passed_with_its_notes() -> None:
    assert judge(None, MUST, notes=["saw 3 keys"]) == Judgement(Status.PASSED, "saw 3 keys")


@pytest.mark.parametrize(
    ("rules", "strict", "status", "prefix"),
    [
        (MUST, False, Status.FAILED, ""),
        (SHOULD, False, Status.WARNING, ""),
        (SHOULD, True, Status.FAILED, ""),
        (INFO, False, Status.PASSED, "observed (INFO): "),
    ],
)
def test_a_failure_takes_the_level_of_its_rule(rules: list[str], strict: bool, status: Status, prefix: str) -> None:
    for exc in (Failure("no iss"), InvalidResponse("no iss")):
        assert judge(exc, rules, strict=strict) == Judgement(status, prefix + "no iss")


def test_a_bare_assertion_says_its_first_line_and_a_target_error_its_message() -> None:
    assert judge(AssertionError("first\nsecond"), MUST).message == "first"
    assert judge(AssertionError(), MUST).message == "AssertionError (no message)"
    unreachable = judge(TargetUnreachable("connection refused"), MUST)
    assert unreachable == Judgement(Status.FAILED, "connection refused")


def test_invalid_response_is_failed_and_its_exchange_ends_the_evidence() -> None:
    judged = judge(InvalidResponse("status 500, wanted 200", exchange=EXCHANGE), MUST)
    assert judged.status is Status.FAILED and judged.message == "status 500, wanted 200"
    assert judged.failing_exchange is EXCHANGE


def test_invalid_response_of_a_prerequisite_blocks_like_blocked() -> None:
    new = judge(InvalidResponse("no token endpoint", blocked_by="AUTH-ASM-01"), MUST)
    old = judge(Blocked("AUTH-ASM-01", "no token endpoint"), MUST)
    assert (
        new == old == Judgement(Status.BLOCKED, "blocked by AUTH-ASM-01: no token endpoint", blocked_by="AUTH-ASM-01")
    )


def test_a_prerequisite_that_is_the_rule_itself_fails_it() -> None:
    """A shared fixture judging the very rule of the check: failed, never blocked by itself."""
    new = judge(InvalidResponse("no PRM", blocked_by="AUTH-PRM-01"), MUST)
    old = judge(Blocked("AUTH-PRM-01", "no PRM"), MUST)
    assert new == old == Judgement(Status.FAILED, "no PRM")


def test_target_throttled_is_blocked_throttled_exactly_as_throttled() -> None:
    evidence = "POST https://t/v1/x → 429 slow_down, Retry-After '30'"
    old = judge(Throttled(evidence), MUST)
    new = judge(TargetThrottled(evidence, exchange=EXCHANGE), MUST)
    assert old == Judgement(Status.BLOCKED, f"target throttled the harness: {evidence}", throttled=True)
    assert replace(new, failing_exchange=None) == old and new.failing_exchange is EXCHANGE


def test_throttled_blocks_even_a_rule_it_names_nothing_about() -> None:
    assert judge(TargetThrottled("429"), SHOULD, strict=True).status is Status.BLOCKED


def test_needs_and_skips_are_skipped_with_what_is_missing() -> None:
    need = judge(NeedsUnmet("the platform API key", "KEY", incomplete=True), MUST)
    assert need == Judgement(
        Status.SKIPPED, "needs the platform API key (supply with KEY)", "the platform API key", "KEY", incomplete=True
    )
    skip = judge(pytest.skip.Exception("no platform"), MUST, missing_target=("a platform to certify", "--platform-url"))
    assert skip == Judgement(Status.SKIPPED, "no platform", "a platform to certify", "--platform-url")


def test_anything_else_is_a_harness_error_scrubbed_of_secrets() -> None:
    judged = judge(KeyError("sk-secret"), MUST, redact=lambda text: text.replace("sk-secret", "[REDACTED]"))
    assert judged == Judgement(Status.ERROR, "harness error: KeyError: '[REDACTED]'")


def test_the_targets_words_are_scrubbed_in_failures() -> None:
    scrub = lambda text: text.replace("tok-123", "[REDACTED]")  # noqa: E731
    assert judge(InvalidResponse("echoed tok-123"), MUST, redact=scrub).message == "echoed [REDACTED]"
    assert judge(Failure("echoed tok-123"), MUST, redact=scrub).message == "echoed [REDACTED]"


def test_notes_follow_a_verdict_that_is_not_a_pass() -> None:
    assert judge(Failure("bad"), MUST, notes=["3 keys"]).message == "bad; 3 keys"


@pytest.mark.parametrize(
    ("members", "status"),
    [
        ([Failure("a"), Throttled("429")], Status.FAILED),  # a verdict beats a throttled member
        ([TargetThrottled("429"), InvalidResponse("b")], Status.FAILED),
        ([Throttled("429"), TargetThrottled("503")], Status.BLOCKED),  # only throttled: blocked
        ([Failure("a"), RuntimeError("bug")], Status.ERROR),  # a bug in any member is the harness's
    ],
)
def test_groups_of_exceptions(members: list[BaseException], status: Status) -> None:
    assert judge(BaseExceptionGroup("several", members), MUST).status is status


def test_the_first_failure_decides_and_brings_its_exchange() -> None:
    record = _context.begin(MUST)
    try:
        record.last_exchange = EXCHANGE
        first = InvalidResponse("first answer broke it")  # noted like a Failure: Hypothesis may end otherwise
        assert record.first_failure is first and record.failing_exchange is EXCHANGE
        InvalidResponse("prerequisite", blocked_by="AUTH-ASM-01")  # a prerequisite's answer is no first failure
        assert record.first_failure is first
    finally:
        _context.end()
    judged = judge(first, MUST, first_failure=first, first_failing_exchange=EXCHANGE)
    assert judged.failing_exchange is EXCHANGE


def test_a_throttled_outcome_makes_the_run_incomplete_and_says_so() -> None:
    judged = judge(TargetThrottled("429"), ["TOK-01"])
    outcome = CheckOutcome("t::a", ("TOK-01",), judged.status, judged.message, throttled=judged.throttled)
    assert CheckOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome  # as xdist carries it
    report = RunReport.build([outcome], strict=False, suites_run=(), implemented=(), targets={})
    assert report.verdict.status == "INCOMPLETE"
    assert report.verdict.missing == (
        "1 rule(s) blocked: the target throttled the harness beyond --max-throttle-wait (TOK-01)",
    )


HOST_SIGNALS = """
import pytest

from conformance import rule
from conformance.core._exceptions import InvalidResponse, TargetThrottled

@pytest.fixture(scope="session")
def platform_target(conformance_settings):
    return conformance_settings.target("platform")  # as given: nothing listens there, the checks raise the signals

@rule("TOK-01")
def test_throttled(platform_target):
    raise TargetThrottled("POST /v1/x -> 429")

@rule("TOK-02")
def test_invalid(platform_target):
    raise InvalidResponse("status 500, wanted 200")

@rule("TOK-03")
def test_prerequisite(platform_target):
    raise InvalidResponse("no key accepted", blocked_by="TOK-02")
"""


def test_host_signals_through_a_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_checks=HOST_SIGNALS)
    env = ("--platform-url", "https://127.0.0.1:1")
    monkeypatch.setenv("CONFORMANCE_PLATFORM_API_KEY", "k")
    result = run_checks(pytester, *env, "test_checks.py")
    report = RunReport.from_json(result.report)
    by_rule = {r.rule: r for r in report.results}
    assert by_rule["TOK-01"].status is Status.BLOCKED and by_rule["TOK-01"].blocked_by is None
    assert by_rule["TOK-01"].message == "target throttled the harness: POST /v1/x -> 429"
    assert by_rule["TOK-02"].status is Status.FAILED and by_rule["TOK-02"].message == "status 500, wanted 200"
    assert by_rule["TOK-03"].status is Status.BLOCKED and by_rule["TOK-03"].blocked_by == "TOK-02"
    assert report.throttle is not None and report.throttle.blocked_checks == 1
    assert report.verdict.status == "NOT ACCEPTED" and result.ret == 1
    assert "1 check blocked: the target throttled" in result.stdout.str()
    # pytest's own outcome agrees, as it did for Blocked and Throttled (skips): junit.xml and -x see no failure.
    junit = (result.report_dir / "junit.xml").read_text()
    cases = dict(re.findall(r'<testcase [^>]*name="(\w+)"(?:(?!</testcase>).)*<(skipped|failure|error)\b', junit, re.S))
    assert cases == {"test_throttled": "skipped", "test_invalid": "failure", "test_prerequisite": "skipped"}, junit
    assert "1 failed, 2 blocked" in result.stdout.str()
    first = run_checks(pytester, *env, "-x", "test_checks.py")  # a throttled check does not stop the run
    assert "1 failed, 1 blocked" in first.stdout.str()
