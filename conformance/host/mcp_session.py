"""The host's MCP session: the ``mcp`` SDK client over streamable HTTP, for synchronous checks.

Split from :mod:`conformance.host.mcp`: the SDK and its pydantic models cost more CPU to import than a whole
check phase, and only the checks that list or call tools the SDK's way need them. Raw JSON-RPC
probes (:func:`conformance.host.mcp.raw_call`) never load it; ``conformance.host.mcp.McpSession`` still names
this module's class (imported on first use).
"""

from __future__ import annotations

import contextlib
import json
import time
import zlib
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from pydantic import BaseModel, ConfigDict, ValidationError

from conformance.core import _budget, _context
from conformance.core._exceptions import ResponseTooLarge, TargetError, TargetTooSlow, TargetUnreachable
from conformance.host import mcp_era
from conformance.host._decode import BoundedBody
from conformance.host._mcp_sdk import ClientSession, MCPError, streamable_http_client, types
from conformance.host.challenge import Challenge
from conformance.host.exchange import now_stamp, record_exchange
from conformance.host.http import USER_AGENT, HostHTTP, ssl_context
from conformance.host.jsonrpc import McpSessionError, jsonrpc_messages
from conformance.host.jsonrpc import first_challenge as _first_challenge
from conformance.host.jsonrpc import response_to as _response_to

MAX_PAGES = 100
CLIENT_INFO = types.Implementation(name="conformance-host", version="0.1")
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class _RawResult(BaseModel):
    """Any JSON object: the SDK's typed parse would drop unknown fields (``securitySchemes``)."""

    model_config = ConfigDict(extra="allow")


@dataclass
class _Exchange:
    """One HTTP exchange of the SDK's client: kept for evidence and for reading results as sent."""

    request: httpx2.Request
    rpc_method: str | None
    rpc_id: Any
    started: float
    stamp: str
    record: _context.CheckRecord | None
    status: int | None = None
    headers: httpx2.Headers | None = None
    body: bytearray = field(default_factory=bytearray)
    error: str | None = None
    done: bool = False

    def messages(self) -> list[Any]:
        ctype = self.headers.get("content-type") if self.headers is not None else None
        return jsonrpc_messages(ctype, bytes(self.body))


def _cut_short(exchange: _Exchange) -> bool:
    """Whether the host stopped reading the answer: over the size cap, or past the check's time budget."""
    return (exchange.error or "").startswith(("response body exceeds", "target too slow: "))


def _failed(exc: httpx2.HTTPError) -> str:
    """The error an exchange records for ``exc``: a timeout the check's time budget shortened is the target too slow
    for that budget (as HostHTTP says it), not the target unreachable."""
    described = _describe(exc)
    if isinstance(exc, httpx2.TimeoutException) and (budget := _budget.cut_short_by()) is not None:
        return f"target too slow: {described} as {budget} ran out"
    return described


def _describe(exc: httpx2.HTTPError) -> str:
    """Like HostHTTP's messages: say what failed, not just the exception class."""
    name = type(exc).__name__
    if isinstance(exc, httpx2.TimeoutException):
        return f"timed out ({name})"
    if isinstance(exc, httpx2.ConnectError) and "CERTIFICATE_VERIFY_FAILED" in str(exc):
        return f"TLS certificate not trusted ({exc}); pass --ca-bundle for a private CA"
    if isinstance(exc, httpx2.ReadError | httpx2.RemoteProtocolError):
        detail = f"{name}: {exc}" if str(exc) else name
        return f"the server closed the connection ({detail}); a server refusing the client certificate does this"
    return f"{name}: {exc}" if str(exc) else name


class _TeeStream(httpx2.AsyncByteStream):
    """Passes the body through to the SDK, decoded under the size cap (the SDK never sees a byte past it, nor
    decodes anything itself), while keeping a copy for evidence; stops when the check's time budget is spent."""

    def __init__(self, inner: Any, exchange: _Exchange, transport: _RecordingTransport, bounded: BoundedBody) -> None:
        self.inner = inner
        self.exchange = exchange
        self.transport = transport
        self.bounded = bounded
        exchange.body = bounded.body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.inner:
                before = len(self.bounded.body)
                try:
                    self.bounded.feed(chunk)
                except ResponseTooLarge as exc:
                    self.exchange.error = str(exc)
                    raise
                except zlib.error as exc:
                    self.exchange.error = f"the body does not decode as its Content-Encoding says ({exc})"
                    raise httpx2.DecodingError(self.exchange.error) from None
                if _budget.spent():
                    self.exchange.error = f"target too slow: {_budget.left()[1]} is spent"  # type: ignore[index]
                    raise TargetTooSlow(self.exchange.error.removeprefix("target too slow: "))
                yield bytes(self.bounded.body[before:])
        except httpx2.HTTPError as exc:
            self.exchange.error = _failed(exc)
            raise

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self.transport.finish(self.exchange)


class _RecordingTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, redactor: Any, max_bytes: int) -> None:
        self.inner = inner
        self.redactor = redactor
        self.max_bytes = max_bytes
        self.exchanges: list[_Exchange] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        rpc_method, rpc_id = None, None
        try:
            payload = json.loads(request.content) if request.content else None  # the host's own request
        except (ValueError, httpx2.RequestNotRead):
            payload = None
        if isinstance(payload, dict):
            rpc_method, rpc_id = payload.get("method"), payload.get("id")
        stamp = now_stamp()
        exchange = _Exchange(request, rpc_method, rpc_id, time.monotonic(), stamp, _context.current())
        self.exchanges.append(exchange)
        budget = _budget.left()
        if budget is not None:  # the check's requests share its time budget: this one gets what is left of it
            if budget[0] <= 0:
                exchange.error = f"target too slow: {budget[1]} is spent"
                self.finish(exchange)
                raise TargetTooSlow(f"{request.method} {self.redactor.url(str(request.url))}: {budget[1]} is spent")
            timeouts = request.extensions.get("timeout") or {}
            shortened = {k: budget[0] if v is None else min(v, budget[0]) for k, v in timeouts.items()}
            request.extensions["timeout"] = shortened
        try:
            response = await self.inner.handle_async_request(request)
        except httpx2.HTTPError as exc:
            exchange.error = _failed(exc)
            self.finish(exchange)
            raise
        exchange.status = response.status_code
        exchange.headers = response.headers
        bounded = BoundedBody(response.headers.get("content-encoding"), self.max_bytes)
        headers = response.headers
        if bounded.decoded:  # decoded here: the SDK's client must not decode it again
            headers = httpx2.Headers(response.headers)
            del headers["content-encoding"]
        return httpx2.Response(
            status_code=response.status_code,
            headers=headers,
            stream=_TeeStream(response.stream, exchange, self, bounded),
            extensions=response.extensions,
            request=request,
        )

    def finish(self, exchange: _Exchange) -> None:
        """Attach the exchange, redacted, to the check that made it (once, when its body is complete)."""
        if exchange.done:
            return
        exchange.done = True
        if exchange.record is None:
            return
        request = exchange.request
        try:
            request_body: bytes | None = request.content
        except httpx2.RequestNotRead:
            request_body = None
        answered = exchange.headers is not None
        record_exchange(
            self.redactor,
            into=exchange.record,
            method=request.method,
            url=str(request.url),
            request_headers=request.headers,
            request_body=request_body,
            status=exchange.status,
            response_headers=exchange.headers,
            response_body=bytes(exchange.body) if answered else None,
            elapsed_s=time.monotonic() - exchange.started,
            started_at=exchange.stamp,
            error=exchange.error,
        )
        if (exchange.error or "").startswith("response body exceeds"):  # evidence only from now on: freed now
            exchange.body.clear()

    def last(self, rpc_method: str, since: int = 0) -> _Exchange | None:
        """The latest exchange carrying a ``rpc_method`` request, among those made after the first ``since``."""
        for exchange in reversed(self.exchanges[since:]):
            if exchange.rpc_method == rpc_method and exchange.rpc_id is not None:
                return exchange
        return None

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class ToolListing:
    """Every tool of every ``tools/list`` page, merged, exactly as sent."""

    tools: list[Any]
    pages: int
    problems: list[str]  # pagination or shape problems (cursor loops, page cap, a page without a tools array)
    sdk_errors: list[str]  # what the SDK refused to parse (the raw value is still in ``tools``)


@dataclass
class ToolCall:
    """One ``tools/call``: the raw result or the JSON-RPC error, with the HTTP facts of its POST."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    status: int | None
    challenge: Challenge | None
    sdk_error: str | None = None


async def _send_raw(session: ClientSession, request: Any) -> dict[str, Any]:
    """The SDK sends and correlates; the result stays a plain dict (the SDK's surface check still runs)."""
    raw = await session.send_request(request, _RawResult)
    return dict(raw.model_extra or {})


def _unwrap(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups from anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class McpSession:
    """A host's MCP session with one tool server, for synchronous callers. Use as a context manager.

    ``token`` is sent as ``Authorization: Bearer`` on every request (None: anonymous). ``client_cert`` is a
    ``(certfile, keyfile)`` pair for mTLS. Opening settles the era (``server/discover``, else ``initialize`` +
    ``notifications/initialized``; see :meth:`_negotiate`) and
    raises :class:`McpSessionError` (a TargetError) with the HTTP status and challenge when it fails.
    """

    def __init__(
        self,
        host: HostHTTP,
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        client_cert: tuple[str, str] | None = None,
    ) -> None:
        self.host = host
        self.url = url
        self.token = token
        self.headers = dict(headers or {})
        self.client_cert = client_cert
        self.initialize_result: dict[str, Any] | None = None
        self.era: mcp_era.Era | None = None  # the era the session speaks, once open
        self._stack: ExitStack | None = None
        self._portal: BlockingPortal | None = None
        self._session: ClientSession | None = None
        self._transport: _RecordingTransport | None = None

    # -- life cycle

    def _http_client(self) -> httpx2.AsyncClient:
        settings = self.host.httpx_client_kwargs()
        t: dict[str, float | None] = settings["timeout"]
        timeout = httpx2.Timeout(connect=t["connect"], read=t["read"], write=t["write"], pool=t["pool"])
        if self.client_cert is None and settings.get("client_cert") is not None:
            self.client_cert = settings["client_cert"]  # a host configured for mTLS presents it here too
        verify = ssl_context(self.host.ca_bundle, client_cert=self.client_cert)  # shared, never mutated
        max_bytes = self.host.max_response_bytes
        self._transport = _RecordingTransport(httpx2.AsyncHTTPTransport(verify=verify), self.host.redactor, max_bytes)
        mounts: dict[str, httpx2.AsyncBaseTransport | None] = {}
        if settings.get("insecure_loopback"):
            # As HostHTTP: unverified TLS is tolerated on loopback only, and recorded like the rest.
            insecure = ssl_context(self.host.ca_bundle, verify=False, client_cert=self.client_cert)
            loopback = _RecordingTransport(httpx2.AsyncHTTPTransport(verify=insecure), self.host.redactor, max_bytes)
            loopback.exchanges = self._transport.exchanges  # one ordered log for result lookups
            mounts = {f"all://{h}": loopback for h in _LOOPBACK}
        # No coding asked for (an event stream is read as it comes); one sent anyway is decoded under the cap.
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **self.headers}
        if self.token is not None:
            self.host.redactor.add_secret(self.token)
            headers["Authorization"] = f"Bearer {self.token}"
        return httpx2.AsyncClient(
            timeout=timeout, transport=self._transport, mounts=mounts or None, headers=headers, follow_redirects=False
        )

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[ClientSession]:
        async with (
            self._http_client() as client,
            streamable_http_client(self.url, http_client=client) as (read, write),
            ClientSession(
                read, write, read_timeout_seconds=self.host.total_timeout, client_info=CLIENT_INFO
            ) as session,
        ):
            yield session

    def open(self) -> McpSession:
        self.host.guard.check(self.url)
        stack = ExitStack()
        try:
            self._portal = stack.enter_context(start_blocking_portal())
            connect: AbstractContextManager[ClientSession] = self._portal.wrap_async_context_manager(self._connect())
            self._session = stack.enter_context(connect)
            self._stack = stack
            session = self._session
            self._portal.call(self._negotiate, session)
            exchange = self._transport.last("initialize") if self._transport else None
            message = _response_to(exchange.messages(), exchange.rpc_id) if exchange else None
            result = message.get("result") if message else None
            self.initialize_result = result if isinstance(result, dict) else None
        except BaseException:
            self._stack = None
            self._close_quietly(stack)
            raise
        return self

    async def _negotiate(self, session: ClientSession) -> None:
        """Settle the era as the SDK client's ``mode='auto'`` does, through the session's public methods:
        ``discover()`` (``server/discover`` at the newest modern version, adopted when it lists a version both
        speak), else ``initialize()``; the chosen era without a probe when ``--mcp-era`` names one. The era is
        remembered for the endpoint (raw probes then speak it too) when the discover answer settled it."""
        known = mcp_era.known(self.host, self.url)
        if known is not None and not known.modern:
            await self._initialize(session)
            self.era = known
            return
        if known is not None and mcp_era.choice_of(self.host) == mcp_era.MODERN:
            version = known.version
            session.adopt(types.DiscoverResult(supported_versions=[version], capabilities=types.ServerCapabilities()))
            self.era = known
            return
        mark = self._mark()
        try:
            await session.discover()
        except MCPError as exc:
            probe, _ = self._wire(mcp_era.DISCOVER, mark)
            if probe is None or probe.status is None or _cut_short(probe):  # no (whole) answer: no era verdict
                raise self._failure(mcp_era.DISCOVER, exc, mark) from None
            data = exc.error.data if exc.code == mcp_era.UNSUPPORTED_PROTOCOL_VERSION else None
            supported = data.get("supported") if isinstance(data, dict) else None
            if isinstance(supported, list) and not any(v in mcp_era.HANDSHAKE_VERSIONS for v in supported):
                raise self._failure(mcp_era.DISCOVER, exc, mark) from None  # modern-only, no version in common
            await self._initialize(session)
        except (ValidationError, RuntimeError):
            await self._initialize(session)  # an unusable discover result, or no modern version in common
        except Exception as exc:  # mapped to what the wire said
            raise self._failure(mcp_era.DISCOVER, _unwrap(exc), mark) from None
        exchange, message = self._wire(mcp_era.DISCOVER, mark)
        era = None
        if exchange is not None and exchange.status is not None:
            era = mcp_era.settle_from_discover(exchange.status, exchange.headers, message)
        if session.discover_result is not None:
            version = session.protocol_version or mcp_era.MODERN_VERSION
            era = era if era is not None and era.modern else mcp_era.modern("server/discover adopted", version)
        elif era is None or era.modern:
            era = mcp_era.legacy("initialize after server/discover")
        self.era = era
        mcp_era.remember(self.host, self.url, era)

    async def _initialize(self, session: ClientSession) -> None:
        mark = self._mark()
        try:
            await session.initialize()
        except Exception as exc:  # mapped to what the wire said below
            raise self._failure("initialize", _unwrap(exc), mark) from None

    @staticmethod
    def _close_quietly(stack: ExitStack) -> None:
        with contextlib.suppress(Exception):  # a failed teardown must not mask the error being reported
            stack.close()

    def close(self) -> None:
        stack, self._stack = self._stack, None
        self._session = None
        if stack is not None:
            self._close_quietly(stack)

    def __enter__(self) -> McpSession:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- operations

    def _running(self) -> tuple[BlockingPortal, ClientSession]:
        if self._portal is None or self._session is None:
            raise RuntimeError("the MCP session is not open")
        return self._portal, self._session

    def _mark(self) -> int:
        return len(self._transport.exchanges) if self._transport else 0

    def _wire(self, rpc_method: str, since: int = 0) -> tuple[_Exchange | None, dict[str, Any] | None]:
        exchange = self._transport.last(rpc_method, since) if self._transport else None
        if exchange is None:
            return None, None
        return exchange, _response_to(exchange.messages(), exchange.rpc_id)

    def _failure(self, rpc_method: str, exc: BaseException, since: int = 0) -> TargetError:
        """What the wire said when the SDK gave up on ``rpc_method``."""
        exchange, message = self._wire(rpc_method, since)
        if isinstance(exc, TargetError):
            return exc
        shown = f"{rpc_method} {self.host.redactor.url(self.url)}"
        if exchange is not None and (exchange.error or "").startswith("target too slow: "):
            return TargetTooSlow(f"{shown}: {exchange.error.removeprefix('target too slow: ')}")  # type: ignore[union-attr]
        if exchange is not None and (exchange.error or "").startswith("response body exceeds"):
            return ResponseTooLarge(f"{shown}: {exchange.error}")
        if exchange is not None and exchange.status is None and exchange.error:
            return TargetUnreachable(f"{rpc_method} {self.host.redactor.url(self.url)}: {exchange.error}")
        status = exchange.status if exchange else None
        challenge = _first_challenge(exchange.headers) if exchange and exchange.headers is not None else None
        error = message.get("error") if message else None
        detail = f"HTTP {status}" if status is not None else "no HTTP answer"
        if error is not None:
            detail += f", JSON-RPC error {json.dumps(error)[:300]}"
        elif str(exc):
            detail += f" ({type(exc).__name__}: {str(exc)[:300]})"
        return McpSessionError(f"{rpc_method} failed: {detail}", status=status, challenge=challenge, error=error)

    def list_tools(self, *, max_pages: int = MAX_PAGES) -> ToolListing:
        """Every page of ``tools/list`` (following ``nextCursor`` until absent, a repeat, or ``max_pages``)."""
        portal, session = self._running()
        tools: list[Any] = []
        problems: list[str] = []
        sdk_errors: list[str] = []
        seen: set[str] = set()
        cursor: str | None = None
        pages = 0
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            request = types.ListToolsRequest(params=params)
            sdk_value: dict[str, Any] | None = None
            mark = self._mark()
            try:
                sdk_value = portal.call(_send_raw, session, request)
            except ValidationError as exc:
                sdk_errors.append(f"page {pages + 1}: the SDK refused the result: {str(exc)[:500]}")
            except Exception as exc:  # mapped to what the wire said
                raise self._failure("tools/list", _unwrap(exc), mark) from None
            _, message = self._wire("tools/list", mark)
            page = message.get("result") if message and isinstance(message.get("result"), dict) else sdk_value
            pages += 1
            if not isinstance(page, dict) or not isinstance(page.get("tools"), list):
                problems.append(f"page {pages}: the result has no tools array")
                break
            tools.extend(page["tools"])
            next_cursor = page.get("nextCursor")
            if next_cursor is None:
                break
            if not isinstance(next_cursor, str):
                problems.append(f"page {pages}: nextCursor must be a string, got {next_cursor!r}")
                break
            if next_cursor in seen:
                problems.append(f"page {pages}: nextCursor {next_cursor!r} repeats an earlier cursor (a loop)")
                break
            if pages >= max_pages:
                problems.append(f"stopped after {max_pages} pages; the listing may be incomplete")
                break
            seen.add(next_cursor)
            cursor = next_cursor
        return ToolListing(tools, pages, problems, sdk_errors)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolCall:
        """``tools/call``; a JSON-RPC error or an HTTP error status is returned in the ToolCall, not raised.

        Connection failures raise :class:`TargetUnreachable`.
        """
        portal, session = self._running()
        args = dict(arguments or {})
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=args))
        sdk_error: str | None = None
        sdk_value: dict[str, Any] | None = None
        mark = self._mark()
        try:
            sdk_value = portal.call(_send_raw, session, request)
        except ValidationError as exc:
            sdk_error = f"the SDK refused the result: {str(exc)[:500]}"
        except MCPError as exc:
            sdk_error = f"JSON-RPC error {exc.code}: {exc.message}"
        except Exception as exc:  # mapped to what the wire said
            failure = self._failure("tools/call", _unwrap(exc), mark)
            if not isinstance(failure, McpSessionError):
                raise failure from None
            sdk_error = str(failure)
        exchange, message = self._wire("tools/call", mark)
        result = message.get("result") if message else sdk_value
        error = message.get("error") if message else None
        return ToolCall(
            name=name,
            arguments=args,
            result=result if isinstance(result, dict) else None,
            error=error if isinstance(error, dict) else None,
            status=exchange.status if exchange else None,
            challenge=_first_challenge(exchange.headers) if exchange and exchange.headers is not None else None,
            sdk_error=sdk_error,
        )
