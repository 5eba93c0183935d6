"""The host's own pace: each target's request budget, waits for the reset it announced, and throttled answers.

A polite client of a rate-limited API (the platform contract's client rules) does not spend its last
requests and then hammer a throttled key: it reads ``x-ratelimit-remaining-requests`` and
``x-ratelimit-reset-requests`` on every answer and, when the window is nearly spent, waits for the reset the server
announced. After a throttled answer it follows ``Retry-After`` (else backs off exponentially with jitter), slows
down, then ramps up again. Every such wait counts against one bound per run (``--max-throttle-wait``).

A throttled answer (429, or 503 overload) is no answer: a check of any rule but the rate-limit rules (which
judge throttling themselves and see raw answers) never gets one. It is retried within the bound; when that is not
enough the check is ``blocked`` by :class:`TargetThrottled`, never failed. A 429 that is a quota or billing error is not
retried (a person must act) and blocks the check the same way.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from conformance.core import _budget, _context
from conformance.core._exceptions import TargetThrottled, TargetTooSlow
from conformance.host._retry import USER_ACTION_CODES, RetryPolicy, error_code
from conformance.host.exchange import exchange_of

DEFAULT_MAX_WAIT_S = 600.0
RESERVE_SHARE = 0.02  # of a window's requests kept back (other clients of the key, clock skew): at least one
RESET_MARGIN_S = 0.1  # added to an announced reset: a window that ends "now" must really have ended
SAME_WINDOW_S = 0.5  # answers announcing resets this close apart speak of one window
# Retries of a throttled answer: Retry-After is followed however long (the run's bound decides), else full-jitter
# backoff from 1 s up to 30 s; attempts are bounded.
THROTTLE_RETRY = RetryPolicy(max_attempts=8, max_total_s=math.inf, base_s=1.0, cap_s=30.0, max_retry_after_s=math.inf)
# Go's time.Duration.String(): "0s", "20ms", "1.5s", "6m0s", "2m59.56s", "1h0m0s", "1.2µs" ...
_GO_DURATION = re.compile(r"^(?:0|(?:\d+(?:\.\d+)?(?:h|m|s|ms|us|µs|μs|ns))+)$")
_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|μs|ns)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}


def parse_duration(text: str | None) -> float | None:
    """Seconds of Go duration text (``1s``, ``6m0s``, ``20ms``), or None when it is not one."""
    if text is None or not _GO_DURATION.match(text.strip()):
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in _PART.findall(text.strip()))


def is_throttled(response: httpx.Response) -> bool:
    """A refusal for load, not an answer: 429 (rate limit, or a quota) or 503 (overload)."""
    return response.status_code in (429, 503)


@dataclass
class _Budget:
    """One key's request window as the target last announced it."""

    limit: int | None = None
    remaining: int | None = None
    reset_at: float | None = None  # monotonic time the window resets
    spacing: float = 0.0  # extra gap between requests after a throttled answer (slow down, then ramp up)
    last_sent: float = 0.0
    in_flight: int = 0  # requests sent and not answered yet (cases sent at once): the window has not counted them
    overlapped: bool = False  # requests were in flight together since the budget was last idle
    paused_until: float | None = None  # monotonic: a request waits for the window's reset; the others wait too


class Pacer:
    """Per-target request budgets and the run's throttle waits. One per run (shared by every HostHTTP call)."""

    def __init__(
        self,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        retry: RetryPolicy = THROTTLE_RETRY,
    ) -> None:
        self.max_wait_s = max_wait_s
        # The run's time spent waiting: checks that wait at once (for the same window's reset) wait that time
        # once, so a wait counts only past the end of every wait counted before it.
        self.waited_s = 0.0
        self._waits_end = -math.inf  # (clock) when the last of the waits counted so far ends
        self.retry = retry
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._budgets: dict[tuple[str, str], _Budget] = {}

    # -- the budget ----------------------------------------------------------------------------------------

    @staticmethod
    def key(url: str, headers: Mapping[str, str] | None) -> tuple[str, str]:
        """Windows are per target and credential (keys of different projects have their own)."""
        auth = next((v for k, v in (headers or {}).items() if k.lower() == "authorization"), "")
        return _origin("/".join(url.split("/", 3)[:3])), _credential(auth)  # scheme://authority: few per run

    def left_s(self) -> float:
        return max(0.0, self.max_wait_s - self.waited_s)

    def observe(self, key: tuple[str, str], response: httpx.Response) -> None:
        """Learn the window from an answer's ``x-ratelimit-*-requests`` headers (invalid values are ignored)."""
        headers = response.headers
        remaining = _count(headers.get("x-ratelimit-remaining-requests"))
        reset = parse_duration(headers.get("x-ratelimit-reset-requests"))
        with self._lock:
            budget = self._budgets.setdefault(key, _Budget())
            now = self._clock()
            concurrent = budget.overlapped  # answered among others sent at once: it may be older than the last
            budget.in_flight = max(0, budget.in_flight - 1)
            if budget.in_flight == 0:
                budget.overlapped = False
            if remaining is not None and reset is not None:
                budget.limit = _count(headers.get("x-ratelimit-limit-requests"))
                reset_at = now + reset
                same_window = budget.reset_at is not None and reset_at <= budget.reset_at + SAME_WINDOW_S
                if concurrent and same_window and budget.remaining is not None:
                    # Answers to requests sent at once arrive in any order: an older one's count is stale.
                    remaining = min(remaining, budget.remaining)
                budget.remaining, budget.reset_at = remaining, reset_at
            if is_throttled(response):
                budget.spacing = min(max(2 * budget.spacing, 0.05), 1.0)
            else:
                budget.spacing = budget.spacing * 0.8 if budget.spacing > 0.01 else 0.0

    def before(self, key: tuple[str, str]) -> None:
        """Wait, if need be, before sending: for the reset when the window is nearly spent, and the slow-down gap
        after a throttled answer. Never beyond the run's bound (then the request goes out as it is). Every call is
        a request sent: it is in flight until :meth:`observe` (its answer) or :meth:`abandon` (no answer)."""
        wait, _ = self.reserve(key)
        if wait > 0:
            self._sleep(wait)

    def reserve(self, key: tuple[str, str], *, pace: bool = True) -> tuple[float, str]:
        """:meth:`before` without the sleep: the seconds to wait before sending (already counted as waited) and
        why, for a caller that sleeps its own way (the async client). ``pace`` False: the request is only counted
        in flight (a rate-limit check spending its window to the last request)."""
        with self._lock:
            budget = self._budgets.setdefault(key, _Budget())
            budget.in_flight += 1
            budget.overlapped = budget.overlapped or budget.in_flight > 1
            if not pace:
                return 0.0, ""
            now = self._clock()
            wait, why = 0.0, ""
            if budget.paused_until is not None and budget.paused_until > now:
                wait = budget.paused_until - now
                why = f"the window is spent: waiting {wait:.1f}s for its reset"
            elif budget.remaining is not None and budget.reset_at is not None and budget.reset_at > now:
                reserve = max(1, math.ceil((budget.limit or 0) * RESERVE_SHARE))
                # Requests in flight are not counted in the remaining the target last announced.
                if budget.remaining - (budget.in_flight - 1) <= reserve:
                    wait = budget.reset_at - now + RESET_MARGIN_S + 0.01 * (budget.reset_at - now)
                    why = f"{budget.remaining} request(s) left in the window: waiting {wait:.1f}s for its reset"
                    budget.remaining = budget.reset_at = None  # unknown until the next answer
                    budget.paused_until = now + wait
            if not wait and budget.spacing:
                wait = max(0.0, budget.last_sent + budget.spacing - now)
                why = f"slowing down after a throttled answer ({wait:.2f}s)"
            budget.last_sent = max(budget.last_sent, now + wait)
        if wait > 0 and self.allow(wait):
            self.count_wait(wait, why)
            return wait, why
        return 0.0, ""

    def sleep(self, seconds: float) -> None:
        """Sleep a wait :meth:`reserve` or :meth:`retry_delay` asked for (with the pacer's own sleep)."""
        self._sleep(seconds)

    def abandon(self, key: tuple[str, str]) -> None:
        """A request :meth:`before` let through got no answer (a transport failure): no longer in flight."""
        with self._lock:
            budget = self._budgets.get(key)
            if budget is not None:
                budget.in_flight = max(0, budget.in_flight - 1)
                if budget.in_flight == 0:
                    budget.overlapped = False

    # -- throttled answers ---------------------------------------------------------------------------------

    def retry_delay(self, response: httpx.Response, attempt: int, what: Callable[[], str]) -> float | None:
        """For a throttled answer met by a check that does not judge throttling: seconds to wait before sending it
        again, or :class:`TargetThrottled` when the answer cannot be waited out. None: hand the answer back (no check
        is running, or it is a rate-limit check, which judges throttling itself). ``what()``: the request, redacted
        (asked for only when a throttled answer needs words)."""
        record = _context.current()
        if record is None or record.judges_throttling or not is_throttled(response):
            return None
        retry_after = response.headers.get("retry-after")
        shown = f"{what()} → {response.status_code}" + (f" {error_code(response)}" if error_code(response) else "")
        shown += f", Retry-After {retry_after!r}" if retry_after is not None else ""
        if response.status_code == 429 and error_code(response) in USER_ACTION_CODES and retry_after is None:
            raise TargetThrottled(
                f"{shown}: a quota or billing error (a person must act), not retried", exchange=exchange_of(response)
            )
        wait = self.retry.delay(response, attempt, 0.0)  # Retry-After when it parses, else jittered backoff
        if wait is None:
            raise TargetThrottled(
                f"{shown}, still throttled after {attempt + 1} attempt(s)", exchange=exchange_of(response)
            )
        left = _budget.run_left()
        if left is not None and wait >= left:
            raise TargetTooSlow(
                f"{shown}: waiting {wait:.0f}s for the target's rate limit would pass the run's time budget "
                "(--max-run-time)",
                exchange=exchange_of(response),
            )
        if not self.allow(wait):
            raise TargetThrottled(
                f"{shown}: waiting {wait:.0f}s more would pass the run's bound of {self.max_wait_s:.0f}s for "
                f"throttle waits ({self.waited_s:.0f}s spent; raise --max-throttle-wait)",
                exchange=exchange_of(response),
            )
        return wait

    # -- waiting -------------------------------------------------------------------------------------------

    def allow(self, seconds: float) -> bool:
        """Whether waiting ``seconds`` stays within the run's bound for throttle waits and its time budget."""
        left = _budget.run_left()
        with self._lock:
            more = self._beyond_waits(seconds)
        return self.waited_s + more <= self.max_wait_s and (left is None or seconds < left)

    def _beyond_waits(self, seconds: float) -> float:
        """The part of a wait of ``seconds`` from now that no wait counted before covers (under the lock)."""
        now = self._clock()
        return max(0.0, now + seconds - max(now, self._waits_end))

    def wait(self, seconds: float, why: str) -> None:
        """Sleep ``seconds`` for a target's rate limit; counted in the run's total and on the running check."""
        if seconds <= 0:
            return
        self.count_wait(seconds, why)
        self._sleep(seconds)

    def count_wait(self, seconds: float, why: str) -> None:
        """Count a wait of ``seconds`` for a target's rate limit, starting now (the caller sleeps it): all of it on
        the running check, what no other wait covers in the run's total."""
        if seconds <= 0:
            return
        record = _context.current()
        if record is not None:
            if not record.throttle_wait_s:  # one note per check says why it took longer
                record.notes.append(f"waited for the target's rate limit ({why})")
            record.throttle_wait_s += seconds
        with self._lock:
            self.waited_s += self._beyond_waits(seconds)
            self._waits_end = max(self._waits_end, self._clock() + seconds)


# Every request asks for its key: the same few origins and credentials over a run, so each is worked out once.
@functools.lru_cache(maxsize=256)
def _origin(prefix: str) -> str:
    parts = httpx.URL(prefix)
    return f"{parts.scheme}://{parts.host}:{parts.port}"


@functools.lru_cache(maxsize=256)
def _credential(auth: str) -> str:
    return hashlib.sha256(auth.encode()).hexdigest()[:16]


def _count(raw: str | None) -> int | None:
    return int(raw) if raw is not None and raw.strip().isdigit() else None
