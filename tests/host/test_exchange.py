"""One evidence type and one recorder: every exchange is an ``Exchange`` captured by one redaction pass,
its JSON form is the report's exchange object, and the host's signals carry the exchange that caused them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources

import httpx
import jsonschema
import pytest

from conformance.core import _context
from conformance.host import (
    BODY_EXCERPT_CHARS,
    Exchange,
    HostHTTP,
    InvalidResponse,
    Redactor,
    TargetUnreachable,
    UrlGuard,
    exchange_of,
    json_field,
    record_exchange,
)

SECRET = "sk_exchange_secret_42"


def mock(handler: object) -> HostHTTP:
    return HostHTTP(
        transport=httpx.MockTransport(handler),  # type: ignore[arg-type]
        guard=UrlGuard(),
        retry=None,
        redactor=Redactor([SECRET]),
    )


@pytest.fixture
def check() -> Iterator[_context.CheckRecord]:
    record = _context.begin(["AUTH-PRM-01"])
    yield record
    _context.end()


def test_a_recorded_exchange_round_trips(check: _context.CheckRecord) -> None:
    mock(lambda r: httpx.Response(200, json={"token": SECRET, "ok": True})).post(
        f"https://t.example/v1?key={SECRET}", headers={"Authorization": f"Bearer {SECRET}"}, json={"a": 1}
    )
    record_exchange(
        Redactor(),
        direction="inbound",
        peer="127.0.0.1",
        document="client",
        method="GET",
        url="https://h.example/client.json",
        status=200,
        response_headers={"content-type": "application/json"},
        response_body=b"{}",
    )
    record_exchange(Redactor(), method="GET", url="https://s.example/o", status=404, client="boto3", note="kept")
    outbound, inbound, by_hand = check.exchanges
    assert SECRET not in str(check.exchanges)
    for data in check.exchanges:
        again = Exchange.from_json(data).to_json()
        assert again == data and list(again) == list(data)  # same keys, same order: the report is unchanged
    assert list(inbound)[:3] == ["direction", "peer", "document"] and "direction" not in outbound
    assert by_hand["client"] == "boto3" and by_hand["note"] == "kept" and by_hand["response_body"] is None


def test_the_recorder_keeps_what_an_exchange_captured_holds(check: _context.CheckRecord) -> None:
    """The recorder makes the JSON form at once: the same members, in the same order, as the captured
    ``Exchange``'s (tags first, ``client`` after the fields, the others last; a tag named ``extra`` is none)."""
    given: list[dict[str, object]] = [
        {
            "method": "GET",
            "url": f"https://a.example/cb?code=c0de-{SECRET}&state=s",
            "request_headers": httpx.Headers({"Authorization": f"Bearer {SECRET}", "X-A": "1"}),
            "status": 302,
            "response_headers": httpx.Headers([("location", "/next?code=abcdefgh12"), ("set-cookie", "a=b")]),
            "response_body": json.dumps({"access_token": "t0k3n-value", "note": SECRET}).encode(),
            "elapsed_s": 0.123456,
        },
        {
            "method": "POST",
            "url": "https://a.example/token",
            "request_headers": {"Content-Type": "application/x-www-form-urlencoded"},
            "request_body": f"code=abcdefgh12&client_secret={SECRET}".encode(),
            "error": f"refused {SECRET}",
            "direction": "inbound",
            "peer": "127.0.0.1",
            "client": "raw socket",
            "case": "one",
            "extra": {"dropped": True},
            "note": "kept",
        },
        {"method": "GET", "url": "https://a.example/", "document": "metadata", "peer": None, "client": None},
        {"method": "GET", "url": "https://a.example/" + "x" * 3000, "response_headers": {"X-Long": "y" * 3000}},
    ]
    for capture in given:
        expected = Exchange.capture(Redactor([SECRET]), started_at="2026-01-01T00:00:00.000Z", **capture).to_json()
        recorded = record_exchange(Redactor([SECRET]), started_at="2026-01-01T00:00:00.000Z", **capture)
        assert recorded == expected and list(recorded or {}) == list(expected)
    assert SECRET not in json.dumps(check.exchanges) and "dropped" not in json.dumps(check.exchanges)


def test_every_recorded_exchange_fits_the_report_schema(check: _context.CheckRecord) -> None:
    schema = json.loads(resources.files("conformance").joinpath("schemas", "report.schema.json").read_text())
    validator = jsonschema.Draft202012Validator({**schema["$defs"]["exchange"], "$defs": schema["$defs"]})
    mock(lambda r: httpx.Response(204)).get("https://t.example/")
    record_exchange(Redactor(), direction="inbound", peer=None, document="jwks", method="GET", url="https://h.example/")
    for exchange in check.exchanges:
        validator.validate(exchange)
    validator.validate(Exchange.from_json(check.exchanges[0]).to_json())


def test_one_excerpt_limit_for_every_recorder(check: _context.CheckRecord) -> None:
    body = ("x" * 100 + "\n") * 100  # far beyond the excerpt
    mock(lambda r: httpx.Response(200, text=body, headers={"content-type": "text/plain"})).get("https://t.example/")
    record_exchange(
        Redactor([SECRET]),
        method="GET",
        url="https://t.example/",
        status=200,
        response_headers={"content-type": "text/plain"},
        response_body=body.encode(),
    )
    by_client, by_hand = (e["response_body"] for e in check.exchanges)
    assert by_client == by_hand and len(by_client) < len(body)
    assert by_client.startswith(body[: BODY_EXCERPT_CHARS // 2])


def test_signals_carry_the_exchange_that_caused_them(check: _context.CheckRecord) -> None:
    response = mock(lambda r: httpx.Response(200, json={})).get("https://t.example/meta")
    assert exchange_of(response) is check.exchanges[-1]
    with pytest.raises(InvalidResponse) as caught:
        json_field(response, "resource", type=str)
    assert caught.value.exchange is check.exchanges[-1]
    assert check.first_failure is caught.value and check.failing_exchange is check.exchanges[-1]

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(TargetUnreachable) as unreachable:
        mock(refuse).get("https://t.example/down")
    assert unreachable.value.exchange is check.exchanges[-1] and check.exchanges[-1]["status"] is None


def test_nothing_is_captured_outside_a_check() -> None:
    assert _context.current() is None
    assert record_exchange(Redactor(), method="GET", url="https://t.example/") is None
    response = mock(lambda r: httpx.Response(200)).get("https://t.example/")
    assert exchange_of(response) is None


def test_a_check_keeps_every_exchange_and_the_run_bounds_their_details(check: _context.CheckRecord) -> None:
    """No count of exchanges is dropped; once the run's budget of details is spent, an exchange keeps its metadata,
    its key headers and what stays of its bodies (length, digest), and says why."""
    body = b"x" * 3000
    headers = {"content-type": "text/plain", "x-trace": "t" * 500}
    try:
        _context.set_body_budget(10_000)
        for n in range(200):
            record_exchange(
                Redactor(),
                method="POST",
                url=f"https://t.example/{n}",
                request_headers={"authorization": "Bearer [REDACTED]", "x-trace": "abc"},
                request_body=body,
                status=200,
                response_headers=headers,
                response_body=body,
            )
    finally:
        _context.set_body_budget()
    assert [e["url"] for e in check.exchanges] == [f"https://t.example/{n}" for n in range(200)]
    whole = [e for e in check.exchanges if "omitted" not in e]
    assert 0 < len(whole) < 5 and check.exchanges[: len(whole)] == whole  # the first ones, until it is spent
    later = check.exchanges[-1]
    assert later["request_body"] is None and later["response_body"] is None
    assert later["request_headers"] == {"authorization": "Bearer [REDACTED]"}
    assert later["response_headers"] == {"content-type": "text/plain"}
    assert later["omitted"]["reason"] == "run body budget spent"
    assert later["omitted"]["response_body"]["chars"] == 3000
    assert later["omitted"]["response_headers"] == 1 and later["omitted"]["request_headers"] == 1
    assert len(json.dumps(later)) < 1000
    schema = json.loads(resources.files("conformance").joinpath("schemas", "report.schema.json").read_text())
    jsonschema.Draft202012Validator({**schema["$defs"]["exchange"], "$defs": schema["$defs"]}).validate(later)
