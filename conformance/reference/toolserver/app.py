"""The reference MCP tool server: the `mcp` SDK's low-level server over streamable HTTP, behind our own bearer gate.

Why not the SDK's built-in auth: it makes the whole endpoint require a token, while the contract wants mixed
access (``search_docs`` anonymous, ``list_products`` anonymous with more for a linked account, the other tools
behind OAuth, with the challenge in the tool result). So the gate
here lets anonymous requests through, answers 401 + ``WWW-Authenticate`` to a presented-but-bad token, and tool
handlers decide per tool (``securitySchemes``), returning ``isError`` results with ``_meta["mcp/www_authenticate"]``.

``defects`` holds mutant names (``conformance.reference.toolserver.mutants``); each switches exactly one behaviour.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from conformance.reference.toolserver._mcp_sdk import (
    Server,
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
    TransportSecuritySettings,
    mt,
)
from conformance.reference.toolserver.profiles import Profile, ProfileStore
from conformance.reference.toolserver.verifier import JwtVerifier, Principal, TokenError

PRINCIPAL_KEY = "conformance.principal"
LAPSED_KEY = "conformance.lapsed"  # ts-profile-guest-on-expired: the request carried an expired token
ROUTED_KEY = "conformance.routed"  # ts-authorizes-by-mcp-name: the Mcp-Name header named a tool open to anyone
TOOL_SCOPES = ["tools.read", "tools.write"]
PROFILE_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "minLength": 1, "pattern": "\\S"},
        "name": {"type": "string"},
        "email": {"type": "string"},
        "nickname": {"type": "string"},
    },
    "required": ["id"],
    "additionalProperties": False,
}
ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "item": {"type": "string"},
        "status": {"type": "string", "enum": ["open", "shipped", "cancelled"]},
        "total_cents": {"type": "integer", "minimum": 0},
    },
    "required": ["id", "item", "status", "total_cents"],
    "additionalProperties": False,
}
DEV_PRINCIPAL = Principal(
    issuer="dev", subject="dev-user", scopes=frozenset(TOOL_SCOPES), client_id=None, claims={"sub": "dev-user"}
)
PRODUCTS: list[dict[str, Any]] = [
    {"sku": "nb-blue", "name": "Blue notebook", "price_cents": 1250},
    {"sku": "lamp-desk", "name": "Desk lamp", "price_cents": 3999},
    {"sku": "pencils-12", "name": "Pencil set", "price_cents": 599},
]
MEMBER_DISCOUNT_PERCENT = 10
DOCS = [
    {"title": "Getting started", "url": "https://docs.example.test/start"},
    {"title": "Orders and cancellations", "url": "https://docs.example.test/orders"},
    {"title": "Connecting several accounts", "url": "https://docs.example.test/accounts"},
]


@dataclass
class ToolServerConfig:
    resource: str  # canonical resource identifier = the MCP endpoint URL
    issuer: str
    data_dir: Path
    ca_file: str | None = None
    extra_issuers: dict[str, str] = field(default_factory=dict)  # issuer -> JWKS URL (https: or file:)
    vendor: str = "openai"
    admin_key: str | None = None  # enables /_reference/* hooks when set
    defects: frozenset[str] = frozenset()
    mcp_era: str = "both"  # the MCP eras served: both (the SDK's default), legacy or modern

    @property
    def mcp_path(self) -> str:
        from urllib.parse import urlparse

        return urlparse(self.resource).path or "/"

    @property
    def origin(self) -> str:
        return self.resource[: len(self.resource) - len(self.mcp_path)]

    @property
    def metadata_url(self) -> str:
        suffix = "" if self.mcp_path == "/" else self.mcp_path
        return f"{self.origin}/.well-known/oauth-protected-resource{suffix}"


def _wire_tools(defects: frozenset[str]) -> Any:
    """Server middleware: copy ``_meta.securitySchemes`` to the tool's top level on the wire.

    ``securitySchemes`` is a field of the contract (Apps-SDK style), not of the MCP schema, and the SDK's
    per-version serializer drops unknown fields; a middleware's returned dict goes out as it is (so is the
    ``ts-tool-description-not-string`` defect, which the SDK's model would not let through).
    """

    async def lift(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            tools = [
                {**tool, "securitySchemes": tool["_meta"]["securitySchemes"]}
                if isinstance(tool.get("_meta"), dict) and "securitySchemes" in tool["_meta"]
                else tool
                for tool in result.get("tools", [])
            ]
            if "ts-tool-description-not-string" in defects:
                # A multi-line description serialized as its list of lines.
                tools = [
                    {**t, "description": t["description"].split(": ")} if t.get("name") == "search_docs" else t
                    for t in tools
                ]
            result = {**result, "tools": tools}
        return result

    return lift


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _closed_object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A JSON Schema object with these properties and no others."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return {**schema, "additionalProperties": False}


# The tools besides the profile tool, as declared when no mutant changes them.
SEARCH_DOCS: dict[str, Any] = {
    "name": "search_docs",
    "description": "Search the public product documentation.",
    "input_schema": _closed_object({"query": {"type": "string", "minLength": 1}}, ["query"]),
    "output_schema": _closed_object(
        {
            "results": {
                "type": "array",
                "items": _closed_object({"title": {"type": "string"}, "url": {"type": "string"}}, ["title", "url"]),
            }
        },
        ["results"],
    ),
    "annotations": mt.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
}

LIST_ORDERS: dict[str, Any] = {
    "name": "list_orders",
    "description": "List the signed-in customer's orders.",
    "input_schema": _closed_object({"status": {"type": "string", "enum": ["open", "shipped", "cancelled"]}}),
    "output_schema": _closed_object({"orders": {"type": "array", "items": ORDER_SCHEMA}}, ["orders"]),
    "annotations": mt.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
}

# Declares noauth and oauth2: anyone may browse; a linked account sees its member prices.
LIST_PRODUCTS: dict[str, Any] = {
    "name": "list_products",
    "description": "List the product catalogue; a signed-in customer sees member prices.",
    "input_schema": _closed_object({}),
    "output_schema": _closed_object(
        {
            "products": {
                "type": "array",
                "items": _closed_object(
                    {
                        "sku": {"type": "string"},
                        "name": {"type": "string"},
                        "price_cents": {"type": "integer", "minimum": 0},
                    },
                    ["sku", "name", "price_cents"],
                ),
            },
            "member_prices": {"type": "boolean"},
        },
        ["products", "member_prices"],
    ),
    "annotations": mt.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
}

CANCEL_ORDER: dict[str, Any] = {
    "name": "cancel_order",
    "description": "Cancel one of the signed-in customer's open orders.",
    "input_schema": _closed_object({"order_id": {"type": "string", "minLength": 1}}, ["order_id"]),
    "output_schema": _closed_object({"order": ORDER_SCHEMA}, ["order"]),
    "annotations": mt.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
}


class ToolServer:
    """Tools, their declarations and the auth decisions; independent of the HTTP plumbing."""

    def __init__(self, config: ToolServerConfig) -> None:
        self.config = config
        self.defects = config.defects
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self.profiles = ProfileStore(config.data_dir / "toolserver-profiles.sqlite3")
        self.id_key = secrets.token_bytes(16)  # ts-profile-id-follows-display: the key of its keyed digest
        self.orders: dict[str, list[dict[str, Any]]] = {}

    # ------------------------------------------------------------------ challenges
    def challenge(
        self,
        error: str | None = None,
        description: str | None = None,
        scope: str | None = None,
        *,
        in_call: bool = False,
    ) -> str:
        metadata_url = self.config.metadata_url
        if in_call and "ts-meta-challenge-dead-metadata-url" in self.defects:
            metadata_url = f"{self.config.origin}/.well-known/oauth-protected-resource/v0"  # an older deployment's
        params = [f'resource_metadata="{_quote(metadata_url)}"']
        if "ts-no-challenge-scope" not in self.defects:
            params.append(f'scope="{_quote(scope or " ".join(TOOL_SCOPES))}"')
        if error:
            params.append(f'error="{_quote(error)}"')
        if description and "ts-challenge-without-description" not in self.defects:
            params.append(f'error_description="{_quote(description)}"')
        return "Bearer " + ", ".join(params)

    def auth_error(self, error: str, description: str, scope: str | None = None) -> mt.CallToolResult:
        meta = (
            None
            if "ts-omit-meta-challenge" in self.defects
            else {"mcp/www_authenticate": [self.challenge(error, description, scope, in_call=True)]}
        )
        return mt.CallToolResult(content=[mt.TextContent(type="text", text=description)], is_error=True, _meta=meta)

    # ------------------------------------------------------------------ declarations
    def security(self, name: str) -> list[dict[str, Any]]:
        if name == "search_docs":
            if "ts-bad-security-schemes" in self.defects:
                return [{"type": "noauth", "scopes": ["tools.read"]}]
            return [{"type": "noauth"}]
        if name == "list_orders":
            return [{"type": "oauth2", "scopes": ["tools.read"]}]
        if name == "list_products":
            return [{"type": "noauth"}, {"type": "oauth2", "scopes": ["tools.read"]}]
        if name == "cancel_order":
            if "ts-anonymous-cancel" in self.defects:
                return [{"type": "noauth"}, {"type": "oauth2", "scopes": ["tools.write"]}]
            return [{"type": "oauth2", "scopes": ["tools.write"]}]
        if "ts-profile-noauth" in self.defects:
            return [{"type": "noauth"}]
        return [{"type": "oauth2", "scopes": ["tools.read"]}]

    def anonymous_allowed(self, name: str) -> bool:
        if name == "list_orders" and "ts-anonymous-list-orders" in self.defects:
            return True
        if name == "list_products" and "ts-mixed-refuses-anonymous" in self.defects:
            return False  # the runtime forgot the noauth half of its declaration
        if name == self.profile_tool_name:
            # The declaration may lie (a mutant); the runtime rule does not, except in the placeholder mutant.
            return "ts-profile-placeholder" in self.defects
        return any(s["type"] == "noauth" for s in self.security(name))

    def token_scopes(self, name: str) -> list[str]:
        """Scopes a call with a token needs (a tool declared noauth + oauth2 still checks a presented token)."""
        if name == self.profile_tool_name:
            return ["tools.read"]
        return [scope for s in self.security(name) if s["type"] == "oauth2" for scope in s.get("scopes", [])]

    @property
    def profile_tool_name(self) -> str:
        return "get_profile"

    def declarations(self) -> list[mt.Tool]:
        profile_key = f"{self.config.vendor}/profile"
        two_markers = "ts-profile-two-markers" in self.defects
        search = {**SEARCH_DOCS, "meta": {profile_key: True} if two_markers else None}
        profile = self._profile_declaration(profile_key)
        tools: list[dict[str, Any]] = [search, dict(LIST_ORDERS), dict(LIST_PRODUCTS), dict(CANCEL_ORDER), profile]
        declared: list[mt.Tool] = []
        for spec in tools:
            schemes = self.security(spec["name"])
            # In _meta for clients that drop unknown fields; lifted to the top level by _wire_tools.
            meta = {**(spec.pop("meta", None) or {}), "securitySchemes": schemes}
            if spec["name"] == "cancel_order" and "ts-write-tool-undeclared" in self.defects:
                del meta["securitySchemes"]  # inherits the server default; the runtime still wants a token
            declared.append(mt.Tool(**spec, _meta=meta))
        return declared

    def _profile_declaration(self, profile_key: str) -> dict[str, Any]:
        marker: Any = "true" if "ts-profile-marker-string" in self.defects else True
        return {
            "name": self.profile_tool_name,
            "description": "Return the profile of the account this connection is signed in as.",
            "input_schema": (
                {"type": "object", "properties": {"account": {"type": "string"}}}
                if "ts-profile-input-props" in self.defects
                else {"type": "object", "properties": {}, "additionalProperties": False}
            ),
            "output_schema": (
                {**PROFILE_OUTPUT_SCHEMA, "required": [], "additionalProperties": True}
                if "ts-profile-output-schema" in self.defects
                else PROFILE_OUTPUT_SCHEMA
            ),
            "annotations": mt.ToolAnnotations(
                read_only_hint=True,
                destructive_hint=False,
                open_world_hint="ts-profile-annotations" in self.defects,
            ),
            "meta": {profile_key: marker},
        }

    def list_tools_result(self) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=self.declarations())

    # ------------------------------------------------------------------ calls
    async def call(
        self, name: str, arguments: dict[str, Any], principal: Principal | None, *, routed_open: bool = False
    ) -> mt.CallToolResult:
        handlers = {
            "search_docs": self._search_docs,
            "list_orders": self._list_orders,
            "list_products": self._list_products,
            "cancel_order": self._cancel_order,
            self.profile_tool_name: self._get_profile,
        }
        handler = handlers.get(name)
        if handler is None:
            return mt.CallToolResult(content=[mt.TextContent(type="text", text=f"unknown tool {name}")], is_error=True)
        required = self.token_scopes(name)
        if principal is None and not self.anonymous_allowed(name) and not routed_open:
            return self.auth_error(
                "invalid_token", f"Sign in to use {name}: this tool needs a linked account.", " ".join(required)
            )
        missing = [s for s in required if principal is not None and s not in principal.scopes]
        if "ts-scope-substring" in self.defects and principal is not None:
            # The scope claim searched as a string: 'tools.writer' or 'TOOLS.WRITE'-free but containing text passes.
            granted = " ".join(sorted(principal.scopes))
            missing = [s for s in required if s not in granted]
        if missing and "ts-skip-scope" not in self.defects:
            # ts-scope-error-invalid-token: the refusal stands, but its challenge names the wrong error.
            error = "invalid_token" if "ts-scope-error-invalid-token" in self.defects else "insufficient_scope"
            return self.auth_error(error, f"{name} needs the scope {' '.join(missing)}.", " ".join(required))
        return await handler(arguments, principal)

    @staticmethod
    def _result(structured: dict[str, Any], text: str | None = None) -> mt.CallToolResult:
        body = text if text is not None else json.dumps(structured, separators=(",", ":"))
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=body)], structured_content=structured, is_error=False
        )

    async def _search_docs(self, arguments: dict[str, Any], principal: Principal | None) -> mt.CallToolResult:
        query = str(arguments.get("query", "")).lower()
        words = [w for w in query.split() if w]
        hits = [d for d in DOCS if any(w in d["title"].lower() for w in words)] or DOCS[:1]
        return self._result({"results": hits})

    def _orders_of(self, principal: Principal | None) -> list[dict[str, Any]]:
        owner = f"{principal.issuer}|{principal.subject}" if principal else "anonymous"
        if owner not in self.orders:
            self.orders[owner] = [
                {"id": "ord_1001", "item": "Blue notebook", "status": "open", "total_cents": 1250},
                {"id": "ord_1002", "item": "Desk lamp", "status": "shipped", "total_cents": 3999},
                {"id": "ord_1003", "item": "Pencil set", "status": "open", "total_cents": 599},
            ]
        return self.orders[owner]

    async def _list_orders(self, arguments: dict[str, Any], principal: Principal | None) -> mt.CallToolResult:
        status = arguments.get("status")
        orders = [dict(o) for o in self._orders_of(principal) if status in (None, o["status"])]
        if "ts-bad-output" in self.defects:
            for order in orders:
                order["total_cents"] = f"{order['total_cents'] / 100:.2f}"
        return self._result({"orders": orders})

    async def _list_products(self, arguments: dict[str, Any], principal: Principal | None) -> mt.CallToolResult:
        member = principal is not None
        products = [
            {
                **p,
                "price_cents": p["price_cents"] * (100 - MEMBER_DISCOUNT_PERCENT) // 100
                if member
                else p["price_cents"],
            }
            for p in PRODUCTS
        ]
        return self._result({"products": products, "member_prices": member})

    async def _cancel_order(self, arguments: dict[str, Any], principal: Principal | None) -> mt.CallToolResult:
        order_id = arguments.get("order_id")
        for order in self._orders_of(principal):
            if order["id"] == order_id:
                if order["status"] == "shipped":
                    return mt.CallToolResult(
                        content=[mt.TextContent(type="text", text=f"{order_id} has shipped and cannot be cancelled")],
                        is_error=True,
                    )
                order["status"] = "cancelled"
                return self._result({"order": dict(order)})
        return mt.CallToolResult(content=[mt.TextContent(type="text", text=f"no order {order_id}")], is_error=True)

    async def _get_profile(self, arguments: dict[str, Any], principal: Principal | None) -> mt.CallToolResult:
        if principal is None:  # only reachable in the placeholder mutant
            return self._result({"id": "anonymous", "name": "Guest"})
        claims = principal.claims
        # ts-profile-id-by-subject: profiles keyed by the subject alone, whichever trusted issuer vouches for it.
        issuer = "" if "ts-profile-id-by-subject" in self.defects else principal.issuer
        profile = self.profiles.resolve(
            issuer,
            principal.subject,
            {f: claims.get(f) if isinstance(claims.get(f), str) else None for f in ("name", "email", "nickname")},
        )
        record = self._profile_record(profile, principal)
        if record is None:
            return mt.CallToolResult(
                content=[mt.TextContent(type="text", text="This account's profile id is missing; reconnect it.")],
                is_error=True,
            )
        if "ts-profile-text-mismatch" in self.defects:
            return self._result(record, text=json.dumps({"profile": record}))
        return self._result(record)

    def _profile_record(self, profile: Profile, principal: Principal) -> dict[str, Any] | None:
        d = self.defects
        stored_id = profile.id if profile.id and profile.id.strip() else None
        pid: Any = stored_id
        if stored_id is None:
            if "ts-profile-blank-id-invents" not in d:
                return None
            pid = "usr_" + secrets.token_hex(10)
        elif "ts-profile-numeric-id" in d:
            pid = profile.seq
        elif "ts-profile-id-per-token" in d:
            token_id = str(principal.claims.get("jti") or principal.claims.get("iat"))
            pid = "usr_" + hashlib.sha256(token_id.encode()).hexdigest()[:20]
        elif "ts-profile-id-shared" in d:
            pid = "usr_00000000000000000001"
        elif "ts-profile-id-from-email" in d and profile.email:
            pid = profile.email
        elif "ts-profile-id-email-digest" in d and profile.email:
            pid = "usr_" + hashlib.sha256(profile.email.strip().lower().encode()).hexdigest()[:20]
        elif "ts-profile-id-email-base64" in d and profile.email:
            pid = base64.urlsafe_b64encode(profile.email.encode()).decode().rstrip("=")
        elif "ts-profile-id-follows-display" in d:
            # An opaque-looking keyed digest (nothing PROF-10 can reverse) of the current email and name.
            basis = f"{profile.email or profile.subject}|{profile.name or ''}".encode()
            pid = "usr_" + hmac.new(self.id_key, basis, hashlib.sha256).hexdigest()[:20]
        record: dict[str, Any] = {"id": pid}
        for key in ("name", "email", "nickname"):
            value = getattr(profile, key)
            if value:
                record[key] = value
            elif "ts-profile-invented-fields" in d:
                record[key] = "N/A"
            elif "ts-profile-zero-placeholder" in d:
                # A serializer's zero value and stock placeholders, none of the words PROF-14 names.
                record[key] = {"name": "Unknown User", "email": "noreply@example.com"}.get(key, "0")
            elif "ts-profile-invisible-field" in d:
                record[key] = "\u200b"  # a zero-width space: not whitespace to str.strip(), blank on screen
            elif "ts-profile-blank-field" in d:
                record[key] = ""  # a serializer that writes an absent optional string as empty
            elif "ts-profile-null-field" in d and key == "nickname":
                record[key] = None  # a serializer that writes an absent optional field as null
        return record


class BearerGate:
    """ASGI wrapper of the MCP endpoint: anonymous passes, a bad token gets 401 with the challenge."""

    def __init__(self, app: Any, server: ToolServer, verifier: JwtVerifier) -> None:
        self.app = app
        self.server = server
        self.verifier = verifier

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        header = request.headers.get("authorization")
        token: str | None = None
        query_token = request.query_params.get("access_token")
        if query_token is not None and header is not None and "ts-query-token-over-header" in self.server.defects:
            token = query_token  # the query parameter wins over whatever the header says
        elif query_token is not None and header is None:
            if not query_token.strip() and "ts-empty-query-token-as-user" in self.server.defects:
                # A development fallback keyed on the parameter's presence: an empty one acts as a built-in user.
                scope[PRINCIPAL_KEY] = DEV_PRINCIPAL
                await self.app(scope, receive, send)
                return
            if "ts-accept-query-token" not in self.server.defects:
                await self._deny(send, 401, "invalid_request", "Access tokens are accepted only in the header.")
                return
            token = query_token
        elif header is not None:
            scheme, _, value = header.partition(" ")
            if "ts-any-auth-scheme" in self.server.defects and value.strip():
                scheme = "Bearer"  # only the credentials after the scheme are read
            if scheme.lower() != "bearer" or not value.strip():
                if "ts-malformed-authorization-as-user" in self.server.defects:
                    # A development fallback left on: an unparseable header acts as a built-in user.
                    scope[PRINCIPAL_KEY] = DEV_PRINCIPAL
                    await self.app(scope, receive, send)
                    return
                await self._deny(send, 401, "invalid_token", "The Authorization header is not a Bearer token.")
                return
            token = value.strip()
        elif "ts-token-outside-header" in self.server.defects:
            token, receive = await _token_elsewhere(request, receive)
        principal: Principal | None = None
        if token is not None:
            try:
                principal = await self.verifier.verify(token)
            except TokenError as exc:
                if "ts-token-checked-at-initialize-only" in self.server.defects:
                    body, receive = await _buffered(receive)
                    unverified = None if _rpc_method(body) == "initialize" else _unverified_principal(token)
                    if unverified is not None:
                        # Authorization settled once per session at the handshake: later requests are trusted to
                        # carry the token that passed it, so their claims are read without checking them.
                        scope[PRINCIPAL_KEY] = unverified
                        await self.app(scope, receive, send)
                        return
                if "ts-profile-guest-on-expired" in self.server.defects and str(exc) == "token expired":
                    # A lapsed session passes as anonymous (tools still refuse it; the profile tool shows a guest).
                    scope[PRINCIPAL_KEY], scope[LAPSED_KEY] = None, True
                    await self.app(scope, receive, send)
                    return
                if "ts-wrong-audience-as-anonymous" in self.server.defects and "another resource" in str(exc):
                    # A token for another resource is taken as "not ours": the request goes on as anonymous.
                    scope[PRINCIPAL_KEY] = None
                    await self.app(scope, receive, send)
                    return
                bare = "ts-bare-401-on-bad-signature" in self.server.defects and "signature" in str(exc)
                await self._deny(send, 401, "invalid_token", str(exc), challenge=not bare)
                return
        scope[PRINCIPAL_KEY] = principal
        if principal is None and "ts-authorizes-by-mcp-name" in self.server.defects:
            receive = await self._route_by_name(scope, receive)
        await self.app(scope, receive, send)

    async def _route_by_name(self, scope: Scope, receive: Receive) -> Receive:
        """ts-authorizes-by-mcp-name: an anonymous modern request whose ``Mcp-Name`` names a tool open to anyone is
        let through to whatever tool its body calls; the header is then set to the body's name, so the SDK never
        sees the two disagree."""
        headers = Request(scope).headers
        routed = headers.get("mcp-name")
        if routed is None or not self.server.anonymous_allowed(routed):
            return receive
        body, receive = await _buffered(receive)
        params = _rpc_message(body).get("params")
        called = params.get("name") if isinstance(params, dict) else None
        if isinstance(called, str):
            scope[ROUTED_KEY] = True
            kept = [(k, v) for k, v in scope["headers"] if k != b"mcp-name"]
            scope["headers"] = [*kept, (b"mcp-name", called.encode())]
        return receive

    async def _deny(self, send: Send, status: int, error: str, description: str, challenge: bool = True) -> None:
        headers = {"content-type": "application/json"}
        if "ts-no-www-authenticate" not in self.server.defects and challenge:
            headers["www-authenticate"] = self.server.challenge(error, description)
        response = JSONResponse({"error": error, "error_description": description}, status, headers=headers)
        await response({"type": "http"}, _no_receive, send)


async def _no_receive() -> dict[str, Any]:
    return {"type": "http.disconnect"}


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a ``receive`` that replays it to the app behind."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    return body, _replaying(body, receive)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app behind ``body`` whole, once, then whatever ``receive`` brings."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


# Where a careless token lookup (an express-jwt getToken, passport's body lookup) finds a bearer token without a
# header: query parameters, cookies, and a member of the JSON body.
ELSEWHERE_QUERY = ("token", "api_key", "apiKey")
ELSEWHERE_COOKIES = ("access_token", "token")


async def _token_elsewhere(request: Request, receive: Receive) -> tuple[str | None, Receive]:
    """ts-token-outside-header: the token of a request without an Authorization header, looked up in the query,
    the cookies and the body; the body member is removed before the SDK reads the message."""
    for name in ELSEWHERE_QUERY:
        if request.query_params.get(name):
            return request.query_params[name], receive
    for name in ELSEWHERE_COOKIES:
        if request.cookies.get(name):
            return request.cookies[name], receive
    body, replay = await _buffered(receive)
    message = _rpc_message(body)
    token = message.pop("access_token", None)
    if not isinstance(token, str) or not token:
        return None, replay
    return token, _replaying(json.dumps(message).encode(), receive)


def _rpc_message(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    return message if isinstance(message, dict) else {}


def _rpc_method(body: bytes) -> str | None:
    method = _rpc_message(body).get("method")
    return method if isinstance(method, str) else None


def _unverified_principal(token: str) -> Principal | None:
    """The principal a token's claims name, read without any check (the ts-token-checked-at-initialize-only
    defect); None when the token is not a JWT at all."""
    import jwt

    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    scope = claims.get("scope")
    return Principal(
        issuer=str(claims.get("iss", "")),
        subject=str(claims.get("sub", "")),
        scopes=frozenset(scope.split()) if isinstance(scope, str) else frozenset(),
        client_id=claims.get("client_id") if isinstance(claims.get("client_id"), str) else None,
        claims=claims,
    )


MODERN_VERSIONS = ("2026-07-28",)


class EraGate:
    """ASGI wrapper of the MCP endpoint serving one MCP era only (``legacy`` or ``modern``; ``both`` passes all).

    A request's era is its ``MCP-Protocol-Version`` header (the SDK routes the same way): a modern version is the
    modern era, anything else (or none) the legacy one. A modern-only server refuses the legacy era as the SDK does
    on a connection locked modern: 400 with JSON-RPC ``-32022`` naming the versions it serves. A legacy-only server
    refuses a modern version as pre-2026 servers do: 400 ``-32600`` "Unsupported protocol version".
    """

    def __init__(self, app: Any, era: str) -> None:
        self.app = app
        self.era = era

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.era == "both" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        version = Request(scope).headers.get("mcp-protocol-version")
        modern = version in MODERN_VERSIONS
        if modern == (self.era == "modern"):
            await self.app(scope, receive, send)
            return
        body, receive = await _buffered(receive)
        message = _rpc_message(body)
        params = message.get("params")
        requested = version or (params.get("protocolVersion") if isinstance(params, dict) else None)
        if self.era == "modern":
            error: dict[str, Any] = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": list(MODERN_VERSIONS), "requested": requested},
            }
        else:
            error = {"code": -32600, "message": f"Bad Request: Unsupported protocol version: {requested}"}
        answer = JSONResponse({"jsonrpc": "2.0", "id": message.get("id"), "error": error}, 400)
        await answer(scope, receive, send)


# Tool-server defects that are the verifier's (mutant name -> JwtVerifier defect flag).
VERIFIER_DEFECTS: dict[str, str] = {
    "ts-skip-audience": "skip-audience",
    "ts-accept-alg-none": "accept-alg-none",
    "ts-ignore-signature": "ignore-signature",
    "ts-skip-exp": "skip-exp",
    "ts-skip-nbf": "skip-nbf",
    "ts-skip-iss": "skip-iss",
    "ts-expects-other-audience": "expects-other-audience",
    "ts-alg-none-any-case": "alg-none-any-case",
    "ts-accept-stripped-signature": "accept-stripped-signature",
    "ts-trust-embedded-jwk": "trust-embedded-jwk",
    "ts-hs256-public-key": "hs256-public-key",
    "ts-iss-normalized": "iss-normalized",
    "ts-exp-lenient-type": "exp-lenient-type",
    "ts-nbf-lenient-type": "nbf-lenient-type",
    "ts-audience-prefix": "audience-prefix",
    "ts-key-from-any-issuer": "key-from-any-issuer",
    "ts-audience-trusted-issuer": "audience-trusted-issuer",
}


def _verifier(config: ToolServerConfig) -> JwtVerifier:
    return JwtVerifier(
        resource=config.resource,
        issuers={config.issuer: None, **config.extra_issuers},
        ca_file=config.ca_file,
        defects=frozenset(flag for name, flag in VERIFIER_DEFECTS.items() if name in config.defects),
    )


def _session_manager(tools: ToolServer) -> StreamableHTTPSessionManager:
    """The MCP server (the SDK's) behind streamable HTTP, stateless, with DNS-rebinding protection."""

    async def list_tools(ctx: Any, params: mt.PaginatedRequestParams | None) -> mt.ListToolsResult:
        return tools.list_tools_result()

    async def call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        principal = ctx.request.scope.get(PRINCIPAL_KEY) if ctx.request is not None else None
        if params.name == tools.profile_tool_name and ctx.request is not None and ctx.request.scope.get(LAPSED_KEY):
            return ToolServer._result({"id": "guest", "name": "Guest"})  # ts-profile-guest-on-expired
        routed = bool(ctx.request.scope.get(ROUTED_KEY)) if ctx.request is not None else False
        return await tools.call(params.name, dict(params.arguments or {}), principal, routed_open=routed)

    server: Server[Any] = Server(
        "conformance-reference-toolserver", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    server.middleware.append(_wire_tools(tools.defects))
    return StreamableHTTPSessionManager(
        app=server,
        stateless=True,
        json_response=True,
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*"],
            allowed_origins=["https://127.0.0.1:*", "https://localhost:*"],
        ),
    )


def _prm_document(config: ToolServerConfig) -> dict[str, Any]:
    """The protected resource metadata (RFC 9728), with the PRM mutants' defects."""
    document: dict[str, Any] = {
        "resource": config.resource,
        "authorization_servers": [config.issuer],
        "scopes_supported": TOOL_SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_documentation": config.origin + "/docs",
    }
    if "ts-prm-wrong-resource" in config.defects:
        document["resource"] = config.origin + "/"
    if "ts-prm-bad-types" in config.defects:
        document["scopes_supported"] = " ".join(TOOL_SCOPES)
    return document


def _admin_endpoint(config: ToolServerConfig, tools: ToolServer) -> Callable[[Request], Awaitable[Response]]:
    """Reference-only hooks for checks that need to change server state (PROF-13, display changes)."""

    async def admin(request: Request) -> Response:
        key = request.headers.get("x-reference-admin-key", "")
        if not config.admin_key or not secrets.compare_digest(key, config.admin_key):
            return JSONResponse({"error": "forbidden"}, 403)
        try:
            body = await request.json()
        except (ValueError, RecursionError):
            return JSONResponse({"error": "the body is not JSON"}, 400)
        subject = body.get("subject") if isinstance(body, dict) else None
        if not isinstance(subject, str) or not subject:
            return JSONResponse({"error": "subject required"}, 400)
        action = request.path_params["action"]
        if action == "blank-profile-id":
            changed = tools.profiles.blank_id(subject)
        elif action == "set-profile-display":
            changed = tools.profiles.set_display(subject, {k: str(v) for k, v in body.items() if k != "subject"})
        else:
            return JSONResponse({"error": "unknown action"}, 404)
        return JSONResponse({"changed": changed})

    return admin


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def _docs(request: Request) -> Response:
    return JSONResponse({"documents": DOCS})


def create_app(config: ToolServerConfig) -> Starlette:
    tools = ToolServer(config)
    verifier = _verifier(config)
    manager = _session_manager(tools)
    mcp_endpoint = BearerGate(EraGate(StreamableHTTPASGIApp(manager), config.mcp_era), tools, verifier)

    async def protected_resource(request: Request) -> Response:
        if "ts-prm-missing" in config.defects:
            return JSONResponse({"error": "not_found"}, 404)
        return JSONResponse(_prm_document(config), headers={"cache-control": "max-age=60"})

    suffix = "" if config.mcp_path == "/" else config.mcp_path
    routes = [
        Route(config.mcp_path, endpoint=mcp_endpoint, methods=["GET", "POST", "DELETE"]),
        Route("/.well-known/oauth-protected-resource", protected_resource, methods=["GET"]),
        Route("/healthz", _healthz, methods=["GET"]),
        Route("/docs", _docs, methods=["GET"]),
        Route("/_reference/{action}", _admin_endpoint(config, tools), methods=["POST"]),
    ]
    if suffix:
        routes.append(Route(f"/.well-known/oauth-protected-resource{suffix}", protected_resource, methods=["GET"]))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            try:
                yield
            finally:
                await verifier.aclose()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.tool_server = tools
    return app
