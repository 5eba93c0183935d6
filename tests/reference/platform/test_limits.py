"""Rate limits of the platform sandbox: Go durations, windows, 429/503 answers, spend cap, failed requests."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from conformance.host import parse_duration
from conformance.reference.platform import create_app
from conformance.reference.platform.errors import ApiError
from conformance.reference.platform.limits import Limiter, estimate_tokens, go_duration
from conformance.reference.platform.settings import (
    CAPPED_KEY,
    FAULT_KEY,
    KeySpec,
    SandboxSettings,
    load_settings,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.02, "20ms"),
        (1, "1s"),
        (1.5, "1.5s"),
        (60, "1m0s"),
        (360, "6m0s"),
        (179.56, "2m59.56s"),
        (3600, "1h0m0s"),
    ],
)
def test_go_durations(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text
    assert parse_duration(text) == pytest.approx(seconds)


def test_window_counts_requests_and_tokens_then_throttles_and_resets() -> None:
    clock = Clock()
    limiter = Limiter(clock=clock)
    spec = KeySpec("k", rpm=2, tpm=100, window_s=10.0)
    first = limiter.admit(spec, 30)
    assert first["x-ratelimit-remaining-requests"] == "1"
    assert first["x-ratelimit-remaining-tokens"] == "70"
    assert first["x-ratelimit-reset-requests"] == "10s"
    clock.now += 2.5
    second = limiter.admit(spec, 30)
    assert second["x-ratelimit-remaining-requests"] == "0"
    assert second["x-ratelimit-reset-requests"] == "7.5s"
    clock.now += 0.4
    with pytest.raises(ApiError) as throttled:
        limiter.admit(spec, 1)
    assert throttled.value.status == 429 and throttled.value.type == "rate_limit_error"
    assert throttled.value.headers["Retry-After"] == "8"  # 7.1 s left, rounded up: never too short
    clock.now += 7.1
    assert limiter.admit(spec, 1)["x-ratelimit-remaining-requests"] == "1"


def test_token_limit_and_project_token_limit() -> None:
    clock = Clock()
    limiter = Limiter(clock=clock)
    spec = KeySpec("k", tpm=1000, project_tpm=50)
    headers = limiter.admit(spec, 40)
    assert headers["x-ratelimit-remaining-project-tokens"] == "10"
    assert {"x-ratelimit-limit-project-tokens", "x-ratelimit-reset-project-tokens"} <= set(headers)
    with pytest.raises(ApiError) as throttled:
        limiter.admit(spec, 20)
    assert "project tokens" in throttled.value.message
    assert "x-ratelimit-limit-project-tokens" not in Limiter(clock=clock).admit(KeySpec("other"), 1)


def test_fault_switch_answers_every_other_request_503() -> None:
    limiter = Limiter(clock=Clock())
    spec = KeySpec("k", fault_rate=0.5, fault_retry_after_s=2)
    outcomes = []
    for _ in range(6):
        try:
            limiter.admit(spec, 1)
            outcomes.append(200)
        except ApiError as exc:
            assert (exc.type, exc.code, exc.headers["Retry-After"]) == (
                "service_unavailable_error",
                "server_is_overloaded",
                "2",
            )
            outcomes.append(exc.status)
    assert outcomes == [200, 503, 200, 503, 200, 503]


def test_token_estimate_is_the_larger_of_max_tokens_and_characters() -> None:
    assert estimate_tokens("x" * 400, None) == 100
    assert estimate_tokens("x" * 400, 500) == 500
    assert estimate_tokens("x" * 400, True) == 100


def test_failed_requests_count_and_headers_come_with_errors(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as client:
        auth = {"Authorization": "Bearer sk-sandbox-main-4f1c2a"}
        remaining = []
        for path in ("/v1/campaigns", "/v1/campaigns/cmp_missing", "/v1/campaigns?limit=0"):
            response = client.get(path, headers=auth)
            remaining.append(int(response.headers["x-ratelimit-remaining-requests"]))
        assert remaining == sorted(remaining, reverse=True) and len(set(remaining)) == 3


def test_spend_cap_is_a_429_without_retry_after(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as client:
        response = client.post(
            "/v1/responses/input_tokens",
            json={"model": "gpt-4o", "input": "hi"},
            headers={"Authorization": f"Bearer {CAPPED_KEY}"},
        )
    assert response.status_code == 429
    assert "retry-after" not in response.headers
    assert response.json()["error"]["type"] == "insufficient_quota"


def test_spend_accumulates_until_the_cap(tmp_path: Path) -> None:
    settings = SandboxSettings(keys=(KeySpec("sk-small", spend_cap_micros=20),))
    with TestClient(create_app(tmp_path, settings=settings)) as client:
        statuses = [
            client.post(
                "/v1/responses/input_tokens",
                json={"model": "gpt-4o", "input": "a few words here"},
                headers={"Authorization": "Bearer sk-small"},
            ).status_code
            for _ in range(3)
        ]
    assert statuses == [200, 200, 429]  # each count adds its 11 tokens as micros: 22 ≥ 20 after two


def test_fault_key_over_http(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as client:
        statuses = [
            client.get("/v1/campaigns", headers={"Authorization": f"Bearer {FAULT_KEY}"}).status_code for _ in range(4)
        ]
    assert statuses == [200, 503, 200, 503]


def test_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text('{"keys": [{"key": "sk-x", "rpm": 3, "window_s": 1}], "audience_minimum": 10}')
    loaded = load_settings(path)
    assert loaded.key("sk-x") == KeySpec("sk-x", rpm=3, window_s=1)
    assert loaded.audience_minimum == 10
    path.write_text('{"keys": [{"key": "sk-x", "rmp": 3}]}')
    with pytest.raises(ValueError, match="rmp"):
        load_settings(path)
