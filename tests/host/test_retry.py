"""The host's retry policy with an injected transport: Retry-After, jitter, bounds, and what is never retried."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.host._guard import UrlGuard
from conformance.host._retry import RetryPolicy, parse_retry_after
from conformance.host.http import HostHTTP


def scripted(responses: list[httpx.Response]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return responses[min(len(seen) - 1, len(responses) - 1)]

    return httpx.MockTransport(handler), seen


def client(transport: httpx.MockTransport, policy: RetryPolicy, sleeps: list[float]) -> HostHTTP:
    return HostHTTP(transport=transport, retry=policy, sleep=sleeps.append, guard=UrlGuard())


def test_retry_after_seconds_is_followed_then_success() -> None:
    transport, seen = scripted([httpx.Response(429, headers={"Retry-After": "2"}), httpx.Response(200)])
    sleeps: list[float] = []
    response = client(transport, RetryPolicy(), sleeps).get("https://api.example/v1/x")
    assert response.status_code == 200
    assert len(seen) == 2
    assert sleeps == [2.0]


def test_retry_after_http_date_is_followed() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
    transport, _ = scripted([httpx.Response(503, headers={"Retry-After": when}), httpx.Response(200)])
    sleeps: list[float] = []
    client(transport, RetryPolicy(), sleeps).get("https://api.example/v1/x")
    assert len(sleeps) == 1 and 1.0 <= sleeps[0] <= 3.0


def test_without_retry_after_backoff_is_exponential_full_jitter() -> None:
    transport, seen = scripted([httpx.Response(503)] * 4 + [httpx.Response(200)])
    sleeps: list[float] = []
    policy = RetryPolicy(max_attempts=5, base_s=0.5, cap_s=8.0, max_total_s=100, rng=random.Random(7))
    assert client(transport, policy, sleeps).get("https://api.example/x").status_code == 200
    assert len(seen) == 5
    for attempt, slept in enumerate(sleeps):
        assert 0.0 <= slept <= min(8.0, 0.5 * 2**attempt)


@given(st.integers(min_value=0, max_value=30), st.integers(min_value=0, max_value=2**32))
def test_backoff_stays_within_the_jitter_envelope(attempt: int, seed: int) -> None:
    policy = RetryPolicy(base_s=0.25, cap_s=5.0, rng=random.Random(seed))
    assert 0.0 <= policy.backoff(attempt) <= min(5.0, 0.25 * 2**attempt)


def test_attempts_are_bounded() -> None:
    transport, seen = scripted([httpx.Response(503)])
    sleeps: list[float] = []
    response = client(transport, RetryPolicy(max_attempts=3, max_total_s=100), sleeps).get("https://a.example/")
    assert response.status_code == 503
    assert len(seen) == 3 and len(sleeps) == 2


def test_total_time_is_bounded() -> None:
    transport, seen = scripted([httpx.Response(429, headers={"Retry-After": "20"})])
    sleeps: list[float] = []
    response = client(transport, RetryPolicy(max_attempts=10, max_total_s=30), sleeps).get("https://a.example/")
    assert response.status_code == 429
    assert sum(sleeps) <= 30 and len(seen) == 2


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(401),
        httpx.Response(403),
        httpx.Response(400),
        httpx.Response(429, json={"error": {"type": "insufficient_quota", "code": "insufficient_quota"}}),
        httpx.Response(429, json={"error": {"code": "billing_hard_limit_reached"}}),
    ],
    ids=["401", "403", "400", "quota", "billing"],
)
def test_errors_needing_a_person_are_never_retried(response: httpx.Response) -> None:
    transport, seen = scripted([response, httpx.Response(200)])
    sleeps: list[float] = []
    assert client(transport, RetryPolicy(), sleeps).get("https://a.example/").status_code == response.status_code
    assert len(seen) == 1 and sleeps == []


def test_retry_none_observes_the_raw_answer() -> None:
    transport, seen = scripted([httpx.Response(429, headers={"Retry-After": "1"}), httpx.Response(200)])
    sleeps: list[float] = []
    response = client(transport, RetryPolicy(), sleeps).get("https://a.example/", retry=None)
    assert response.status_code == 429 and len(seen) == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0", 0.0), ("1.5", 1.5), ("-1", None), ("soon", None), ("", None), (None, None), ("nan", None)],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_parse_retry_after_date_in_the_past_is_zero() -> None:
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    assert parse_retry_after(past) == 0.0
