"""A tool server built the way the Python MCP SDK documents it, as a vendor would write it.

Two servers in one process, as in the SDK's auth examples (authorization server and resource server apart):

- the authorization server: the SDK's ``create_auth_routes`` (metadata, /authorize, /token, /register, /revoke)
  over an in-memory ``OAuthAuthorizationServerProvider`` of our own, a login page (``/login``) and an RFC 7662
  introspection endpoint for the resource server;
- the resource server: ``MCPServer`` with ``AuthSettings`` and a ``TokenVerifier`` that introspects, served over
  streamable HTTP. ``--check-audience`` sets ``AuthSettings.validate_token_resource=True`` (the SDK refuses a
  token whose introspected ``aud`` is not this server); without it, the SDK's default (unset: a deprecation
  warning, no audience check).

Both listen on 127.0.0.1 over TLS (``--certfile``/``--keyfile``), or plain HTTP with ``--plain-http`` (a development
server, as the SDK's examples run). The test account comes from the environment
(``VENDOR_USER``/``VENDOR_PASSWORD``); ``--resource`` lists every resource the authorization server issues
tokens for (the first is this tool server, the others belong to other services).

Not a conformance reference: no code here tries to pass the harness; it is what the SDK makes easy.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import os
import secrets
import time
import warnings
from typing import Any

import httpx
import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    TokenVerifier,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

SCOPE = "mcp:tools"
ACCESS_TTL = 3600
CODE_TTL = 300


class InMemoryProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """Clients, codes and tokens in dicts; the user signs in on /login before a code is issued."""

    def __init__(
        self, issuer: str, resources: list[str], user: str, password: str, access_ttl: int = ACCESS_TTL
    ) -> None:
        self.issuer = issuer
        self.access_ttl = access_ttl
        self.resources = resources
        self.user, self.password = user, password
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}  # login ticket → client id, request
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and params.resource not in self.resources:
            raise AuthorizeError("invalid_request", "unknown resource")
        ticket = secrets.token_urlsafe(16)
        self.pending[ticket] = (client.client_id, params)
        return f"{self.issuer}/login?ticket={ticket}"

    def complete_login(self, ticket: str) -> str | None:
        entry = self.pending.pop(ticket, None)
        if entry is None:
            return None
        client_id, params = entry
        code = AuthorizationCode(
            code=secrets.token_urlsafe(24),
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + CODE_TTL,
            client_id=client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=self.user,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, subject: str | None) -> OAuthToken:
        access = AccessToken(
            token=secrets.token_urlsafe(32),
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.access_ttl,
            resource=resource,
            subject=subject,
        )
        refresh = RefreshToken(
            token=secrets.token_urlsafe(32), client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        self.access[access.token] = access
        self.refresh[refresh.token] = refresh
        return OAuthToken(
            access_token=access.token,
            token_type="Bearer",
            expires_in=self.access_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh.token,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if self.codes.pop(authorization_code.code, None) is None:
            raise TokenError("invalid_grant", "authorization code already used")
        return self._issue(
            client.client_id, authorization_code.scopes, authorization_code.resource, authorization_code.subject
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(
            client.client_id, scopes or refresh_token.scopes, refresh_token.resource, refresh_token.subject
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def login_page(ticket: str, error: str = "") -> HTMLResponse:
    notice = f'<p class="error">{html.escape(error)}</p>' if error else ""
    return HTMLResponse(
        "<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Sign in to Vendor Tools</h1>"
        f'{notice}<form method="post" action="/login"><input type="hidden" name="ticket" '
        f'value="{html.escape(ticket)}"><label>Username <input name="username"></label>'
        '<label>Password <input type="password" name="password"></label>'
        '<button type="submit">Sign in</button></form></body></html>',
        status_code=400 if error else 200,
    )


SESSION_COOKIE = "vendor_session"
BACK_CHANNEL = ("/token", "/register", "/revoke")


class CsrfGuard:
    """What a session-based authorization server does against cross-site requests (better-auth's origin check): a
    POST that carries the user's session cookie must come from a page of the server's own origin (an ``Origin``
    header), else 403. A host's backend sends no cookie and passes; one that forwards the browser's cookies fails."""

    def __init__(self, app: Any, issuer: str) -> None:
        self.app, self.issuer = app, issuer

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in BACK_CHANNEL:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            if "cookie" in headers and headers.get("origin") != self.issuer:
                body = {"code": "MISSING_OR_NULL_ORIGIN", "message": "Missing or null Origin"}
                await JSONResponse(body, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def authorization_server(provider: InMemoryProvider, session_cookie: bool = False) -> Any:
    async def login(request: Request) -> Response:
        if request.method == "GET":
            return login_page(request.query_params.get("ticket", ""))
        form = await request.form()
        ticket = str(form.get("ticket", ""))
        if form.get("username") != provider.user or form.get("password") != provider.password:
            return login_page(ticket, "Wrong username or password")
        target = provider.complete_login(ticket)
        if target is None:
            return login_page("", "This sign-in request has expired")
        answer = RedirectResponse(target, status_code=302)
        if session_cookie:  # the user stays signed in at the authorization server, as a browser session
            answer.set_cookie(SESSION_COOKIE, secrets.token_urlsafe(16), httponly=True, samesite="lax")
        return answer

    async def introspect(request: Request) -> Response:
        form = await request.form()
        access = await provider.load_access_token(str(form.get("token", "")))
        if access is None:
            return JSONResponse({"active": False})
        return JSONResponse(
            {
                "active": True,
                "client_id": access.client_id,
                "scope": " ".join(access.scopes),
                "exp": access.expires_at,
                "sub": access.subject,
                "aud": access.resource,
                "iss": provider.issuer,
            }
        )

    routes = create_auth_routes(
        provider=provider,
        issuer_url=AnyHttpUrl(provider.issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    routes += [
        Route("/login", login, methods=["GET", "POST"]),
        Route("/introspect", introspect, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    return CsrfGuard(app, provider.issuer) if session_cookie else app


class IntrospectionVerifier(TokenVerifier):
    """Asks the authorization server's introspection endpoint about each bearer token."""

    def __init__(self, endpoint: str, ca_file: str) -> None:
        self.endpoint = endpoint
        self.ca_file = ca_file

    async def verify_token(self, token: str) -> AccessToken | None:
        async with httpx.AsyncClient(verify=self.ca_file, timeout=10) as client:
            try:
                answer = await client.post(self.endpoint, data={"token": token})
                data: dict[str, Any] = answer.json()
            except (httpx.HTTPError, ValueError):
                return None
        if not data.get("active"):
            return None
        return AccessToken(
            token=token,
            client_id=str(data.get("client_id", "")),
            scopes=str(data.get("scope", "")).split(),
            expires_at=data.get("exp"),
            resource=data.get("aud"),
            subject=data.get("sub"),
        )


def resource_server(issuer: str, resource: str, ca_file: str, check_audience: bool) -> Starlette:
    settings: dict[str, Any] = {
        "issuer_url": AnyHttpUrl(issuer),
        "resource_server_url": AnyHttpUrl(resource),
        "required_scopes": [SCOPE],
    }
    if check_audience:
        settings["validate_token_resource"] = True
    with warnings.catch_warnings():  # the default configuration warns that it checks no audience: that is the point
        warnings.simplefilter("ignore")
        auth = AuthSettings(**settings)
    server: MCPServer[Any] = MCPServer(
        "vendor-tools", token_verifier=IntrospectionVerifier(f"{issuer}/introspect", ca_file), auth=auth
    )

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

    @server.tool(annotations=read_only)
    def echo(text: str) -> str:
        """Repeat the text back."""
        return text

    @server.tool(annotations=read_only)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server.streamable_http_app()


async def serve(args: argparse.Namespace) -> None:
    scheme = "http" if args.plain_http else "https"
    issuer = f"{scheme}://127.0.0.1:{args.as_port}"
    user, password = os.environ["VENDOR_USER"], os.environ["VENDOR_PASSWORD"]
    provider = InMemoryProvider(issuer, args.resource, user, password, args.access_ttl)
    apps = [
        (authorization_server(provider, args.session_cookie), args.as_port),
        (resource_server(issuer, args.resource[0], args.cafile, args.check_audience), args.rs_port),
    ]
    servers = [
        uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=port,
                ssl_certfile=None if args.plain_http else args.certfile,
                ssl_keyfile=None if args.plain_http else args.keyfile,
                log_level="warning",
                lifespan="on",
            )
        )
        for app, port in apps
    ]
    await asyncio.gather(*(s.serve() for s in servers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--as-port", type=int, required=True)
    parser.add_argument("--rs-port", type=int, required=True)
    parser.add_argument("--resource", action="append", required=True)
    parser.add_argument("--certfile", required=True)
    parser.add_argument("--keyfile", required=True)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--check-audience", action="store_true")
    parser.add_argument("--access-ttl", type=int, default=ACCESS_TTL, help="access token lifetime (seconds)")
    parser.add_argument("--plain-http", action="store_true", help="no TLS: a development server on loopback")
    parser.add_argument(
        "--session-cookie",
        action="store_true",
        help="sign-in sets a session cookie, and POSTs to /token, /register, /revoke carrying one need an Origin",
    )
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
