"""The rate-limit ledger (RL-01, RL-05, RL-07 over every response of a run) reads each response's headers once, as
``Headers`` answers them: names in any case, a repeated header joined by ", "."""

from __future__ import annotations

import httpx
import pytest

from conformance.judges.platform import header_values, project_header_problems, rate_limit_problems
from conformance.suites.platform.client import TOKEN_COUNT_HEADERS, RateLimitLedger, key_fingerprint

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
    (apart,) = ledger.project_apart  # RL-05's reported form
    assert "without x-ratelimit-remaining-project-tokens, x-ratelimit-reset-project-tokens" in apart
    assert ledger.problems["RL-07"] == [] and ledger.token_counts == 0  # no token count among them


def test_the_ledger_tells_keys_apart_and_judges_token_counts() -> None:
    """RL-05 reads which key got project-token headers (by a fingerprint, never the key); RL-07 reads the headers
    of every successful token count."""
    ledger = RateLimitLedger()
    count = "https://platform.example/v1/responses/input_tokens"
    six = [(name, "1s" if "reset" in name else "5") for name in TOKEN_COUNT_HEADERS]
    project = [("x-ratelimit-limit-project-tokens", "9")]

    def sent(key: str, url: str, headers: list[tuple[str, str]], status: int = 200) -> None:
        request = httpx.Request("POST", url, headers={"Authorization": f"Bearer {key}"})
        ledger.absorb(httpx.Response(status, headers=headers, json={}, request=request))

    sent("sk-main", count, six + project)
    sent("sk-main", URL, project)
    sent("sk-other", count, six[:3])
    sent("sk-other", count, [], status=400)  # a refused count: not RL-07's
    main, other = (ledger.by_key[key_fingerprint(f"Bearer {k}")] for k in ("sk-main", "sk-other"))
    assert (main.responses, main.with_project_headers, other.responses, other.with_project_headers) == (2, 2, 2, 0)
    assert "sk-main" not in repr(ledger.by_key)
    assert ledger.token_counts == 2
    (rl07,) = ledger.problems["RL-07"]
    assert "without x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens" in rl07


def test_a_repeated_header_is_judged_as_joined() -> None:
    # Two values of one header read as "5, 6" (as Headers.get gives them): not an integer.
    response = answer([("x-ratelimit-remaining-requests", "5"), ("x-ratelimit-remaining-requests", "6")])
    assert rate_limit_problems(response) == ["x-ratelimit-remaining-requests: '5, 6' is not a non-negative integer"]
    assert rate_limit_problems(response) == rate_limit_problems(header_values(response))
    assert project_header_problems(answer([("X-RateLimit-Reset-Project-Tokens", "1s")])) != []


def test_the_project_limit_keys_are_named_by_role() -> None:
    from conformance.suites.platform.options import key_roles

    key_roles(["main", "fault"])
    key_roles(["none"])
    for bad in (["primary"], ["main", "none"], []):
        with pytest.raises(ValueError, match="main, throttle, fault"):
            key_roles(bad)
