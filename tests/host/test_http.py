"""HostHTTP: evidence recording, size cap, unreachable targets, guarded redirects."""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
import zlib
from collections.abc import Iterator

import httpx
import pytest

from conformance import ResponseTooLarge, TargetUnreachable, UrlRefused
from conformance.core import _context
from conformance.host._guard import UrlGuard
from conformance.host.http import HostHTTP, was_resent


def mock(handler: object, **kwargs: object) -> HostHTTP:
    return HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(), retry=None, **kwargs)  # type: ignore[arg-type]


def test_exchanges_are_recorded_on_the_running_check() -> None:
    client = mock(lambda r: httpx.Response(201, json={"id": "c1"}, headers={"Location": "/c1"}))
    record = _context.begin()
    try:
        response = client.post("https://t.example/v1/campaigns", json={"name": "abc"})
    finally:
        _context.end()
    assert response.status_code == 201 and response.json() == {"id": "c1"}
    (exchange,) = record.exchanges
    assert exchange["method"] == "POST" and exchange["status"] == 201
    assert exchange["request_body"] == '{"name": "abc"}'
    assert exchange["response_headers"]["location"] == "/c1"
    assert exchange["elapsed_s"] >= 0


def test_an_answer_leaves_nothing_for_the_cyclic_collector() -> None:
    """Once handed back, an answer (the streamed one httpx read it from, its request, headers and stream wrappers)
    is freed by reference counting: httpx's stream wrapper and its response hold each other until Transfer.done
    lets go, else every request leaves ~40 objects for the collector to walk and free."""
    client = mock(lambda r: httpx.Response(200, json={"a": 1}, headers={"X-Id": "1"}))
    client.get("https://t.example/")  # imports and caches first
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        record = _context.begin()
        try:
            answers = [client.get(f"https://t.example/{i}").json() for i in range(5)]
        finally:
            _context.end()
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert answers == [{"a": 1}] * 5 and len(record.exchanges) == 5
    assert left == []


def test_nothing_is_recorded_outside_a_check() -> None:
    client = mock(lambda r: httpx.Response(200))
    assert _context.current() is None
    client.get("https://t.example/")


def test_response_size_is_capped() -> None:
    client = mock(lambda r: httpx.Response(200, content=b"x" * 5000), max_response_bytes=1000)
    with pytest.raises(ResponseTooLarge, match="1000 bytes"):
        client.get("https://t.example/big")


def test_dead_port_is_a_target_error_with_a_clear_message() -> None:
    port = 1  # privileged and never listened on here: a freed ephemeral port could be reused by a parallel test
    client = HostHTTP(guard=UrlGuard(allow_insecure_loopback=True), retry=None, connect_timeout=2)
    with pytest.raises(TargetUnreachable, match="could not connect"):
        client.get(f"https://127.0.0.1:{port}/mcp")
    client.close()


def test_redirects_are_followed_only_through_the_guard() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/start":
            return httpx.Response(302, headers={"Location": "https://169.254.169.254/latest"})
        return httpx.Response(200)

    client = mock(handler)
    assert client.get("https://t.example/start").status_code == 302  # not followed by default
    with pytest.raises(UrlRefused, match="internal address"):
        client.get("https://t.example/start", follow_redirects=True)


def test_redirect_to_public_host_is_followed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "t.example":
            return httpx.Response(303, headers={"Location": "https://93.184.216.34/done"})
        return httpx.Response(200, text="done")

    response = mock(handler).post("https://t.example/start", json={}, follow_redirects=True)
    assert response.status_code == 200 and response.text == "done"
    assert response.request.method == "GET"


@pytest.mark.parametrize(
    ("start", "location", "keeps"),
    [
        ("https://t.example/start", "https://t.example/next", True),  # same origin
        ("https://t.example/start", "/next", True),
        ("https://t.example/start", "https://other.example/next", False),  # another host
        ("http://127.0.0.1/start", "https://127.0.0.1/next", False),  # another scheme
        ("https://t.example/start", "https://t.example:8443/next", False),  # another port
        ("https://t.example/start", "https://t.example:443/next", True),  # the default port, spelt out
    ],
)
def test_credentials_do_not_follow_a_redirect_to_another_origin(start: str, location: str, keeps: bool) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/start":
            return httpx.Response(307, headers={"Location": location})
        return httpx.Response(200)

    credentials = {"Authorization": "Bearer tok-1234", "X-Api-Key": "k-1234", "Cookie": "sid=1"}
    client = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_insecure_loopback=True), retry=None)
    client.get(start, headers={**credentials, "Accept": "text/plain"}, follow_redirects=True)
    first, second = seen
    assert {k: first.headers.get(k) for k in credentials} == credentials
    assert second.headers.get("Accept") == "text/plain"
    if keeps:
        assert {k: second.headers.get(k) for k in credentials} == credentials
    else:
        assert not [k for k in credentials if k in second.headers], second.headers


def test_redirect_does_not_resend_the_callers_query_parameters() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == "/start":
            return httpx.Response(302, headers={"Location": "https://93.184.216.34/next?n=1"})
        return httpx.Response(200)

    mock(handler).get("https://t.example/start", params={"api_key": "k-1234"}, follow_redirects=True)
    assert seen == ["https://t.example/start?api_key=k-1234", "https://93.184.216.34/next?n=1"]


def test_gzip_bodies_arrive_decoded() -> None:
    import gzip

    payload = gzip.compress(b'{"a": 1}')
    client = mock(lambda r: httpx.Response(200, content=payload, headers={"Content-Encoding": "gzip"}))
    assert client.get("https://t.example/").json() == {"a": 1}


@pytest.mark.parametrize(
    "raw",
    ["café".encode(), "café".encode("latin-1"), b"\xff\xfe", "日本".encode()],
    ids=["utf-8", "latin-1", "undecodable", "cjk"],
)
def test_a_non_ascii_header_value_reaches_the_check_and_the_evidence(raw: bytes) -> None:
    # A hostile or careless target: header values outside ASCII once crashed the transfer (UnicodeEncodeError in
    # rebuilding the response) instead of reaching the check as sent.
    client = mock(lambda r: httpx.Response(200, headers=[(b"X-Name", raw)], json={"a": 1}))
    record = _context.begin()
    try:
        response = client.get("https://t.example/x")
    finally:
        _context.end()
    assert response.headers.raw[0] == (b"X-Name", raw) and response.json() == {"a": 1}
    assert record.exchanges[0]["response_headers"]["x-name"] == response.headers["x-name"]


def test_a_non_ascii_location_is_followed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/start":
            return httpx.Response(302, headers=[(b"Location", "/café?q=ü".encode())])
        return httpx.Response(200, text=request.url.raw_path.decode())

    assert mock(handler).get("https://t.example/start", follow_redirects=True).text == "/caf%C3%A9?q=%C3%BC"


def test_answer_headers_arrive_as_sent_less_the_content_encoding() -> None:
    """The response handed back keeps each header's bytes as received (repeated ones apart, a UTF-8 value as
    it came) and drops only Content-Encoding (the body is already decoded): nothing is decoded and encoded again."""
    import gzip

    sent = [
        (b"Content-Encoding", b"gzip"),
        (b"Set-Cookie", b"a=1"),
        (b"Set-Cookie", b"b=2"),
        (b"X-Name", "café".encode()),
        (b"Content-Type", b"application/json"),
    ]
    client = mock(lambda r: httpx.Response(200, content=gzip.compress(b'{"a": 1}'), headers=sent))
    response = client.get("https://t.example/")
    assert response.json() == {"a": 1}
    assert response.headers.raw[:4] == sent[1:]
    assert response.headers.get_list("set-cookie") == ["a=1", "b=2"] and response.headers["x-name"] == "café"
    assert "content-encoding" not in response.headers


def test_record_exchange_attaches_redacted_evidence() -> None:
    from conformance.host._redact import Redactor
    from conformance.host.http import record_exchange

    redactor = Redactor(["sk_recorded_secret_1"])
    record = _context.begin()
    try:
        record_exchange(
            redactor,
            method="PUT",
            url="https://store.example/bucket/key?X-Amz-Signature=sk_recorded_secret_1",
            status=200,
            request_headers={"Authorization": "AWS4 sk_recorded_secret_1", "Content-Type": "image/png"},
            request_body=b"\x89PNG\r\n\x1a\n\x00binary",
            direction="outbound-sdk",
        )
    finally:
        _context.end()
    (exchange,) = record.exchanges
    assert "sk_recorded_secret_1" not in str(exchange)
    assert exchange["direction"] == "outbound-sdk" and exchange["request_body"].startswith("<binary")


def test_a_body_trickling_past_the_total_timeout_is_cut_and_says_the_bound_as_set() -> None:
    def trickle() -> Iterator[bytes]:
        for _ in range(20):  # 20 x 50 ms: each chunk well within any read timeout, the whole past 0.3 s
            time.sleep(0.05)
            yield b"x"

    client = mock(lambda r: httpx.Response(200, content=trickle()), total_timeout=0.3)
    with pytest.raises(TargetUnreachable, match=r"no complete response within 0\.3s$"):  # not rounded to "0s"
        client.get("https://t.example/slow")


# -- bodies decoded under the cap, time budgets, bounded evidence ----------------------------------------------


class _Chunks(httpx.SyncByteStream):
    """A body as a network transport hands it over: raw (still encoded) chunks, read once."""

    def __init__(self, raw: bytes, size: int = 65536) -> None:
        self.raw, self.size = raw, size

    def __iter__(self) -> Iterator[bytes]:
        for at in range(0, len(self.raw), self.size):
            yield self.raw[at : at + self.size]


def _encoded(raw: bytes, encoding: str, **kwargs: object) -> HostHTTP:
    headers = {"Content-Type": "application/json", "Content-Encoding": encoding}
    return mock(lambda r: httpx.Response(200, headers=headers, stream=_Chunks(raw)), **kwargs)


def _gzip(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return packer.compress(data) + packer.flush()


def test_a_gzip_bomb_is_refused_before_it_inflates() -> None:
    bomb = _gzip(b"\0" * (64 << 20))  # 64 MiB inflated, 64 KB sent: eight times the peak allowed below
    client = _encoded(bomb, "gzip", max_response_bytes=1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLarge, match="response body exceeds 1048576 bytes"):
            client.get("https://t.example/bomb")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak  # the cap and the compressed chunks, never the 64 MiB


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate", "deflate-raw", "gzip, deflate", "identity"])
def test_bodies_are_decoded_layer_by_layer(encoding: str) -> None:
    body = json.dumps({"items": list(range(3000))}).encode()
    raw = body
    for coding in [c.strip() for c in encoding.split(",")]:
        if coding in ("gzip", "x-gzip"):
            raw = _gzip(raw)
        elif coding == "deflate":
            raw = zlib.compress(raw)
        elif coding == "deflate-raw":
            packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
            raw = packer.compress(raw) + packer.flush()
    client = _encoded(raw, encoding.replace("deflate-raw", "deflate"), max_response_bytes=len(body))
    response = client.get("https://t.example/")
    assert response.content == body
    assert response.headers.get("content-encoding") == ("identity" if encoding == "identity" else None)


def test_an_encoding_that_cannot_be_bounded_is_kept_as_sent() -> None:
    client = _encoded(b"\x8b\x05\x80compressed", "br")
    response = client.get("https://t.example/")
    assert response.content == b"\x8b\x05\x80compressed" and response.headers["content-encoding"] == "br"


def test_only_boundable_encodings_are_offered() -> None:
    seen: list[str] = []
    client = mock(lambda r: seen.append(r.headers["accept-encoding"]) or httpx.Response(200))
    client.get("https://t.example/")
    assert seen == ["gzip, deflate"]


def test_a_check_s_requests_share_its_time_budget() -> None:
    from conformance.core import _budget
    from conformance.core._exceptions import TargetTooSlow

    timeouts: list[float] = []

    def slow(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"]["read"])
        time.sleep(0.3)
        return httpx.Response(200)

    client = mock(slow)
    record = _context.begin(("AUTH-PRM-01",))
    _budget.start_check(record, 1.0)
    try:
        with pytest.raises(TargetTooSlow, match=r"the check's time budget \(1s, --max-check-time\) is spent"):
            for _ in range(10):
                client.get("https://t.example/")
    finally:
        _context.end()
    assert 3 <= len(timeouts) <= 4, timeouts  # each request was given what was left: less and less
    assert timeouts == sorted(timeouts, reverse=True) and timeouts[0] <= 1.0


def test_a_huge_header_is_kept_as_a_bounded_excerpt() -> None:
    client = mock(lambda r: httpx.Response(401, headers={"WWW-Authenticate": 'Bearer realm="' + "r" * 100_000 + '"'}))
    record = _context.begin()
    try:
        client.get("https://t.example/")
    finally:
        _context.end()
    shown = record.exchanges[0]["response_headers"]["www-authenticate"]
    assert len(shown) < 2100 and shown.endswith(f"… [{100_015 - 2048} more characters]"), shown[-50:]


def test_deliberate_and_rate_limit_waits_are_not_the_target_s_slowness() -> None:
    from conformance.core import _budget

    client = mock(lambda r: httpx.Response(200))
    record = _context.begin(("AUTH-TOK-05",))
    _budget.start_check(record, 0.3)
    try:
        _budget.wait(0.4)  # e.g. a token's lifetime waited out
        record.throttle_wait_s += 0.2  # e.g. a rate-limit window waited for (conformance.host._pace)
        assert client.get("https://t.example/").status_code == 200
    finally:
        _context.end()


def test_a_long_text_body_is_scrubbed_as_far_as_its_excerpt_shows() -> None:
    from conformance.host._redact import Redactor

    secret = "s3cr3t-" + "k" * 60
    redactor = Redactor([secret])
    body = ("x" * 2040 + secret + "y" * (8 << 20)).encode()  # the secret straddles the excerpt's end
    shown = redactor.body(body, "text/plain", 2048)
    assert shown is not None and "s3cr3t" not in shown and shown[2040:2048] == "[REDACTE"
    assert shown.endswith(f"… [{len(body) - 2048} more characters]")


def _drops_first(times: int, error: type[httpx.TransportError] = httpx.RemoteProtocolError) -> tuple[object, list[str]]:
    """A transport whose connection drops the first ``times`` requests before their answers are complete."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        if len(seen) <= times:
            raise error("peer closed connection without sending complete message body")
        return httpx.Response(200, json={"ok": True})

    return handler, seen


@pytest.mark.parametrize("error", [httpx.RemoteProtocolError, httpx.ReadError])
def test_a_safe_request_whose_connection_dropped_is_sent_once_more(error: type[httpx.TransportError]) -> None:
    handler, seen = _drops_first(1, error)
    record = _context.begin()
    try:
        response = mock(handler).get("https://t.example/v1/campaigns")
    finally:
        _context.end()
    assert response.status_code == 200 and seen == ["GET", "GET"] and was_resent(response)
    assert [e["status"] for e in record.exchanges] == [None, 200]  # both attempts are evidence
    assert any("sent once more" in note for note in record.notes)


def test_a_dropped_connection_twice_is_the_targets() -> None:
    handler, seen = _drops_first(2)
    with pytest.raises(TargetUnreachable, match="peer closed connection"):
        mock(handler).get("https://t.example/v1/campaigns")
    assert seen == ["GET", "GET"]


def test_a_request_that_changes_something_is_never_sent_again() -> None:
    handler, seen = _drops_first(1)
    with pytest.raises(TargetUnreachable):
        mock(handler).post("https://t.example/v1/campaigns", json={"name": "abc"})
    assert seen == ["POST"]


def test_a_timeout_is_not_a_dropped_connection() -> None:
    handler, seen = _drops_first(1, httpx.ReadTimeout)
    with pytest.raises(TargetUnreachable):
        mock(handler).get("https://t.example/v1/campaigns")
    assert seen == ["GET"]


class _Pieces(httpx.SyncByteStream):
    """An answer's body as a transport streams it, in the pieces given (an empty one among them)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces


@pytest.mark.parametrize(
    ("headers", "chunks"),
    [
        ([(b"Content-Type", b"application/json"), (b"Content-Length", b"8")], [b'{"a"', b"", b": 1}"]),
        ([(b"Transfer-Encoding", b"chunked"), (b"X-Name", "café".encode())], [b"ab", b"cd"]),
        ([(b"X-Empty", b"1")], []),
    ],
    ids=["sized", "chunked-non-ascii", "empty"],
)
def test_a_streamed_answer_is_handed_back_as_httpx_builds_one_from_its_body(
    headers: list[tuple[bytes, bytes]], chunks: list[bytes]
) -> None:
    client = mock(lambda r: httpx.Response(200, headers=headers, stream=_Pieces(chunks)))
    response = client.get("https://t.example/")
    expected = httpx.Response(200, headers=headers, content=b"".join(chunks))
    assert response.headers.raw == expected.headers.raw  # (a Content-Length added when the answer had none)
    assert response.headers.encoding == expected.headers.encoding
    assert response.content == expected.content
    assert response.is_stream_consumed and response.is_closed
