"""Rate limits per organization and project: requests and estimated tokens per window, an optional project
token limit, the fault switch, and the ``x-ratelimit-*`` headers with Go-style durations.

Windows are fixed (they start with the first request after the previous one ended), so ``reset`` is the exact
time until the counters return to the limit and ``Retry-After`` (whole seconds, rounded up) is never too
short. Counters live in memory: a restart gives every project a fresh window. Requests that fail validation
count; a request refused with 429 does not consume budget (otherwise a client hammering a throttled key
would never get through).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from conformance.core._values import is_int
from conformance.reference.platform.errors import ApiError
from conformance.reference.platform.settings import KeySpec


def go_duration(seconds: float) -> str:
    """Format like Go's ``time.Duration.String`` (ms precision): ``20ms``, ``1s``, ``6m0s``, ``1h0m0s``."""
    ms = max(0, round(seconds * 1000))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


@dataclass
class _Window:
    started: float
    requests: int = 0
    tokens: int = 0


@dataclass
class _ProjectState:
    window: _Window
    project_window: _Window
    seen: int = 0  # requests seen, for the deterministic spacing of injected faults


@dataclass
class Limiter:
    mutants: frozenset[str] = frozenset()
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _state: dict[tuple[str, str], _ProjectState] = field(default_factory=dict)

    def admit(self, spec: KeySpec, token_estimate: int) -> dict[str, str]:
        """Count one request; return its rate-limit headers or raise the 429/503 ApiError (with headers)."""
        with self._lock:
            now = self.clock()
            state = self._state.get((spec.organization, spec.project))
            if state is None:
                state = _ProjectState(_Window(now), _Window(now))
                self._state[(spec.organization, spec.project)] = state
            for window in (state.window, state.project_window):
                if now - window.started >= spec.window_s:
                    window.started, window.requests, window.tokens = now, 0, 0
            state.seen += 1

            if state.window.requests + 1 > spec.rpm:
                raise self._throttled(spec, state, now, "requests")
            if state.window.tokens + token_estimate > spec.tpm:
                raise self._throttled(spec, state, now, "tokens")
            if spec.project_tpm is not None and state.project_window.tokens + token_estimate > spec.project_tpm:
                raise self._throttled(spec, state, now, "project tokens")

            if "remaining-not-decreasing" not in self.mutants:
                state.window.requests += 1
            state.window.tokens += token_estimate
            state.project_window.tokens += token_estimate
            headers = self._headers(spec, state, now)
            if spec.fault_rate > 0 and _fault_due(state.seen, spec.fault_rate):
                raise ApiError(
                    503,
                    "server_is_overloaded",
                    "The server is overloaded (sandbox fault switch). Retry after the indicated time.",
                    type_="service_unavailable_error",
                    headers=headers
                    if spec.fault_retry_after_s is None
                    else {**headers, "Retry-After": str(spec.fault_retry_after_s)},
                )
            return headers

    def _throttled(self, spec: KeySpec, state: _ProjectState, now: float, what: str) -> ApiError:
        window = state.project_window if what == "project tokens" else state.window
        wait = max(1, math.ceil(window.started + spec.window_s - now))
        headers = self._headers(spec, state, now)
        # retry-after-duration-text: the reset's duration text ("1s"), neither delay-seconds nor an HTTP date
        headers["Retry-After"] = go_duration(wait) if "retry-after-duration-text" in self.mutants else str(wait)
        limit = {"requests": spec.rpm, "tokens": spec.tpm, "project tokens": spec.project_tpm}[what]
        return ApiError(
            429,
            "rate_limit_exceeded",
            f"Rate limit reached for {spec.project} in organization {spec.organization} on {what} "
            f"per window: limit {limit}. Please try again in {go_duration(wait)}.",
            type_="rate_limit_error",
            headers=headers,
        )

    def _headers(self, spec: KeySpec, state: _ProjectState, now: float) -> dict[str, str]:
        reset = go_duration(max(0.0, state.window.started + spec.window_s - now))
        if "reset-not-duration" in self.mutants:
            reset = f"{max(0.0, state.window.started + spec.window_s - now):.3f}"
        headers = {
            "x-ratelimit-limit-requests": str(spec.rpm),
            "x-ratelimit-remaining-requests": str(max(0, spec.rpm - state.window.requests)),
            "x-ratelimit-reset-requests": reset,
            "x-ratelimit-limit-tokens": str(spec.tpm),
            "x-ratelimit-remaining-tokens": str(max(0, spec.tpm - state.window.tokens)),
            "x-ratelimit-reset-tokens": reset,
        }
        # project-headers-without-limit: every key reports a project token limit, its token limit standing in
        project_tpm = spec.tpm if "project-headers-without-limit" in self.mutants else None
        project_tpm = spec.project_tpm if spec.project_tpm is not None else project_tpm
        if project_tpm is not None:
            headers["x-ratelimit-limit-project-tokens"] = str(project_tpm)
            headers["x-ratelimit-remaining-project-tokens"] = str(max(0, project_tpm - state.project_window.tokens))
            headers["x-ratelimit-reset-project-tokens"] = go_duration(
                max(0.0, state.project_window.started + spec.window_s - now)
            )
        return headers


def _fault_due(n: int, rate: float) -> bool:
    """True for the n-th request when floor(n·rate) steps up: rate 0.5 faults every second request."""
    return math.floor(n * rate) > math.floor((n - 1) * rate)


def estimate_tokens(body_text: str, max_tokens: object) -> int:
    """The token-rate estimate: the larger of ``max_tokens`` (or ``max_output_tokens``) and characters / 4."""
    by_chars = math.ceil(len(body_text) / 4)
    cap = max_tokens if is_int(max_tokens) and max_tokens > 0 else 0
    return max(by_chars, cap)
