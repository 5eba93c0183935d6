"""The reference platform sandbox certifies under a low request limit (issue 13): 120 requests per window, every
rule the unlimited run passes still passes, RL-03 included and decided on the real window of the main key (no
separately throttled key), and the time the host waited for the windows is in the run summary.

A window of 3 s instead of a minute keeps the test fast; the reset the sandbox announces is what the host follows
either way (``benchmarks/platform_suites.py --limit 120`` measures the real minute).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from conformance.reference.platform.settings import MAIN_KEY, KeySpec, SandboxSettings
from conformance.reference.stack import running_stack
from conformance.testing import RunResult
from tests._forked import forked_harness
from tests.reference.platform.live import serving

LIMIT, WINDOW_S = 120, 3.0


def certify(report_dir: Path, request_limit: tuple[int, float] | None) -> RunResult:
    with running_stack(services=["platform"], request_limit=request_limit) as stack:
        env = dict(stack.settings)
        if request_limit is not None:
            # RL-03 on the main key's own window: it must exhaust it (within the budget) and wait it out.
            del env["CONFORMANCE_PLATFORM_THROTTLE_API_KEY"]
            env["CONFORMANCE_PLATFORM_RL_BUDGET"] = str(LIMIT + 30)
        report_dir.mkdir(parents=True)
        return forked_harness(["--suite", "platform,campaigns", "-q"], report_dir, env=env, timeout=600)


def test_reference_certifies_under_a_low_request_limit(tmp_path: Path) -> None:
    unlimited = certify(tmp_path / "unlimited", None)
    limited = certify(tmp_path / "limited", (LIMIT, WINDOW_S))
    shown = "\n".join(f"{r['rule']}: {r['status']} {r['message'][:200]}" for r in limited.report["results"])
    assert limited.exit_code == 0 and limited.report["verdict"]["accepted"], shown + limited.stdout[-2000:]
    passed = unlimited.with_status("passed")
    assert "RL-03" in passed and len(passed) >= 27
    assert passed <= limited.with_status("passed"), shown
    assert not limited.with_status("blocked", "failed", "error"), shown

    # RL-03 was decided on the main key's window of 120 requests: it met the 429 itself.
    rl03 = next(r for r in limited.report["results"] if r["rule"] == "RL-03")
    throttled = [e for e in rl03["evidence"] if e["status"] == 429]
    assert throttled and throttled[0]["response_headers"]["x-ratelimit-limit-requests"] == str(LIMIT)

    # The host paced itself: it waited for window resets (well over a thousand requests at 120 per window), and
    # no check but the RL ones ever saw a 429 (the other checks' evidence has none).
    throttle = limited.report["throttle"]
    assert throttle["waited_s"] > 5 * WINDOW_S and throttle["blocked_checks"] == 0
    for result in limited.report["results"]:
        if not result["rule"].startswith("RL-"):
            assert all(e["status"] != 429 for e in result["evidence"]), result["rule"]
    assert unlimited.report["throttle"]["waited_s"] < 2  # RL-03's Retry-After of the throttled key, only
    assert "throttle: " in limited.stdout and "waiting for the targets' rate limits" in limited.stdout
    html = (tmp_path / "limited" / "report.html").read_text(encoding="utf-8")
    assert "Rate-limit waits" in html


class HeldClock:
    """The sandbox limiter's clock: ``hold()`` stops it until the next request is admitted, from which it runs on
    with the real clock. A window spent before a hold is still spent, with as much of it left, when the next
    client arrives, however long that client took to start."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offset = 0.0
        self._held: float | None = None

    def __call__(self) -> float:
        with self._lock:
            now = time.monotonic()
            if self._held is not None:  # the first request after the hold: time runs on from the held instant
                self._offset, self._held = self._held - now, None
            return now + self._offset

    def hold(self) -> None:
        now = self()
        with self._lock:
            self._held = now


def test_rl02_waits_for_a_window_with_room(tmp_path: Path) -> None:
    """RL-02 meets a window with no request left (another client spent it): it waits for the reset the sandbox
    announced and decides in the fresh window, instead of failing because remaining cannot go below 0. The
    sandbox's clock is held from the moment the window is spent until the harness's first request, so the harness
    meets the spent window however long it takes to start (else RL-02 could meet a fresh window and prove
    nothing), and the window can be short."""
    main = KeySpec(MAIN_KEY, rpm=8, window_s=3.0)
    with serving(tmp_path / "data", settings=SandboxSettings(keys=(main,))) as sandbox:
        clock = HeldClock()
        sandbox.app.state.sandbox.limiter.clock = clock
        headers = {"Authorization": f"Bearer {MAIN_KEY}"}
        with httpx.Client(base_url=sandbox.base_url, headers=headers) as client:
            left = [client.get("/v1/campaigns", params={"limit": 1}).headers["x-ratelimit-remaining-requests"]]
            while left[-1] != "0":
                left.append(client.get("/v1/campaigns", params={"limit": 1}).headers["x-ratelimit-remaining-requests"])
        clock.hold()
        env = {k: v for k, v in sandbox.settings.items() if "THROTTLE" not in k and "FAULT" not in k}
        (tmp_path / "out").mkdir()
        result = forked_harness(["--suite", "platform", "-k", "RL-02", "-q"], tmp_path / "out", env=env, timeout=120)
    rl02 = next(r for r in result.report["results"] if r["rule"] == "RL-02")
    assert rl02["status"] == "passed", rl02["message"]
    assert "waited for the target's rate limit (RL-02 needs 6 requests in one window, 0 left)" in rl02["message"]
    assert result.report["throttle"]["waited_s"] > 1
