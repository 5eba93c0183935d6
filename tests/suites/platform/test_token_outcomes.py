"""What the token-count checks judge and what they only report: TOK-07 fails a count given to a request it should
refuse, whatever the refusal looks like (its status, a 5xx warning and its body are notes); TOK-05 fails a count
that an append lowers by more than one token and reports a one-token drop (a BPE merge)."""

from __future__ import annotations

import httpx
import pytest

from conformance import Failure
from conformance.suites.platform.test_tokens import Refusals, not_lowered

URL = "https://platform.example/v1/responses/input_tokens"


def answer(status: int, body: object) -> httpx.Response:
    return httpx.Response(status, json=body, request=httpx.Request("POST", URL))


def test_a_counted_bad_request_fails_whatever_its_status() -> None:
    refusals = Refusals()
    for status in (200, 201, 299):
        with pytest.raises(Failure, match="counted instead of refused"):
            refusals.refused("input is a number", answer(status, {"input_tokens": 3}))


def test_any_refusal_passes_and_its_form_is_reported() -> None:
    refusals = Refusals()
    refusals.refused("a wrong key", answer(401, {"error": {"code": "invalid_api_key"}}))
    refusals.refused("input is a number", answer(422, {"detail": "bad"}))
    refusals.refused("unknown content part type", answer(500, {"error": {"code": None}}))
    assert refusals.statuses == {401: ["a wrong key"], 422: ["input is a number"], 500: ["unknown content part type"]}
    assert refusals.server_errors == ["unknown content part type (500)"]  # the warning of RFC 9110 §15.6
    assert refusals.not_json == ["input is a number"]


def test_an_append_may_lower_the_count_by_one_token_only() -> None:
    merges: list[str] = []
    not_lowered(10, 12, "a line", merges)
    not_lowered(10, 10, "an empty line", merges)
    not_lowered(10, 9, "a line glued by a merge", merges)
    assert merges == ["a line glued by a merge: 10 → 9"]
    with pytest.raises(Failure, match="lowered the count by 2 tokens"):
        not_lowered(10, 8, "a message", merges)
