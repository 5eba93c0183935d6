"""The host's own pace (conformance/host/_pace.py) with an injected transport, clock and sleep: it waits for the
window reset a target announced instead of spending the last requests, waits out throttled answers met by checks
of rules other than RL-* within the run's bound (else blocks them), and leaves raw answers to the RL checks."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import httpx
import pytest

from conformance.core import _context
from conformance.host import TargetThrottled
from conformance.host._guard import UrlGuard
from conformance.host._pace import Pacer, parse_duration
from conformance.host.http import HostHTTP

URL = "https://api.example/v1/campaigns"
KEY = {"Authorization": "Bearer sk-one"}


class Clock:
    """A fake monotonic clock that the fake sleep advances."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def scripted(responses: list[httpx.Response]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return responses[min(len(seen) - 1, len(responses) - 1)]

    return httpx.MockTransport(handler), seen


def window(remaining: int, reset: str = "30s", limit: int = 120, status: int = 200, **extra: str) -> httpx.Response:
    headers = {
        "x-ratelimit-limit-requests": str(limit),
        "x-ratelimit-remaining-requests": str(remaining),
        "x-ratelimit-reset-requests": reset,
        **extra,
    }
    return httpx.Response(
        status, headers=headers, json={"error": {"code": "rate_limit_exceeded"}} if status >= 400 else {}
    )


def host(transport: httpx.MockTransport, clock: Clock, max_wait_s: float = 600.0) -> HostHTTP:
    pacer = Pacer(max_wait_s, clock=clock, sleep=clock.sleep)
    return HostHTTP(transport=transport, guard=UrlGuard(), retry=None, pacer=pacer, sleep=clock.sleep)


@pytest.fixture
def check() -> Iterator[_context.CheckRecord]:
    """A running check of a rule other than RL-* (as the plugin opens one)."""
    record = _context.begin(["TOK-01"])
    yield record
    _context.end()


@pytest.mark.parametrize(("text", "seconds"), [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("2m59.56s", 179.56)])
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["forever", "-1s", "1.5", "", None])
def test_not_durations(text: str | None) -> None:
    assert parse_duration(text) is None


def test_waits_for_the_announced_reset_instead_of_spending_the_last_requests(check: _context.CheckRecord) -> None:
    clock = Clock()
    # 120 per window: the reserve is 3 requests (2 %, rounded up); the answer says 3 are left and 30 s to the reset.
    transport, seen = scripted([window(3, "30s"), window(119, "59.9s")])
    client = host(transport, clock)
    client.get(URL, headers=KEY)
    assert clock.sleeps == []
    client.get(URL, headers=KEY)
    assert len(clock.sleeps) == 1 and 30.0 < clock.sleeps[0] < 31.0  # the reset, and a little margin
    assert len(seen) == 2 and check.throttle_wait_s == pytest.approx(clock.sleeps[0])
    assert any("rate limit" in note for note in check.notes)
    client.get(URL, headers=KEY)  # a fresh window: no more waiting
    assert len(clock.sleeps) == 1


def test_budgets_are_per_key(check: _context.CheckRecord) -> None:
    clock = Clock()
    transport, _ = scripted([window(0, "30s", limit=3), window(100, "30s")])
    client = host(transport, clock)
    client.get(URL, headers={"Authorization": "Bearer sk-throttled"})
    client.get(URL, headers=KEY)  # another key's window is not this one's
    assert clock.sleeps == []


def test_unpaced_requests_spend_the_window_to_the_last(check: _context.CheckRecord) -> None:
    clock = Clock()
    transport, seen = scripted([window(0, "30s")])
    client = host(transport, clock)
    client.get(URL, headers=KEY, pace=False)
    client.get(URL, headers=KEY, pace=False)
    assert clock.sleeps == [] and len(seen) == 2


def test_no_wait_beyond_the_runs_bound(check: _context.CheckRecord) -> None:
    clock = Clock()
    transport, seen = scripted([window(0, "5m0s"), window(50, "10s")])
    client = host(transport, clock, max_wait_s=60)
    client.get(URL, headers=KEY)
    client.get(URL, headers=KEY)  # a 300 s reset is beyond the bound: the request goes out as it is
    assert clock.sleeps == [] and len(seen) == 2


def test_a_throttled_answer_is_waited_out_for_a_check_of_another_rule(check: _context.CheckRecord) -> None:
    clock = Clock()
    transport, seen = scripted([window(0, "2s", status=429, **{"Retry-After": "2"}), window(119, "59s")])
    response = host(transport, clock).get(URL, headers=KEY)  # retry=None: still waited out (it is no answer)
    assert response.status_code == 200 and len(seen) == 2
    assert clock.sleeps == [2.0]
    assert check.throttle_wait_s == 2.0


def test_503_overload_is_waited_out_with_backoff(check: _context.CheckRecord) -> None:
    clock = Clock()
    transport, seen = scripted([httpx.Response(503), httpx.Response(503), httpx.Response(200)])
    assert host(transport, clock).get(URL, headers=KEY).status_code == 200
    assert len(seen) == 3
    assert 0.0 <= clock.sleeps[-2] <= 1.0 and 0.0 <= clock.sleeps[-1] <= 2.0  # full jitter, base 1 s


def test_throttled_beyond_the_bound_blocks_the_check(check: _context.CheckRecord) -> None:
    clock = Clock()
    transport, seen = scripted([window(0, "50s", status=429, **{"Retry-After": "50"})])
    with pytest.raises(TargetThrottled) as caught:
        host(transport, clock, max_wait_s=20).post(URL, headers=KEY, json={"x": 1})
    assert len(seen) == 1 and clock.sleeps == []
    message = str(caught.value)
    assert message.startswith("target throttled the harness: POST https://api.example/v1/campaigns → 429")
    assert "Retry-After '50'" in message and "--max-throttle-wait" in message
    assert check.exchanges[-1]["status"] == 429  # the evidence is on the check
    assert caught.value.exchange is check.exchanges[-1]  # and on the signal


def test_attempts_are_bounded_even_within_the_bound(check: _context.CheckRecord) -> None:
    clock = Clock()
    transport, seen = scripted([httpx.Response(429, headers={"Retry-After": "1"})])
    with pytest.raises(TargetThrottled, match="still throttled after 8 attempt"):
        host(transport, clock).get(URL, headers=KEY)
    assert len(seen) == 8 and clock.sleeps == [1.0] * 7


def test_a_quota_error_is_not_retried_and_blocks(check: _context.CheckRecord) -> None:
    clock = Clock()
    quota = httpx.Response(429, json={"error": {"type": "insufficient_quota", "code": "insufficient_quota"}})
    transport, seen = scripted([quota, httpx.Response(200)])
    with pytest.raises(TargetThrottled, match="quota or billing"):
        host(transport, clock).get(URL, headers=KEY)
    assert len(seen) == 1 and clock.sleeps == []


def test_rate_limit_checks_see_the_raw_answer() -> None:
    _context.begin(["RL-03"])
    try:
        clock = Clock()
        transport, seen = scripted([window(0, "2s", status=429, **{"Retry-After": "2"}), window(10, "5s")])
        assert host(transport, clock).get(URL, headers=KEY, retry=None, pace=False).status_code == 429
        assert len(seen) == 1 and clock.sleeps == []
    finally:
        _context.end()


def test_without_a_running_check_answers_come_as_they_are() -> None:
    clock = Clock()
    transport, seen = scripted([httpx.Response(429, headers={"Retry-After": "1"}), httpx.Response(200)])
    assert host(transport, clock).get(URL, retry=None).status_code == 429
    assert len(seen) == 1


def test_slows_down_after_a_throttled_answer_then_ramps_up(check: _context.CheckRecord) -> None:
    clock = Clock()
    answers = [httpx.Response(429, headers={"Retry-After": "0"})] + [httpx.Response(200)] * 30
    transport, _ = scripted(answers)
    client = host(transport, clock)
    client.get(URL, headers=KEY)
    gaps = []
    for _ in range(30):
        before = len(clock.sleeps)
        client.get(URL, headers=KEY)
        gaps.append(sum(clock.sleeps[before:]))
    assert gaps[0] > 0  # slower right after the 429
    assert gaps[-1] == 0  # and back to full speed later
    assert all(a >= b for a, b in itertools.pairwise(gaps))


@pytest.mark.parametrize(
    "headers",
    [
        {"x-ratelimit-remaining-requests": "-3", "x-ratelimit-reset-requests": "1s"},
        {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "forever"},
        {"x-ratelimit-remaining-requests": "zero", "x-ratelimit-reset-requests": "9999999h"},
    ],
)
def test_nonsense_headers_are_ignored(check: _context.CheckRecord, headers: dict[str, str]) -> None:
    clock = Clock()
    transport, _ = scripted([httpx.Response(200, headers=headers)])
    client = host(transport, clock, max_wait_s=60)
    client.get(URL, headers=KEY)
    client.get(URL, headers=KEY)
    assert clock.sleeps == []


def test_waits_at_once_count_once_in_the_runs_time_and_bound() -> None:
    """Checks waiting at once for the same reset wait that time once: the run's total (and its bound) counts the
    union of the waits, each check its own."""
    clock = Clock()
    pacer = Pacer(100.0, clock=clock, sleep=clock.sleep)
    records = [_context.CheckRecord(), _context.CheckRecord(), _context.CheckRecord()]
    for record in records:  # three checks begin waiting 60 s at the same moment
        token = _context.enter_lane(record)
        try:
            assert pacer.allow(60.0)
            pacer.count_wait(60.0, "the window's reset")
        finally:
            _context.leave_lane(token)
    assert pacer.waited_s == pytest.approx(60.0)
    assert [r.throttle_wait_s for r in records] == [60.0, 60.0, 60.0]
    clock.now += 30.0  # half-way: a fourth wait of 45 s ends 15 s after the others
    assert pacer.allow(45.0)
    pacer.count_wait(45.0, "the window's reset")
    assert pacer.waited_s == pytest.approx(75.0)
    clock.now += 45.0  # all ended: a new wait counts whole, within the bound's 25 s left only
    assert pacer.allow(25.0) and not pacer.allow(26.0)
