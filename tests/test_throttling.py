"""A throttled answer is not a verdict, end to end with pytester against a small live target.

Only the RL rules judge throttling: a 429 or 503 met by a check of any other rule is waited out within the run's
bound (``--max-throttle-wait``) and otherwise ends the check ``blocked``, never ``failed`` (nor passed, as when a
429 would have counted as the 4xx rejection a check wanted). Property-based checks end as a verdict or ``blocked``
even when the target answers differently while Hypothesis replays a case, never as a harness error.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests._checks_run import CheckRun, run_checks
from tests._serving import serve_http


def statuses(run: CheckRun) -> dict[str, str]:
    """Verdicts of the checks here (RL-06, the harness's own rule, is always reported skipped)."""
    return {k: v for k, v in run.statuses().items() if k != "RL-06"}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks need a key: without one the platform suites are incomplete (skipped), not throttled."""
    monkeypatch.setenv("CONFORMANCE_PLATFORM_API_KEY", "sk-throttle-test")


Script = Callable[[str, int], tuple[int, dict[str, str]]]  # (path, n-th request to it) -> (status, headers)


def always_429(path: str, n: int) -> tuple[int, dict[str, str]]:
    return 429, {"Retry-After": "1", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}


@pytest.fixture
def target(request: pytest.FixtureRequest) -> Iterator[str]:
    """A target on 127.0.0.1 answering as the test's script says (``@pytest.mark.parametrize(indirect)``)."""
    script: Script = getattr(request, "param", always_429)
    counts: dict[str, int] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            path = self.path.split("?")[0]
            with lock:
                counts[path] = counts.get(path, 0) + 1
                n = counts[path]
            status, headers = script(path, n)
            body = json.dumps({"error": {"type": "rate_limit_error", "code": "slow_down"}} if status >= 400 else {})
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        do_GET = do_POST = answer

        def log_message(self, *args: Any) -> None:
            pass

    with serve_http(Handler) as origin:
        yield origin


CHECKS = """
from conformance import expect, rule

@rule("TOK-01")
def test_wants_a_count(host_http, platform_target):
    response = host_http.post(platform_target.url("/v1/responses/input_tokens"), json={}, retry=None)
    expect(response.status_code == 200, f"expected 200, got {response.status_code}")

@rule("CAMP-03")
def test_wants_a_rejection(host_http, platform_target):
    # Any 4xx would pass: a 429 must not count as the rejection this check wants.
    response = host_http.post(platform_target.url("/v1/campaigns"), json={"status": "archived"})
    expect(400 <= response.status_code < 500, f"not rejected: {response.status_code}")

@rule("RL-03")
def test_judges_throttling(host_http, platform_target):
    response = host_http.get(platform_target.url("/v1/campaigns"), retry=None, pace=False)
    expect(response.status_code == 200, f"throttled: {response.status_code} {response.headers.get('retry-after')}")
"""


def test_no_check_but_rl_fails_because_of_a_429(pytester: pytest.Pytester, target: str) -> None:
    pytester.makepyfile(test_checks=CHECKS)
    # One check at a time: waits that overlap would count once in the bound (tests/host/test_pace.py).
    args = ["--platform-url", target, "--allow-insecure-loopback", "--max-throttle-wait", "2", "--concurrency", "1"]
    result = run_checks(pytester, *args, "test_checks.py")
    report = result.report
    by_rule = {r["rule"]: r for r in report["results"]}
    assert statuses(result) == {"TOK-01": "blocked", "CAMP-03": "blocked", "RL-03": "failed"}
    for rule_id in ("TOK-01", "CAMP-03"):
        message = by_rule[rule_id]["message"]
        assert message.startswith("target throttled the harness: POST http://127.0.0.1:"), message
        assert "→ 429 slow_down, Retry-After '1'" in message
        assert by_rule[rule_id]["blocked_by"] is None
        assert by_rule[rule_id]["evidence"][-1]["status"] == 429  # the throttled answer is the evidence
    assert by_rule["RL-03"]["message"] == "throttled: 429 1"  # RL rules see the raw answer, unretried
    assert len(by_rule["RL-03"]["evidence"]) == 1
    # Within the bound of 2 s the host waited Retry-After (1 s) twice, then gave up.
    assert report["throttle"] == {"waited_s": 2.0, "max_wait_s": 2.0, "blocked_checks": 2}
    output = result.stdout.str()
    assert "throttle: 2.0 s waiting for the targets' rate limits (bound 2.0 s); 2 checks blocked" in output
    assert "1 failed, 2 blocked" in output


def throttled_twice_then_fine(path: str, n: int) -> tuple[int, dict[str, str]]:
    if n <= 2:
        return 429 if n == 1 else 503, {"Retry-After": "1"}
    return 200, {"x-ratelimit-remaining-requests": "50", "x-ratelimit-reset-requests": "10s"}


@pytest.mark.parametrize("target", [throttled_twice_then_fine], indirect=True)
def test_throttled_answers_are_waited_out(pytester: pytest.Pytester, target: str) -> None:
    pytester.makepyfile(test_checks=CHECKS)
    run = run_checks(
        pytester, "--platform-url", target, "--allow-insecure-loopback", "-k", "not judges", "test_checks.py"
    )
    report = run.report
    assert statuses(run) == {"TOK-01": "passed", "CAMP-03": "failed"}  # 200 is no rejection: a real verdict
    # Retry-After 1 s after the 429 and after the 503, on each of two paths, and a little slowing down after them.
    assert 4.0 <= report["throttle"]["waited_s"] < 4.5
    tok = next(r for r in report["results"] if r["rule"] == "TOK-01")
    assert [e["status"] for e in tok["evidence"]] == [429, 503, 200]
    assert "waited for the target's rate limit" in tok["message"]


FLAKY = """
from hypothesis import given, settings, strategies as st
from conformance import fail, rule
from conformance.suites.platform.client import run_property, target_settings

calls = []

@rule("TOK-02")
def test_replay_draws_otherwise(host_http, platform_target):
    # The target's answer decides what the property draws next: on replay it answers otherwise, and Hypothesis
    # meets different data (FlakyStrategyDefinition) or no failure (FlakyFailure).
    @target_settings(max_examples=5)
    @given(st.data())
    def prop(data):
        calls.append(1)
        host_http.get(platform_target.url(f"/v1/answer/{len(calls)}"))
        if len(calls) == 1:
            data.draw(st.integers(0, 10))
            fail("the first answer broke the rule")
        data.draw(st.text())

    run_property(prop)

replays = []

@rule("TOK-03")
def test_replay_throttled(host_http, platform_target):
    @target_settings(max_examples=5)
    @given(st.integers(0, 10))
    def prop(n):
        replays.append(1)
        host_http.get(platform_target.url(f"/v1/throttled/{len(replays)}"))
        if len(replays) == 1:
            fail("the first answer broke the rule")

    run_property(prop)

@rule("TOK-04")
def test_property_throttled_throughout(host_http, platform_target):
    @target_settings(max_examples=5)
    @given(st.integers(0, 10))
    def prop(n):
        host_http.get(platform_target.url("/v1/always-throttled"))

    run_property(prop)
"""


def first_answers_then_throttles(path: str, n: int) -> tuple[int, dict[str, str]]:
    if (path.startswith("/v1/throttled/") and path != "/v1/throttled/1") or path == "/v1/always-throttled":
        return 429, {"Retry-After": "30"}
    return 200, {}


@pytest.mark.parametrize("target", [first_answers_then_throttles], indirect=True)
def test_flaky_replays_end_as_verdicts(pytester: pytest.Pytester, target: str) -> None:
    pytester.makepyfile(test_flaky=FLAKY)
    run = run_checks(
        pytester, "--platform-url", target, "--allow-insecure-loopback", "--max-throttle-wait", "5", "test_flaky.py"
    )
    report = run.report
    by_rule = {r["rule"]: r for r in report["results"]}
    assert statuses(run) == {"TOK-02": "failed", "TOK-03": "failed", "TOK-04": "blocked"}, report["results"]
    assert by_rule["TOK-04"]["message"].startswith("target throttled the harness: GET http")
    for rule_id in ("TOK-02", "TOK-03"):
        assert by_rule[rule_id]["message"].startswith("the first answer broke the rule"), by_rule[rule_id]
    assert (
        "answered differently when Hypothesis replayed the failing case (FlakyStrategyDefinition)"
        in (by_rule["TOK-02"]["message"])
    )
    assert "a replay of the failing case was throttled (GET http" in by_rule["TOK-03"]["message"]
    # The evidence ends with the exchange the first failure was raised on.
    assert by_rule["TOK-02"]["evidence"][-1]["url"].endswith("/v1/answer/1")
    assert by_rule["TOK-03"]["evidence"][-1]["url"].endswith("/v1/throttled/1")
