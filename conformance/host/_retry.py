"""The host's retry policy, as the platform contract asks of clients.

Follow ``Retry-After`` (seconds or an HTTP date) when present; otherwise exponential backoff with full jitter.
Attempts and total time are bounded. Errors that need a person are never retried: 401, 403, and a 429 that is a
quota, billing or spend-limit error.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from conformance.host import _json as target_json

# error.code / error.type values that mean "a person must act" (quota, billing, hard spend limit).
USER_ACTION_CODES = frozenset(
    {
        "insufficient_quota",
        "billing_hard_limit_reached",
        "billing_not_active",
        "spend_limit_reached",
        "hard_spend_limit_reached",
        "quota_exceeded",
        "account_deactivated",
    }
)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or HTTP-date); None when absent or invalid."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
        return max(0.0, seconds)
    if seconds != seconds or seconds < 0:  # NaN or negative
        return None
    return seconds


def error_code(response: httpx.Response) -> str | None:
    """``error.code`` (or ``error.type``) of a JSON error body, if any."""
    try:
        body = target_json.loads(response.content) if response.content else None
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            for key in ("code", "type"):
                if isinstance(error.get(key), str):
                    return str(error[key])
        elif isinstance(error, str):
            return error
    return None


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4  # including the first
    max_total_s: float = 30.0  # never wait beyond this in sum
    base_s: float = 0.5
    cap_s: float = 8.0
    max_retry_after_s: float = 60.0  # a Retry-After beyond this is not waited for
    retry_statuses: frozenset[int] = field(default_factory=lambda: frozenset({408, 429, 500, 502, 503, 504}))
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(cap, base * 2**attempt)] (attempt counts from 0)."""
        return self.rng.uniform(0.0, min(self.cap_s, self.base_s * (2**attempt)))

    def delay(self, response: httpx.Response, attempt: int, elapsed_s: float) -> float | None:
        """Seconds to wait before the next attempt, or None to stop and hand the response back."""
        if attempt + 1 >= self.max_attempts or response.status_code not in self.retry_statuses:
            return None
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        if response.status_code == 429 and retry_after is None and error_code(response) in USER_ACTION_CODES:
            return None  # quota or billing: retrying cannot help, a person must act
        wait = retry_after if retry_after is not None else self.backoff(attempt)
        if retry_after is not None and retry_after > self.max_retry_after_s:
            return None
        if elapsed_s + wait > self.max_total_s:
            return None
        return wait


NO_RETRY = RetryPolicy(max_attempts=1)
DEFAULT_RETRY = RetryPolicy()
