"""The run's verdict: nothing undecided is accepted, and a loopback run never reads ACCEPTED.

ACCEPTED stays for a deployment certified in full; a run that never reached a target it was given (no linked
account, no API key, a prerequisite it did not decide) is INCOMPLETE with a non-zero exit and one line naming what
is missing; ``--allow-incomplete`` opts out; ``--allow-insecure-loopback`` caps the verdict at PASSED LOCALLY.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance.report.model import CheckOutcome, RuleResult, Status, verdict
from tests._checks_run import run_checks
from tests._forked import forked_harness, forked_stack

DEAD = "https://127.0.0.1:1/mcp"

PASS_AND_NEED = """
from conformance import needs, rule

@rule("AUTH-PRM-01")
def test_passes():
    pass

@rule("AUTH-TOK-01")
def test_needs_credentials():
    needs("test account credentials (CONFORMANCE_TEST_USER)", "CONFORMANCE_TEST_USER", incomplete=True)

@rule("AUTH-TOK-06")
def test_optional_need():
    needs("a second resource", "--alt-resource")
"""


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = run_checks(pytester, *args)
    return result.outcome, result.report


def verdict_line(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if line.startswith("verdict:")]


def test_a_run_that_never_linked_is_incomplete(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_checks=PASS_AND_NEED)
    result, report = run(pytester, "--target-url", DEAD, "test_checks.py")
    assert result.ret == 1
    assert report["verdict"]["status"] == "INCOMPLETE" and report["verdict"]["accepted"] is False
    assert report["verdict"]["missing"] == ["test account credentials (CONFORMANCE_TEST_USER) (CONFORMANCE_TEST_USER)"]
    by_rule = {r["rule"]: r for r in report["results"]}
    assert by_rule["AUTH-TOK-01"]["incomplete"] is True and by_rule["AUTH-TOK-06"]["incomplete"] is False
    line = verdict_line(result)
    assert len(line) == 1 and "INCOMPLETE" in line[0] and "test account credentials" in line[0], line
    assert "a second resource" not in line[0]  # an optional need does not make a run incomplete


def test_allow_incomplete_is_the_explicit_opt_out(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_checks=PASS_AND_NEED)
    result, report = run(pytester, "--target-url", DEAD, "--allow-incomplete", "test_checks.py")
    assert result.ret == 0
    assert report["verdict"]["status"] == "ACCEPTED"
    assert "test account credentials" in report["verdict"]["reason"]  # still said
    assert report["config"]["allow_incomplete"] is True


def test_blocked_by_a_rule_the_run_did_not_decide_is_incomplete(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
from conformance import Blocked, fail, rule

@rule("AUTH-PRM-04")
def test_passes():
    pass

@rule("AUTH-TOK-03")
def test_blocked():
    raise Blocked("AUTH-FLOW-01", "no account was linked")
"""
    )
    result, report = run(pytester, "--target-url", DEAD, "test_checks.py")
    assert result.ret == 1 and report["verdict"]["status"] == "INCOMPLETE"
    assert "AUTH-FLOW-01" in report["verdict"]["missing"][0]


def test_blocked_by_a_failed_rule_is_not_accepted_not_incomplete(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
from conformance import Blocked, fail, rule

@rule("AUTH-FLOW-01")
def test_fails():
    fail("no code")

@rule("AUTH-TOK-03")
def test_blocked():
    raise Blocked("AUTH-FLOW-01", "no account was linked")
"""
    )
    result, report = run(pytester, "--target-url", DEAD, "test_checks.py")
    assert result.ret == 1 and report["verdict"]["status"] == "NOT ACCEPTED"
    assert report["verdict"]["missing"] == []


def test_a_missing_api_key_is_incomplete_never_a_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
from conformance import rule

@rule("TOK-01")
def test_needs_the_platform(platform_target):
    raise AssertionError("never reached without an API key")

@rule("AUTH-PRM-04")
def test_passes():
    pass
"""
    )
    result, report = run(pytester, "--target-url", DEAD, "--platform-url", "https://127.0.0.1:1/v1", "test_checks.py")
    statuses = {r["rule"]: r["status"] for r in report["results"]}
    assert statuses["TOK-01"] == "skipped", report["results"]
    assert result.ret == 1 and report["verdict"]["status"] == "INCOMPLETE"
    assert report["verdict"]["missing"] == ["the platform API key (CONFORMANCE_PLATFORM_API_KEY)"]


def test_a_loopback_run_passes_locally_never_accepted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
from conformance import rule

@rule("AUTH-PRM-04")
def test_passes():
    pass
"""
    )
    result, report = run(pytester, "--target-url", DEAD, "--allow-insecure-loopback", "test_checks.py")
    assert result.ret == 0
    assert report["verdict"]["status"] == "PASSED LOCALLY" and report["verdict"]["accepted"] is False
    assert "transport not judged" in report["verdict"]["reason"]
    line = verdict_line(result)
    assert len(line) == 1 and "PASSED LOCALLY" in line[0] and "ACCEPTED" not in line[0].replace("NOT ", "")
    html = (pytester.path / "out" / "report.html").read_text()
    assert "Passed locally" in html and ">Accepted<" not in html


def _result(rule: str, status: str, **extra: Any) -> RuleResult:
    return RuleResult.for_rule(rule, Status(status), **extra)


def test_verdict_model() -> None:
    passed = _result("AUTH-PRM-04", "passed")
    assert verdict([passed], strict=False).status == "ACCEPTED"
    assert verdict([passed], strict=False, local=True).status == "PASSED LOCALLY"
    failed = _result("AUTH-PRM-02", "failed")
    assert verdict([passed, failed], strict=False, local=True).status == "NOT ACCEPTED"
    nothing = verdict([_result("AUTH-PRM-04", "skipped")], strict=False, allow_incomplete=True)
    assert nothing.status == "INCOMPLETE" and nothing.exit_code == 1
    gap = _result("TOK-01", "skipped", need="the platform API key", option="KEY", incomplete=True)
    assert verdict([passed, gap], strict=False).missing == ("the platform API key (KEY)",)
    assert CheckOutcome(nodeid="x", rules=("TOK-01",), status=Status.SKIPPED).to_json()["incomplete"] is False


def test_a_run_stopped_early_is_incomplete_whatever_it_decided() -> None:
    passed, failed = _result("AUTH-PRM-04", "passed"), _result("AUTH-PRM-02", "failed")
    stopped = verdict([passed, failed], strict=False, interrupted="interrupted (SIGTERM)")
    assert stopped.status == "INCOMPLETE" and stopped.exit_code == 1
    assert stopped.reason.startswith("interrupted (SIGTERM): the run stopped before its end (2 rule(s) reported)")
    assert "1 rule(s) failed: AUTH-PRM-02" in stopped.reason
    slow = _result("TOK-01", "blocked", message="target too slow: POST https://t.example/v1: the check's time budget")
    assert verdict([passed, slow], strict=False).missing == (
        "1 rule(s) blocked: the target was too slow for the time budget (TOK-01)",
    )


def test_the_reference_without_test_credentials_is_incomplete(tmp_path: Path) -> None:
    """A run without its test credentials: most rules skipped, a few decided — never ACCEPTED, exit non-zero,
    one line naming what is missing."""
    with forked_stack(services=["toolserver"], data_dir=tmp_path / "data") as stack:
        env = {k: v for k, v in stack.settings.items() if not k.startswith("CONFORMANCE_TEST_")}
        suites = Path(conformance.__file__).parent / "suites" / "auth"
        args = ["-q", str(suites / "test_prm.py"), str(suites / "test_flow.py"), str(suites / "test_tools.py")]
        (tmp_path / "report").mkdir()
        result = forked_harness(args, tmp_path / "report", env=env, timeout=300)
    verdict_ = result.report["verdict"]
    assert result.exit_code == 1 and verdict_["status"] == "INCOMPLETE", result.stdout[-3000:]
    assert result.with_status("passed"), "some rules are still decided"
    assert not result.with_status("failed", "error"), result.stdout[-3000:]  # a missing account fails nothing
    assert any("test account credentials" in m for m in verdict_["missing"]), verdict_
    lines = [line for line in result.stdout.splitlines() if line.startswith("verdict:")]
    assert len(lines) == 1 and "INCOMPLETE" in lines[0] and "CONFORMANCE_TEST_USER" in lines[0], lines


def test_rules_blocked_by_throttling_make_the_run_incomplete_and_say_so() -> None:
    results = [_result("TOK-02", "passed"), _result("TOK-01", "blocked"), _result("CAMP-03", "blocked")]
    decided = verdict(results, strict=False)
    assert decided.status == "INCOMPLETE" and decided.exit_code == 1
    assert decided.missing == (
        "2 rule(s) blocked: the target throttled the harness beyond --max-throttle-wait (TOK-01, CAMP-03)",
    )
