"""RL-06: the harness's own HTTP client behaves as the platform contract asks of clients, proven against the
reference sandbox injecting 429 and 503: it follows Retry-After, otherwise backs off exponentially with jitter,
bounds attempts and total time, and never retries a quota or billing error."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from conformance.host._guard import UrlGuard
from conformance.host._retry import RetryPolicy
from conformance.host.http import HostHTTP
from conformance.reference.platform.settings import KeySpec, SandboxSettings
from tests.reference.platform.live import LiveSandbox, serving

THROTTLED = "sk-two-per-second"
OVERLOADED = "sk-always-503-retry-after"
OVERLOADED_BARE = "sk-always-503-bare"
CAPPED = "sk-spend-cap-reached"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSandbox]:
    settings = SandboxSettings(
        keys=(
            KeySpec(THROTTLED, project="p1", rpm=2, window_s=1.0),
            KeySpec(OVERLOADED, project="p2", fault_rate=1.0, fault_retry_after_s=1),
            KeySpec(OVERLOADED_BARE, project="p3", fault_rate=1.0, fault_retry_after_s=None),
            KeySpec(CAPPED, project="p4", spend_cap_micros=0),
        )
    )
    with serving(tmp_path_factory.mktemp("rl06"), settings=settings) as live:
        yield live


class Recorder:
    """Counts requests on the wire and the waits the client chose; ``real`` actually sleeps."""

    def __init__(self, real: bool) -> None:
        self.real = real
        self.waits: list[float] = []
        self.sent = 0
        self.transport = httpx.HTTPTransport()

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        if self.real:
            time.sleep(seconds)

    def client(self, retry: RetryPolicy | None = None) -> HostHTTP:
        recorder = self

        class Counting(httpx.BaseTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                recorder.sent += 1
                return recorder.transport.handle_request(request)

        guard = UrlGuard(allow_insecure_loopback=True)
        if retry is None:  # the host's default policy
            return HostHTTP(guard=guard, transport=Counting(), sleep=self.sleep)
        return HostHTTP(guard=guard, transport=Counting(), sleep=self.sleep, retry=retry)


def get(client: HostHTTP, sandbox: LiveSandbox, key: str) -> httpx.Response:
    return client.get(
        sandbox.base_url + "/v1/campaigns", params={"limit": 1}, headers={"Authorization": f"Bearer {key}"}
    )


def test_follows_retry_after_then_succeeds(sandbox: LiveSandbox) -> None:
    recorder = Recorder(real=True)  # the window must really pass
    statuses: list[int] = []
    with recorder.client() as client:
        # Two requests per one-second window: the third (or, on a stalled machine, a later one) meets a 429.
        while not recorder.waits and len(statuses) < 8:
            statuses.append(get(client, sandbox, THROTTLED).status_code)
    assert set(statuses) == {200}
    assert recorder.waits == [1.0]  # it met Retry-After: 1, waited exactly that, and the retry succeeded
    assert recorder.sent == len(statuses) + 1


def test_bounded_attempts_on_persistent_503(sandbox: LiveSandbox) -> None:
    recorder = Recorder(real=False)
    policy = RetryPolicy(max_attempts=4)
    with recorder.client(policy) as client:
        response = get(client, sandbox, OVERLOADED)
    assert response.status_code == 503
    assert recorder.sent == 4 and recorder.waits == [1.0, 1.0, 1.0]


def test_bounded_total_time(sandbox: LiveSandbox) -> None:
    recorder = Recorder(real=False)
    with recorder.client(RetryPolicy(max_attempts=10, max_total_s=2.5)) as client:
        assert get(client, sandbox, OVERLOADED).status_code == 503
    assert sum(recorder.waits) <= 2.5 and recorder.sent == len(recorder.waits) + 1 == 3


def test_exponential_backoff_with_jitter_without_retry_after(sandbox: LiveSandbox) -> None:
    recorder = Recorder(real=False)
    policy = RetryPolicy(max_attempts=5, base_s=0.5, cap_s=8.0)
    with recorder.client(policy) as client:
        assert get(client, sandbox, OVERLOADED_BARE).status_code == 503
    assert recorder.sent == 5 and len(recorder.waits) == 4
    for attempt, wait in enumerate(recorder.waits):
        assert 0.0 <= wait <= min(8.0, 0.5 * 2**attempt)
    assert len(set(recorder.waits)) == 4  # jittered: no two waits alike


def test_no_retry_of_a_spend_cap(sandbox: LiveSandbox) -> None:
    recorder = Recorder(real=False)
    with recorder.client() as client:
        response = get(client, sandbox, CAPPED)
    assert response.status_code == 429 and response.json()["error"]["type"] == "insufficient_quota"
    assert recorder.sent == 1 and recorder.waits == []


def test_sandbox_answers_without_retry_after_when_configured(sandbox: LiveSandbox) -> None:
    response = httpx.get(sandbox.base_url + "/v1/campaigns", headers={"Authorization": f"Bearer {OVERLOADED_BARE}"})
    assert response.status_code == 503 and "retry-after" not in response.headers
