"""Rate limits: ``x-ratelimit-*`` headers, throttling, overload (RL-01..05, RL-07). RL-06, the harness as a good
client, is proven by the project's own tests against the reference sandbox."""

from __future__ import annotations

import random
import time

import httpx

from conformance import Blocked, alone, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host import USER_ACTION_CODES, parse_duration
from conformance.suites.platform.client import (
    TOKEN_COUNT_HEADERS,
    PlatformApi,
    describe,
    error_object,
    expect_json_error,
    key_fingerprint,
    ledger_of,
    parse_retry_after,
)
from conformance.verdict._verdicts import Throttled

CHEAP = "/v1/campaigns"  # a cheap authenticated GET (limit=1)
THROTTLE_OPTION = "CONFORMANCE_PLATFORM_THROTTLE_API_KEY (a key with a low limit) or --platform-rl-budget"
FAULT_OPTION = "CONFORMANCE_PLATFORM_FAULT_API_KEY (a key the sandbox's fault switch answers 503)"
PROJECT_OPTION = "--platform-project-token-limit-keys"


def _sample(api: PlatformApi, settings: Settings) -> None:
    """Add responses of every kind to the ledger: success, validation error, unknown id, the other keys. Once per
    target and run (``api`` is the run's, one per target): RL-01, RL-05 and RL-07 judge the same ledger, and a
    second round spent the throttle key's small window down to the host's reserve, so that the host waited for its
    reset (a short wait against the reference sandbox, whose throttle key's window is small)."""
    if api.sampled:
        return
    api.count_raw(api.body(input="rate limit headers"))
    api.count_raw(api.body(input=42))
    api.get(CHEAP, params={"limit": 1})
    api.get("/v1/campaigns/cmp_conformance_unknown")
    for option in ("platform_throttle_api_key", "platform_fault_api_key"):
        key = settings.get(option)
        if key:
            api.count_raw(api.body(input="rate limit headers"), api_key=str(key))
    api.sampled = True


@alone("judged over every answer of its target the other checks received (the rate-limit ledger)")
@rule("RL-01")
def test_headers_are_consistent(platform_api: PlatformApi, conformance_settings: Settings) -> None:
    # Runs after every other check: the ledger holds every response the platform and campaigns checks saw.
    _sample(platform_api, conformance_settings)
    ledger = ledger_of(platform_api.target)
    if not ledger.with_headers:
        needs("x-ratelimit-* headers on the target's responses")
    problems = ledger.problems["RL-01"]
    expect(not problems, f"inconsistent x-ratelimit-* headers: {' | '.join(problems)}")
    observe(f"{ledger.with_headers} of {ledger.responses} responses of the run carried x-ratelimit-* headers")


def _remaining(response: httpx.Response) -> int | None:
    raw = response.headers.get("x-ratelimit-remaining-requests")
    return int(raw) if raw is not None and raw.strip().isdigit() else None


def _reset_s(response: httpx.Response) -> float | None:
    """Seconds until the window resets, as the answer announced it (Retry-After first on a 429)."""
    retry_after = parse_retry_after(response.headers.get("retry-after")) if response.status_code == 429 else None
    reset = parse_duration(response.headers.get("x-ratelimit-reset-requests"))
    return retry_after if retry_after is not None else reset


def _window_wait(api: PlatformApi, seconds: float, why: str, *, bounded: bool = True) -> None:
    """Wait for the target's window, counted in the run's throttle wait. ``bounded``: blocked rather than waiting
    beyond the run's bound (``--max-throttle-wait``)."""
    pacer = api.http.pacer
    if pacer is None:
        time.sleep(seconds)
        return
    if bounded and not pacer.allow(seconds):
        raise Throttled(f"{why}: waiting {seconds:.0f}s would pass the run's bound of {pacer.max_wait_s:.0f}s")
    pacer.wait(seconds, why)


ROOM = 6  # requests RL-02 spends in one window: four measured steps, with room to spare


def _window_with_room(api: PlatformApi, steps: int) -> None:
    """RL-02 decides only where the window has room to decrease: when it has not (a window at 0 cannot show a
    decrease), wait for the reset the target announced."""
    probe = api.get(CHEAP, params={"limit": 1}, pace=False)
    left = _remaining(probe)
    if probe.status_code != 429 and (left is None or left >= ROOM):
        return
    limit = probe.headers.get("x-ratelimit-limit-requests", "").strip()
    if limit.isdigit() and int(limit) < steps:
        needs(f"a request window of at least {steps} requests (x-ratelimit-limit-requests is {limit})")
    wait = _reset_s(probe)
    if wait is None:
        needs("x-ratelimit-reset-requests (or Retry-After) to wait for a window with room to decrease")
    _window_wait(api, wait + 0.1, f"RL-02 needs {ROOM} requests in one window, {left} left")


@alone("reads x-ratelimit-remaining-requests before and after its own requests, which any other request moves")
@rule("RL-02")
def test_remaining_requests_decreases(platform_api: PlatformApi) -> None:
    # Successful and failed requests alike must consume the request budget. Unpaced: RL-02 controls its window.
    steps = {
        "a list request": lambda: platform_api.get(CHEAP, params={"limit": 1}, pace=False),
        "a rejected token count (400)": lambda: platform_api.count_raw(platform_api.body(input=42), pace=False),
        "an unknown campaign (404)": lambda: platform_api.get("/v1/campaigns/cmp_conformance_unknown", pace=False),
        "another list request": lambda: platform_api.get(CHEAP, params={"limit": 1}, pace=False),
    }
    for attempt in range(2):
        _window_with_room(platform_api, len(steps))
        seen: list[tuple[str, int, float, float]] = []  # what, remaining, reset (s), when
        window_ended = False
        for what, step in steps.items():
            response = step()
            if response.status_code == 429:
                # The window ran out under us (another client of the key): measure again in the next one.
                if attempt == 0:
                    window_ended = True
                    break
                raise Throttled(f"RL-02's requests were throttled twice with room announced: {describe(response)}")
            value = _remaining(response)
            if value is None:
                needs("x-ratelimit-remaining-requests on every response")
            reset = _reset_s(response)
            now = time.monotonic()
            if seen and value >= seen[-1][1]:
                # A window that ended in between legitimately restores the budget: measure again once.
                _, _, last_reset, last_at = seen[-1]
                if attempt == 0 and (last_reset < 5.0 or now - last_at >= last_reset - 0.05):
                    window_ended = True
                    break
                fail(
                    f"x-ratelimit-remaining-requests did not decrease: {seen[-1][0]} left {seen[-1][1]}, "
                    f"then {what} left {value}"
                )
            seen.append((what, value, reset if reset is not None else float("inf"), now))
        if not window_ended:
            observe("x-ratelimit-remaining-requests: " + " → ".join(f"{left} after {what}" for what, left, *_ in seen))
            return
    fail("the request window kept resetting; remaining-requests could not be observed within one window")


def _wait_for(response: httpx.Response, settings: Settings) -> float:
    """Seconds to wait after a 429: Retry-After when given (must parse), else the request reset time, else 1 s."""
    raw = response.headers.get("retry-after")
    longest = float(settings.get("platform_max_retry_after", 65.0))
    if raw is not None:
        seconds = parse_retry_after(raw)
        if seconds is None:
            fail(f"Retry-After {raw!r} is neither delta-seconds nor an HTTP date")
        if seconds > longest:
            needs(f"a Retry-After of at most {longest:.0f}s (got {seconds:.0f}s)", "--platform-max-retry-after")
        return seconds
    reset = parse_duration(response.headers.get("x-ratelimit-reset-requests"))
    return min(reset, longest) if reset is not None else 1.0


BACKOFF_TRIES = 3  # after the announced wait, at most this many more requests, backing off between them
BACKOFF_FIRST_S = 0.5
BACKOFF_TOTAL_S = 10.0


def _after_the_wait(api: PlatformApi, key: str | None, waited: float) -> str:
    """RL-03's reported part: a request after the announced wait, then bounded exponential backoff with jitter
    (Retry-After first) while still throttled, as the contract's clients do (P Errors 2). Says how it went."""
    delay, tries = BACKOFF_FIRST_S, 1
    after = api.get(CHEAP, params={"limit": 1}, api_key=key, pace=False)
    while after.status_code == 429 and tries <= BACKOFF_TRIES and waited < BACKOFF_TOTAL_S:
        told = parse_retry_after(after.headers.get("retry-after"))
        pause = min(told if told is not None else delay * (1 + random.random()), BACKOFF_TOTAL_S - waited)
        _window_wait(api, pause, f"RL-03 backs off ({pause:.1f}s)", bounded=False)
        waited, delay, tries = waited + pause, delay * 2, tries + 1
        after = api.get(CHEAP, params={"limit": 1}, api_key=key, pace=False)
    outcome = "succeeded" if after.status_code < 400 else f"still failed ({describe(after)[:100]})"
    return f"a request after the wait and backoff ({tries} tries, {waited:.1f}s) {outcome}"


# With a throttle key of its own, RL-03 spends that key's window only, which no other check before the ledger's
# uses (the pacer keeps a window per key): it runs beside the rest.
@alone(
    "spends a key's request window to its last request on purpose: any other request would meet the 429",
    unless=("platform_throttle_api_key",),
)
@rule("RL-03")
def test_throttling_and_retry_after(platform_api: PlatformApi, conformance_settings: Settings) -> None:
    # Unpaced: RL-03 spends its key's window to the last request on purpose, then waits it out (the request after
    # Retry-After opens a fresh window), so no later check pays for it.
    key = conformance_settings.get("platform_throttle_api_key")
    budget = int(conformance_settings.get("platform_rl_budget", 60))
    first = platform_api.get(CHEAP, params={"limit": 1}, api_key=key, pace=False)
    limit = first.headers.get("x-ratelimit-limit-requests", "")
    left = _remaining(first)
    if left is None and limit.strip().isdigit():
        left = int(limit)
    if left is not None and left >= budget:
        needs(
            f"a request window within the budget of {budget} requests ({left} left of {limit or '?'})",
            THROTTLE_OPTION,
        )
    throttled = first if first.status_code == 429 else None
    for _ in range(budget - 1):
        if throttled is not None:
            break
        response = platform_api.get(CHEAP, params={"limit": 1}, api_key=key, pace=False)
        if response.status_code == 429:
            throttled = response
    if throttled is None:
        needs(f"throttling within {budget} requests", THROTTLE_OPTION)
    error = error_object(throttled) or {}
    code, kind = error.get("code"), error.get("type")
    if code in USER_ACTION_CODES or kind in USER_ACTION_CODES:
        fail(f"the 429 is a quota or billing error ({kind}/{code}), not a temporary rate limit")
    wait = _wait_for(throttled, conformance_settings)  # fails on a Retry-After that does not parse
    body = f"{kind}/{code}" if error else "no JSON error body (a plain 429)"
    observe(f"throttled: 429, {body}, Retry-After {throttled.headers.get('retry-after')!r}")
    _window_wait(platform_api, wait + 0.05, f"RL-03 follows Retry-After ({wait:.1f}s)", bounded=False)
    observe(f"reported: {_after_the_wait(platform_api, key, wait + 0.05)}")


@alone("judged over every answer of its target the other checks received (the rate-limit ledger)")
@rule("RL-04")
def test_overload_answer(platform_api: PlatformApi, conformance_settings: Settings) -> None:
    # Runs after every other check: a 503 any of them met is judged too (see ledger_of).
    key = conformance_settings.get("platform_fault_api_key")
    overloaded = ledger_of(platform_api.target).overloaded
    for _ in range(10 if key and overloaded is None else 0):
        response = platform_api.count_raw(platform_api.body(input="are you overloaded?"), api_key=str(key))
        if response.status_code == 503:
            overloaded = response
            break
    if overloaded is None:
        needs("the sandbox's fault switch or an observed 503", FAULT_OPTION)
    observe(f"judged: {describe(overloaded)[:100]}")
    error = expect_json_error(overloaded, (503,), "the overloaded request")
    expect(
        (error.get("type"), error.get("code")) == ("service_unavailable_error", "server_is_overloaded"),
        f"503 error is {error.get('type')}/{error.get('code')}, "
        "expected service_unavailable_error/server_is_overloaded",
    )
    raw = overloaded.headers.get("retry-after")
    if raw is not None:
        expect(parse_retry_after(raw) is not None, f"Retry-After {raw!r} on the 503 does not parse")


@alone("judged over every answer of its target the other checks received (the rate-limit ledger)")
@rule("RL-05")
def test_project_token_headers_only_with_a_project_limit(
    platform_api: PlatformApi, conformance_settings: Settings
) -> None:
    # Runs after every other check, over every response of its target (see ledger_of).
    _sample(platform_api, conformance_settings)
    ledger = ledger_of(platform_api.target)
    keys = {
        "main": platform_api.target.api_key,
        "throttle": conformance_settings.get("platform_throttle_api_key"),
        "fault": conformance_settings.get("platform_fault_api_key"),
    }
    answers = {
        role: ledger.by_key.get(key_fingerprint(platform_api.headers(str(key))["Authorization"]))
        for role, key in keys.items()
        if key
    }
    seen = {role: f"{a.with_project_headers}/{a.responses}" for role, a in answers.items() if a is not None}
    observe(f"answers with project-token headers, by key: {seen}")
    if ledger.project_apart:
        observe("reported: project-token headers that did not appear together: " + " | ".join(ledger.project_apart))
    roles = conformance_settings.get("platform_project_token_limit_keys")
    if not roles:
        needs("which configured platform keys have a project-scoped token limit", PROJECT_OPTION)
    limited = set() if list(roles) == ["none"] else set(roles)
    judged = {role: a for role, a in answers.items() if role not in limited and a is not None and a.responses}
    if not judged:
        needs("answers to a configured key without a project-scoped token limit", PROJECT_OPTION)
    wrong = [
        f"the {role} key (no project-scoped token limit): {a.with_project_headers} of {a.responses} answers carried "
        f"project-token headers, e.g. {a.example}"
        for role, a in judged.items()
        if a.with_project_headers
    ]
    expect(not wrong, "; ".join(wrong))
    observe(f"no project-token headers on the answers to the {', '.join(judged)} key(s), which have no such limit")


@alone("judged over every answer of its target the other checks received (the rate-limit ledger)")
@rule("RL-07")
def test_token_counts_carry_rate_limit_headers(platform_api: PlatformApi, conformance_settings: Settings) -> None:
    # Runs after every other check, over every token count of its target (see ledger_of).
    _sample(platform_api, conformance_settings)
    ledger = ledger_of(platform_api.target)
    if not ledger.token_counts:
        raise Blocked("TOK-01", "no token count of the run succeeded")
    problems = ledger.problems["RL-07"]
    expect(not problems, f"token counts without the x-ratelimit-* headers: {' | '.join(problems)}")
    observe(f"{ledger.token_counts} token counts of the run carried {', '.join(TOKEN_COUNT_HEADERS)}")
