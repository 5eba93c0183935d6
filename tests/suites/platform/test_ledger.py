"""The rate-limit ledger (RL-01, RL-05 over every response of a run) reads each response's headers once, as httpx's
``Headers`` answers them: names in any case, a repeated header joined by ", "."""

from __future__ import annotations

import httpx

from conformance.suites.platform.client import (
    RateLimitLedger,
    header_values,
    project_header_problems,
    rate_limit_problems,
)

URL = "https://platform.example/v1/campaigns"


def answer(headers: list[tuple[str, str]], status: int = 200) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={}, request=httpx.Request("GET", URL))


def test_header_values_are_what_headers_get_answers() -> None:
    response = answer([("X-RateLimit-Limit-Requests", "60"), ("x-ratelimit-limit-requests", "30"), ("Date", "x")])
    values = header_values(response)
    assert values["x-ratelimit-limit-requests"] == response.headers.get("X-RATELIMIT-LIMIT-REQUESTS") == "60, 30"
    assert set(values) == {name.lower() for name in response.headers}


def test_the_ledger_judges_headers_in_any_case() -> None:
    ledger = RateLimitLedger()
    good = answer(
        [
            ("X-RateLimit-Limit-Requests", "60"),
            ("X-RateLimit-Remaining-Requests", "59"),
            ("X-RateLimit-Reset-Requests", "1s"),
        ]
    )
    bad = answer(
        [
            ("X-RateLimit-Limit-Requests", "5"),
            ("X-RateLimit-Remaining-Requests", "7"),
            ("X-RateLimit-Reset-Tokens", "soon"),
            ("X-RateLimit-Limit-Project-Tokens", "1000"),
        ],
        status=503,
    )
    plain = answer([("Content-Type", "application/json")])
    for response in (good, bad, plain):
        ledger.absorb(response)
    assert (ledger.responses, ledger.with_headers, ledger.with_project_headers) == (3, 2, 1)
    assert ledger.overloaded is bad
    (rl01,) = ledger.problems["RL-01"]
    assert "x-ratelimit-remaining-requests 7 exceeds x-ratelimit-limit-requests 5" in rl01
    assert "x-ratelimit-reset-tokens: 'soon' is not duration text" in rl01
    (rl05,) = ledger.problems["RL-05"]
    assert "without x-ratelimit-remaining-project-tokens, x-ratelimit-reset-project-tokens" in rl05


def test_a_repeated_header_is_judged_as_joined() -> None:
    # Two values of one header read as "5, 6" (as Headers.get gives them): not an integer.
    response = answer([("x-ratelimit-remaining-requests", "5"), ("x-ratelimit-remaining-requests", "6")])
    assert rate_limit_problems(response) == ["x-ratelimit-remaining-requests: '5, 6' is not a non-negative integer"]
    assert rate_limit_problems(response) == rate_limit_problems(header_values(response))
    assert project_header_problems(answer([("X-RateLimit-Reset-Project-Tokens", "1s")])) != []
