"""The reference platform sandbox certifies under a low request limit (issue 13): 120 requests per window, every
rule the unlimited run passes still passes, RL-03 included and decided on the real window of the main key (no
separately throttled key), and the time the host waited for the windows is in the run summary.

A window of 3 s instead of a minute keeps the test fast; the reset the sandbox announces is what the host follows
either way (``benchmarks/platform_suites.py --limit 120`` measures the real minute).
"""

from __future__ import annotations

from pathlib import Path

from conformance.reference.stack import running_stack
from conformance.testing import RunResult, run_harness

LIMIT, WINDOW_S = 120, 3.0


def certify(report_dir: Path, request_limit: tuple[int, float] | None) -> RunResult:
    with running_stack(services=["platform"], request_limit=request_limit) as stack:
        env = dict(stack.settings)
        if request_limit is not None:
            # RL-03 on the main key's own window: it must exhaust it (within the budget) and wait it out.
            del env["CONFORMANCE_PLATFORM_THROTTLE_API_KEY"]
            env["CONFORMANCE_PLATFORM_RL_BUDGET"] = str(LIMIT + 30)
        report_dir.mkdir(parents=True)
        return run_harness(["--suite", "platform,campaigns", "-q"], report_dir, env=env, timeout=600)


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
