"""The reference platform sandbox certifies under a low request limit: 120 requests per window, every
rule the unlimited run passes still passes, RL-03 included and decided on the real window of the main key (no
separately throttled key), and the time the host waited for the windows is in the run summary.

A window of 3 s instead of a minute keeps the test fast; the reset the sandbox announces is what the host follows
either way (``benchmarks/platform_suites.py --limit 120`` measures the real minute). RL-03 must spend the 120
requests of a window before it ends, which a heavily loaded machine cannot do in 3 s: the
limited run's sandbox (served in this process) holds its limiter's clock from RL-03's first request to its 429
(``BurstClock``), so the window RL-03 spends is the main key's real one however slowly the requests come.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from conformance.reference.platform.errors import ApiError
from conformance.reference.platform.settings import MAIN_KEY, KeySpec, SandboxSettings
from conformance.testing import RunResult
from tests._forked import forked_harness
from tests.reference.platform.live import serving
from tests.suites.platform._rl03_flag import FLAG_ENV

LIMIT, WINDOW_S = 120, 3.0


def certify(data_dir: Path, report_dir: Path) -> RunResult:
    """The unlimited run: the same sandbox, served the same way, without the request limit. It names the rules the
    reference passes, which the limited run must pass too; its property checks draw as few cases as the mutant
    matrix's runs (the limited run draws the profile's full count: its request volume is what the limit meets)."""
    with serving(data_dir, tls=True) as sandbox:
        report_dir.mkdir(parents=True)
        env = {**sandbox.settings, "CONFORMANCE_HYPOTHESIS_EXAMPLES": "3"}
        return forked_harness(["--suite", "platform,campaigns", "-q"], report_dir, env=env, timeout=600)


class PausableClock:
    """A sandbox limiter's clock (monotonic seconds) that can stand still: paused, it reads the instant it paused at;
    resumed, it runs on at the real pace from that instant. Subclasses decide when (callers hold ``_lock``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offset = 0.0
        self._paused: float | None = None

    def _pause(self) -> None:
        if self._paused is None:
            self._paused = time.monotonic() + self._offset

    def _resume(self) -> None:
        if self._paused is not None:
            self._offset, self._paused = self._paused - time.monotonic(), None

    def _read(self) -> float:
        return self._paused if self._paused is not None else time.monotonic() + self._offset


class BurstClock(PausableClock):
    """The limited sandbox's limiter clock: the real clock, except that it stands still from the first request made
    while ``flag`` exists (RL-03's check runs: _rl03_flag.py) until ``release()`` (the limiter's first 429 since) or
    the flag's removal, and then runs on from the instant it held. So RL-03 spends one window of the main key at
    whatever speed, and the 429 announces the window's full length, which then passes in real time."""

    def __init__(self, flag: Path) -> None:
        super().__init__()
        self._flag = flag
        self._released = False

    def __call__(self) -> float:
        with self._lock:
            if not self._released and self._flag.exists():
                self._pause()
            else:
                self._resume()
            return self._read()

    def release(self) -> None:
        with self._lock:
            self._released = True
            self._resume()


def certify_limited(tmp_path: Path, report_dir: Path) -> RunResult:
    """The limited run: a sandbox whose keys have LIMIT requests per WINDOW_S, served in this process, with RL-03 on
    the main key's own window (no throttled key): it must exhaust it (within the budget) and wait it out."""
    settings = SandboxSettings().with_request_limit(LIMIT, WINDOW_S)
    with serving(tmp_path / "limited-data", settings=settings, tls=True) as sandbox:
        flag = tmp_path / "rl03-running"
        clock = BurstClock(flag)
        limiter = sandbox.app.state.sandbox.limiter
        limiter.clock = clock
        admit = limiter.admit

        def admit_and_release(spec: KeySpec, token_estimate: int) -> dict[str, str]:
            try:
                return admit(spec, token_estimate)
            except ApiError as exc:
                if exc.status == 429 and spec.key == MAIN_KEY:
                    clock.release()
                raise

        limiter.admit = admit_and_release
        env = {k: v for k, v in sandbox.settings.items() if "THROTTLE" not in k}
        env |= {"CONFORMANCE_PLATFORM_RL_BUDGET": str(LIMIT + 30), FLAG_ENV: str(flag)}
        report_dir.mkdir(parents=True)
        args = ["-p", "tests.suites.platform._rl03_flag", "--suite", "platform,campaigns", "-q"]
        return forked_harness(args, report_dir, env=env, timeout=600)


def test_reference_certifies_under_a_low_request_limit(tmp_path: Path) -> None:
    unlimited = certify(tmp_path / "unlimited-data", tmp_path / "unlimited")
    limited = certify_limited(tmp_path, tmp_path / "limited")
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

    # The host paced itself: it waited for window resets (well over a thousand requests at 120 per window; how long
    # depends on how fast the machine sends them, so only that it waited is asserted), and no check but the RL ones
    # ever saw a 429 (the other checks' evidence has none).
    throttle = limited.report["throttle"]
    assert throttle["waited_s"] > 0 and throttle["blocked_checks"] == 0
    for result in limited.report["results"]:
        if not result["rule"].startswith("RL-"):
            assert all(e["status"] != 429 for e in result["evidence"]), result["rule"]
    assert unlimited.report["throttle"]["waited_s"] < 2  # RL-03's Retry-After of the throttled key, only
    assert "throttle: " in limited.stdout and "waiting for the targets' rate limits" in limited.stdout
    html = (tmp_path / "limited" / "report.html").read_text(encoding="utf-8")
    assert "Rate-limit waits" in html


class HeldClock(PausableClock):
    """The sandbox limiter's clock: ``hold()`` stops it until the next request is admitted, from which it runs on
    with the real clock. A window spent before a hold is still spent, with as much of it left, when the next
    client arrives, however long that client took to start."""

    def __call__(self) -> float:
        with self._lock:
            now = self._read()  # the first request after the hold: time runs on from the held instant
            self._resume()
            return now

    def hold(self) -> None:
        with self._lock:
            self._pause()


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
