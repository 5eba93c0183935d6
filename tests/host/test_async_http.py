"""AsyncHostHTTP: the same guard, recording, redaction, size cap and retries as HostHTTP, on the caller's loop."""

from __future__ import annotations

import httpx
import pytest

from conformance import ResponseTooLarge, TargetUnreachable, UrlRefused
from conformance.core import _context
from conformance.host._guard import UrlGuard
from conformance.host._redact import Redactor
from conformance.host.async_http import AsyncHostHTTP
from conformance.host.exchange import exchange_of
from conformance.host.http import HostHTTP, RetryPolicy

SECRET = "sk_async_secret_value_42"


def twin(handler: object, **kwargs: object) -> AsyncHostHTTP:
    host = HostHTTP(guard=UrlGuard(), redactor=Redactor([SECRET]), retry=None, **kwargs)  # type: ignore[arg-type]
    return AsyncHostHTTP(host, transport=httpx.MockTransport(handler))  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_exchanges_are_recorded_redacted() -> None:
    async with twin(lambda r: httpx.Response(200, json={"token": SECRET, "ok": True})) as http:
        record = _context.begin()
        try:
            response = await http.post(
                f"https://t.example/v1/x?key={SECRET}", json={"a": 1}, headers={"Authorization": f"Bearer {SECRET}"}
            )
        finally:
            _context.end()
    assert response.status_code == 200 and response.json()["ok"] is True
    (exchange,) = record.exchanges
    assert exchange["method"] == "POST" and exchange["status"] == 200
    assert exchange["request_body"] == '{"a": 1}'  # the redactor's JSON rendering, as for HostHTTP
    assert SECRET not in str(exchange)


@pytest.mark.asyncio
async def test_the_guard_refuses_what_the_sync_client_refuses() -> None:
    async with twin(lambda r: httpx.Response(200)) as http:
        with pytest.raises(UrlRefused):
            await http.get("http://t.example/plain-http")
        with pytest.raises(UrlRefused):
            await http.get("https://169.254.169.254/latest/meta-data", metadata_driven=True)


@pytest.mark.asyncio
async def test_redirects_are_guarded_hop_by_hop() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": "https://10.0.0.1/internal"})

    async with twin(handler) as http:
        with pytest.raises(UrlRefused):
            await http.get("https://t.example/start", follow_redirects=True)


@pytest.mark.asyncio
async def test_response_size_is_capped() -> None:
    async with twin(lambda r: httpx.Response(200, content=b"x" * 5000), max_response_bytes=1000) as http:
        with pytest.raises(ResponseTooLarge, match="1000 bytes"):
            await http.get("https://t.example/big")


@pytest.mark.asyncio
async def test_retry_policy_is_the_host_one() -> None:
    answers = iter([httpx.Response(503, headers={"Retry-After": "0"}), httpx.Response(200)])
    async with twin(lambda r: next(answers)) as http:
        response = await http.get("https://t.example/flaky", retry=RetryPolicy(max_attempts=2, base_s=0.0))
    assert response.status_code == 200


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("location", "keeps"),
    [("https://t.example/next", True), ("https://other.example/next", False), ("https://t.example:8443/next", False)],
)
async def test_credentials_do_not_follow_a_redirect_to_another_origin(location: str, keeps: bool) -> None:
    """As HostHTTP: a redirect to another origin (host, scheme or port) gets no credentials."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/start":
            return httpx.Response(307, headers={"Location": location})
        return httpx.Response(200)

    credentials = {"Authorization": "Bearer tok-1234", "X-Api-Key": "k-1234", "Cookie": "sid=1"}
    async with twin(handler) as http:
        await http.get(
            "https://t.example/start", headers={**credentials, "Accept": "text/plain"}, follow_redirects=True
        )
    first, second = seen
    assert {k: first.headers.get(k) for k in credentials} == credentials
    assert second.headers.get("Accept") == "text/plain"
    if keeps:
        assert {k: second.headers.get(k) for k in credentials} == credentials
    else:
        assert not [k for k in credentials if k in second.headers], second.headers


@pytest.mark.asyncio
async def test_a_head_redirect_stays_head() -> None:
    """As HostHTTP: 301/302/303 turn a request into GET, except HEAD, which stays HEAD."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        return (
            httpx.Response(302, headers={"Location": "/next"}) if request.url.path == "/start" else httpx.Response(200)
        )

    async with twin(handler) as http:
        await http.request("HEAD", "https://t.example/start", follow_redirects=True)
    assert seen == ["HEAD", "HEAD"]


@pytest.mark.asyncio
async def test_an_answer_carries_its_evidence_and_options_match_the_sync_client() -> None:
    """As HostHTTP (one Transfer, one request_steps): the response carries its recorded exchange (``exchange_of``,
    the evidence of an InvalidResponse about it), ``data`` and a per-request ``timeout`` are taken, and a retry is
    noted on the check's record."""
    seen: list[httpx.Request] = []
    answers = iter([httpx.Response(503, headers={"Retry-After": "0"}), httpx.Response(200, json={"ok": 1})])

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return next(answers)

    async with twin(handler) as http:
        record = _context.begin()
        try:
            response = await http.post(
                "https://t.example/form", data={"a": "b"}, timeout=3.0, retry=RetryPolicy(max_attempts=2, base_s=0.0)
            )
        finally:
            _context.end()
    assert exchange_of(response) == record.exchanges[-1] and record.exchanges[-1]["status"] == 200
    assert seen[-1].content == b"a=b" and seen[-1].extensions["timeout"]["read"] == 3.0
    assert any(note.startswith("retrying after") for note in record.notes)


@pytest.mark.asyncio
async def test_a_non_ascii_header_value_reaches_the_check() -> None:
    async with twin(lambda r: httpx.Response(200, headers=[(b"X-Name", "café".encode("latin-1"))])) as http:
        response = await http.get("https://t.example/x")
    assert response.headers.raw[0] == (b"X-Name", "café".encode("latin-1"))


@pytest.mark.asyncio
async def test_a_safe_request_whose_connection_dropped_is_sent_once_more_as_by_the_sync_client() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        if len(seen) == 1:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")
        return httpx.Response(200)

    async with twin(handler) as http:
        assert (await http.get("https://t.example/v1/x")).status_code == 200
        with pytest.raises(TargetUnreachable):
            seen.clear()
            await http.post("https://t.example/v1/x", json={})
    assert seen == ["POST"]
