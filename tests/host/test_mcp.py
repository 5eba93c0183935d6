"""McpSession and raw_call against a tiny in-process MCP server (the `mcp` SDK's low-level server + uvicorn).

The server has two endpoints: ``/mcp`` (stateless, JSON answers) and ``/mcp-sse`` (stateful: Mcp-Session-Id and
text/event-stream answers), both speaking both MCP eras (the SDK's default), and ``/mcp-modern`` and ``/mcp-legacy``
(stateless, one era only). Tools come 2 per page. A bearer gate answers 401 + WWW-Authenticate to a bad token and
lets anonymous requests through; the ``secure`` tool then returns an auth error result with the challenge in _meta.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trustme
from hypothesis import given
from hypothesis import strategies as st

from conformance import TargetUnreachable, UrlRefused
from conformance.core import _context
from conformance.host import mcp as host_mcp  # McpSession is named when a test opens one: it loads the SDK
from conformance.host import mcp_era
from conformance.host._guard import UrlGuard
from conformance.host.http import HostHTTP
from conformance.host.mcp import McpSessionError, jsonrpc_messages, raw_call, sse_data
from conformance.host.mtls import make_mtls_material
from conformance.judges.declarations import DeclarationChecker, check_challenge_result

if TYPE_CHECKING:  # the server's libraries (the `mcp` SDK above all) are imported when the server is built, not
    # when the tests are collected
    import mcp.types as mt
    from mcp.server.lowlevel import Server
    from starlette.applications import Starlette
    from starlette.types import Receive, Scope, Send

GOOD = "good-token-0123456789"
BAD = "bad-token-9876543210"
PAGE = 2
PRINCIPAL = "test.principal"
META_URL = "https://rs.example/.well-known/oauth-protected-resource"


def _challenge(error: str, description: str) -> str:
    return f'Bearer resource_metadata="{META_URL}", error="{error}", error_description="{description}"'


def _tools() -> list[mt.Tool]:
    import mcp.types as mt

    obj = {"type": "object", "additionalProperties": False}
    return [
        mt.Tool(
            name="echo",
            description="Echo the text.",
            input_schema={**obj, "properties": {"text": {"type": "string"}}, "required": ["text"]},
            output_schema={**obj, "properties": {"text": {"type": "string"}}, "required": ["text"]},
            _meta={"securitySchemes": [{"type": "noauth"}]},
        ),
        mt.Tool(
            name="secure",
            description="Needs a linked account.",
            input_schema={**obj, "properties": {}},
            _meta={"securitySchemes": [{"type": "oauth2", "scopes": ["read"]}]},
        ),
        mt.Tool(name="hostile", description="Returns a malformed result.", input_schema={"type": "object"}),
        *[mt.Tool(name=f"filler_{i}", description="Filler.", input_schema={"type": "object"}) for i in range(2)],
    ]


async def _lift(ctx: Any, call_next: Any) -> Any:
    """Middleware: securitySchemes to the top level (the SDK serializer drops it) and one hostile result."""
    params = ctx.params or {}
    if ctx.method == "tools/call" and params.get("name") == "hostile":
        return {"content": [{"type": "text", "text": 5}], "isError": "yes"}
    result = await call_next(ctx)
    if ctx.method == "tools/list" and isinstance(result, dict):
        lifted = []
        for tool in result.get("tools", []):
            meta = tool.get("_meta") or {}
            lifted.append({**tool, "securitySchemes": meta["securitySchemes"]} if "securitySchemes" in meta else tool)
        result = {**result, "tools": lifted}
    return result


def _server() -> Server[Any]:
    import mcp.types as mt
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: mt.PaginatedRequestParams | None) -> mt.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        tools = _tools()
        following = str(start + PAGE) if start + PAGE < len(tools) else None
        return mt.ListToolsResult(tools=tools[start : start + PAGE], next_cursor=following)

    async def call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        principal = ctx.request.scope.get(PRINCIPAL) if ctx.request is not None else None
        args = dict(params.arguments or {})
        if params.name == "echo":
            text = str(args.get("text", ""))
            return mt.CallToolResult(
                content=[mt.TextContent(type="text", text=json.dumps({"text": text}))],
                structured_content={"text": text},
            )
        if params.name == "secure" and principal is None:
            return mt.CallToolResult(
                content=[mt.TextContent(type="text", text="Sign in first.")],
                is_error=True,
                _meta={"mcp/www_authenticate": [_challenge("invalid_token", "Sign in to use secure.")]},
            )
        return mt.CallToolResult(content=[mt.TextContent(type="text", text=f"ok {principal}")])

    server: Server[Any] = Server("test-server", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(_lift)
    return server


class _Gate:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request
        from starlette.responses import JSONResponse

        header = Request(scope).headers.get("authorization")
        if header is not None and header != f"Bearer {GOOD}":
            challenge = _challenge("invalid_token", "The token is not valid.")
            response = JSONResponse({"error": "invalid_token"}, 401, headers={"www-authenticate": challenge})
            await response(scope, receive, send)
            return
        scope[PRINCIPAL] = "alice" if header else None
        await self.app(scope, receive, send)


def _app() -> Starlette:
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    stateless = StreamableHTTPSessionManager(app=_server(), stateless=True, json_response=True)
    stateful = StreamableHTTPSessionManager(app=_server(), stateless=False, json_response=False)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(stateless.run())
            await stack.enter_async_context(stateful.run())
            yield

    from conformance.reference.toolserver.app import EraGate

    routes = [
        Route("/mcp", _Gate(StreamableHTTPASGIApp(stateless)), methods=["GET", "POST", "DELETE"]),
        Route("/mcp-sse", _Gate(StreamableHTTPASGIApp(stateful)), methods=["GET", "POST", "DELETE"]),
        # One era only, as the SDK's server locked to it answers the other (the reference tool server's gate).
        *(
            Route(f"/mcp-{era}", _Gate(EraGate(StreamableHTTPASGIApp(stateless), era)), methods=["POST", "DELETE"])
            for era in ("modern", "legacy")
        ),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


@asynccontextmanager
async def _noop() -> AsyncIterator[None]:
    yield


class _Served:
    """uvicorn in a thread on a socket bound to a free loopback port; always stopped."""

    def __init__(self, app: Any, **ssl: Any) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, **ssl)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> _Served:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test MCP server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with _Served(_app()) as served:
        yield f"http://127.0.0.1:{served.port}"


@pytest.fixture
def host() -> Iterator[HostHTTP]:
    with HostHTTP(guard=UrlGuard(allow_insecure_loopback=True), retry=None, read_timeout=10, total_timeout=20) as h:
        yield h


@pytest.fixture
def record() -> Iterator[_context.CheckRecord]:
    yield _context.begin()
    _context.end()


@pytest.mark.parametrize("era", [mcp_era.LEGACY, mcp_era.AUTO])
@pytest.mark.parametrize("path", ["/mcp", "/mcp-sse"])
def test_session_lists_every_page_as_sent(
    host: HostHTTP, base_url: str, path: str, era: str, record: _context.CheckRecord
) -> None:
    mcp_era.choose(host, era)
    with host_mcp.McpSession(host, base_url + path, token=GOOD) as session:
        if era == mcp_era.LEGACY:
            assert session.initialize_result is not None and "protocolVersion" in session.initialize_result
        else:  # the SDK's server speaks both eras: a current host settles on the modern one
            assert session.initialize_result is None and session.era is not None and session.era.modern
        listing = session.list_tools()
    assert [t["name"] for t in listing.tools] == ["echo", "secure", "hostile", "filler_0", "filler_1"]
    assert listing.pages == 3 and not listing.problems
    # The wire's top-level securitySchemes survives (the SDK's Tool model would drop it).
    assert listing.tools[1]["securitySchemes"] == [{"type": "oauth2", "scopes": ["read"]}]
    assert DeclarationChecker().check_tools(listing.tools) == []
    methods = [json.loads(e["request_body"]).get("method") for e in record.exchanges if e["request_body"]]
    opening = "initialize" if era == mcp_era.LEGACY else "server/discover"
    assert methods.count("tools/list") == 3 and opening in methods
    if era == mcp_era.AUTO:
        assert "initialize" not in methods and methods[0] == "server/discover"
        assert any(note.startswith("MCP era: modern (2026-07-28)") for note in record.notes)
        for exchange in record.exchanges:
            headers = {k.lower(): v for k, v in exchange["request_headers"].items()}
            body = json.loads(exchange["request_body"])
            assert headers["mcp-protocol-version"] == "2026-07-28" and headers["mcp-method"] == body["method"]
            assert body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            assert "mcp-session-id" not in {k.lower() for k in exchange.get("response_headers") or {}}
    evidence = json.dumps(record.exchanges)
    assert GOOD not in evidence and "Bearer [REDACTED]" in evidence


def test_session_calls_tools_and_returns_raw_results(host: HostHTTP, base_url: str) -> None:
    with host_mcp.McpSession(host, base_url + "/mcp-sse", token=GOOD) as session:
        listing = session.list_tools()
        echo = session.call_tool("echo", {"text": "hi"})
        hostile = session.call_tool("hostile")
    assert echo.status == 200 and echo.result is not None and echo.sdk_error is None
    assert echo.result["structuredContent"] == {"text": "hi"}
    checker = DeclarationChecker()
    checker.check_tools(listing.tools)
    assert checker.check_result("echo", echo.result) == []
    # The SDK refuses the malformed result; the raw value is still there to be judged.
    assert hostile.result == {"content": [{"type": "text", "text": 5}], "isError": "yes"}
    assert hostile.sdk_error is not None and "refused" in hostile.sdk_error
    problems = checker.check_result("hostile", hostile.result)
    assert {p.rule for p in problems} == {"AUTH-TOOL-05"} and len(problems) == 2


def test_anonymous_call_gets_the_in_result_challenge(host: HostHTTP, base_url: str) -> None:
    with host_mcp.McpSession(host, base_url + "/mcp") as session:
        call = session.call_tool("secure")
    assert call.result is not None and call.result["isError"] is True
    verdict = check_challenge_result(call.result)
    assert verdict.ok, verdict.problems
    assert verdict.first("error") == "invalid_token" and verdict.has_error_and_description


def test_session_with_a_bad_token_fails_with_status_and_challenge(host: HostHTTP, base_url: str) -> None:
    with pytest.raises(McpSessionError) as caught, host_mcp.McpSession(host, base_url + "/mcp", token=BAD):
        pass
    assert caught.value.status == 401
    assert caught.value.challenge is not None and caught.value.challenge.get("resource_metadata") == META_URL
    assert BAD not in str(caught.value)


def test_plain_http_needs_the_loopback_allowance(base_url: str) -> None:
    with HostHTTP(guard=UrlGuard(), retry=None) as strict, pytest.raises(UrlRefused, match="plain HTTP"):
        host_mcp.McpSession(strict, base_url + "/mcp").open()


@pytest.mark.parametrize(("era", "step"), [(mcp_era.LEGACY, "initialize"), (mcp_era.AUTO, "server/discover")])
def test_raw_probe_shows_the_401_and_its_challenge(
    host: HostHTTP, base_url: str, era: str, step: str, record: _context.CheckRecord
) -> None:
    mcp_era.choose(host, era)
    probe = raw_call(host, base_url + "/mcp", "tools/list", {}, token=BAD)
    assert probe.status == 401 and probe.step == step
    assert probe.challenge is not None and probe.challenge.get("error") == "invalid_token"
    assert probe.message is None
    assert BAD not in json.dumps(record.exchanges)


@pytest.mark.parametrize(("path", "ctype"), [("/mcp", "application/json"), ("/mcp-sse", "text/event-stream")])
def test_raw_call_reads_json_and_sse_answers(host: HostHTTP, base_url: str, path: str, ctype: str) -> None:
    mcp_era.choose(host, mcp_era.LEGACY)
    probe = raw_call(host, base_url + path, "tools/call", {"name": "echo", "arguments": {"text": "x"}}, token=GOOD)
    assert probe.status == 200 and probe.step == "call" and probe.content_type == ctype
    assert probe.result["structuredContent"] == {"text": "x"}
    assert probe.json_rpc_result_or_error == probe.result
    assert (probe.session_id is not None) == (path == "/mcp-sse")


def test_raw_call_malformed_authorization_header(host: HostHTTP, base_url: str) -> None:
    probe = raw_call(host, base_url + "/mcp", "tools/list", {}, headers={"Authorization": "Basic Zm9vOmJhcg=="})
    assert probe.status == 401 and probe.challenge is not None


def test_raw_call_without_handshake_returns_the_jsonrpc_error(host: HostHTTP, base_url: str) -> None:
    probe = raw_call(host, base_url + "/mcp", "no/such/method", {}, token=GOOD)
    assert probe.step == "call" and isinstance(probe.error, dict) and probe.result is None


def test_session_over_tls_verifies_with_the_ca_bundle(tmp_path: Path) -> None:
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    ca_file, cert_file = tmp_path / "ca.pem", tmp_path / "leaf.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    leaf.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    with (
        _Served(_app(), ssl_certfile=str(cert_file), ssl_keyfile=str(cert_file)) as served,
        HostHTTP(guard=UrlGuard(), retry=None, ca_bundle=ca_file) as tls_host,
        host_mcp.McpSession(tls_host, f"https://127.0.0.1:{served.port}/mcp", token=GOOD) as session,
    ):
        result = session.call_tool("echo", {"text": "tls"}).result
    assert result is not None and result["structuredContent"] == {"text": "tls"}


def test_session_presents_the_mtls_client_certificate(tmp_path: Path) -> None:
    ca = trustme.CA()
    cert_file, ca_file = tmp_path / "leaf.pem", tmp_path / "ca.pem"
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    ca.cert_pem.write_to_path(str(ca_file))
    material = make_mtls_material(tmp_path / "mtls", "connector.host.example")
    tls = {
        "ssl_certfile": str(cert_file),
        "ssl_keyfile": str(cert_file),
        "ssl_ca_certs": str(material.root_file),
        "ssl_cert_reqs": ssl.CERT_REQUIRED,
    }
    with _Served(_app(), **tls) as served, HostHTTP(guard=UrlGuard(), retry=None, ca_bundle=ca_file) as tls_host:
        url = f"https://127.0.0.1:{served.port}/mcp"
        with host_mcp.McpSession(tls_host, url, token=GOOD, client_cert=material.good.pair) as session:
            assert session.call_tool("echo", {"text": "m"}).status == 200
        with (
            pytest.raises(TargetUnreachable, match="closed the connection"),
            host_mcp.McpSession(tls_host, url, client_cert=material.foreign_ca.pair),
        ):
            pass


# ----------------------------------------------------------------------------------------- MCP eras


@pytest.mark.parametrize(("path", "era"), [("/mcp", "modern"), ("/mcp-modern", "modern"), ("/mcp-legacy", "legacy")])
def test_the_session_settles_the_era_as_the_sdk_client_does(
    host: HostHTTP, base_url: str, path: str, era: str, record: _context.CheckRecord
) -> None:
    with host_mcp.McpSession(host, base_url + path, token=GOOD) as session:
        assert session.era is not None and session.era.name == era
        assert session.call_tool("echo", {"text": "e"}).result is not None
    methods = [json.loads(e["request_body"]).get("method") for e in record.exchanges if e["request_body"]]
    assert methods[0] == "server/discover"  # always probed first, at the newest modern version
    assert ("initialize" in methods) == (era == "legacy")
    settled = mcp_era.known(host, base_url + path)
    assert settled is not None and settled.name == era
    # Raw probes then speak the settled era without probing again.
    mark = len(record.exchanges)
    probe = raw_call(host, base_url + path, "tools/call", {"name": "echo", "arguments": {"text": "r"}}, token=GOOD)
    assert probe.step == "call" and probe.result is not None and probe.result["structuredContent"] == {"text": "r"}
    posts = [e for e in record.exchanges[mark:] if e["request_body"]]
    sent = [json.loads(e["request_body"]) for e in posts]
    sent_methods = [m.get("method") for m in sent]
    assert sent_methods[-1] == "tools/call" and "server/discover" not in sent_methods
    headers = {k.lower(): v for k, v in posts[-1]["request_headers"].items()}
    if era == "modern":
        assert len(sent) == 1 and headers["mcp-method"] == "tools/call" and headers["mcp-name"] == "echo"
        assert sent[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    else:
        assert sent_methods[0] == "initialize" and "mcp-method" not in headers


def test_a_modern_only_server_refuses_the_legacy_choice(host: HostHTTP, base_url: str) -> None:
    mcp_era.choose(host, mcp_era.LEGACY)
    probe = raw_call(host, base_url + "/mcp-modern", "tools/list", {}, token=GOOD)
    assert probe.status == 400 and probe.step == "initialize"
    assert probe.error is not None and probe.error["code"] == -32022
    assert probe.error["data"]["supported"] == ["2026-07-28"]


def test_raw_probe_settles_the_era_with_its_own_credentials(host: HostHTTP, base_url: str) -> None:
    url = base_url + "/mcp-modern"
    refused = raw_call(host, url, "tools/list", {}, token=BAD)
    assert refused.status == 401 and refused.step == "server/discover" and mcp_era.known(host, url) is None
    anonymous = raw_call(host, url, "tools/list", {})
    assert anonymous.step == "call" and anonymous.result is not None
    assert mcp_era.known(host, url) == mcp_era.modern("server/discover listed 2026-07-28")
    # With the era settled, a bad token meets the call itself, as a current host sends it.
    again = raw_call(host, url, "tools/list", {}, token=BAD)
    assert again.status == 401 and again.step == "call"


def test_the_modern_choice_adopts_without_probing(host: HostHTTP, base_url: str, record: _context.CheckRecord) -> None:
    mcp_era.choose(host, mcp_era.MODERN)
    with host_mcp.McpSession(host, base_url + "/mcp-modern", token=GOOD) as session:
        assert session.list_tools().tools
    methods = [json.loads(e["request_body"]).get("method") for e in record.exchanges if e["request_body"]]
    assert methods == ["tools/list"] * 3
    assert any(note == "MCP era: modern (2026-07-28); --mcp-era modern" for note in record.notes)


@pytest.mark.parametrize(
    ("status", "message", "era"),
    [
        (200, {"result": {"supportedVersions": ["2025-11-25", "2026-07-28"]}}, "modern"),
        (200, {"result": {"supportedVersions": ["2025-06-18"]}}, "legacy"),
        (200, {"result": {}}, "legacy"),
        (200, {"error": {"code": -32601, "message": "Method not found"}}, "legacy"),
        (400, {"error": {"code": -32600, "message": "Unsupported protocol version"}}, "legacy"),
        (400, {"error": {"code": -32022, "data": {"supported": ["2026-07-28"]}}}, "modern"),
        (400, {"error": {"code": -32022, "data": {"supported": ["2025-11-25"]}}}, "legacy"),
        (400, {"error": {"code": -32022, "data": {"supported": ["2027-01-01"]}}}, "modern"),
        (404, None, "legacy"),
        (401, None, None),
        (403, {"error": {"code": -32600}}, None),
        (503, None, None),
    ],
)
def test_discover_answers_settle_as_the_sdk_mode_auto(status: int, message: Any, era: str | None) -> None:
    settled = mcp_era.settle_from_discover(status, {}, message)
    assert (settled.name if settled else None) == era


def test_modern_requests_carry_the_routing_headers_and_envelope() -> None:
    headers = mcp_era.modern_headers("tools/call", {"name": "résumé", "arguments": {}})
    assert headers["Mcp-Method"] == "tools/call" and headers["Mcp-Name"].startswith("=?base64?")
    assert "Mcp-Name" not in mcp_era.modern_headers("tools/list", {})
    params = mcp_era.envelope({"name": "x", "_meta": {"progressToken": 1}})
    assert params["_meta"]["progressToken"] == 1 and params["_meta"][mcp_era.META_PROTOCOL_VERSION] == "2026-07-28"
    with pytest.raises(ValueError, match="MCP era"):
        mcp_era.choose(object(), "2026")


# ----------------------------------------------------------------------------------------- body parsing


def test_sse_events_with_comments_crlf_and_multiline_data() -> None:
    body = ': keepalive\r\n\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata:{"b":2}'
    assert sse_data(body) == ['{"a":\n1}', '{"b":2}']
    assert jsonrpc_messages("text/event-stream; charset=utf-8", body.encode()) == [{"a": 1}, {"b": 2}]


def test_json_batches_and_garbage() -> None:
    assert jsonrpc_messages("application/json", b'[{"id":1},{"id":2}]') == [{"id": 1}, {"id": 2}]
    assert jsonrpc_messages("application/json", b"<html>") == []
    assert jsonrpc_messages(None, b"") == []


@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3), max_size=4))
def test_sse_round_trip(messages: list[dict[str, Any]]) -> None:
    body = "".join(f"event: message\ndata: {json.dumps(m)}\n\n" for m in messages)
    assert jsonrpc_messages("text/event-stream", body.encode()) == messages


@given(st.binary(max_size=200), st.sampled_from(["text/event-stream", "application/json", None]))
def test_hostile_bodies_never_crash(body: bytes, ctype: str | None) -> None:
    assert isinstance(jsonrpc_messages(ctype, body), list)
