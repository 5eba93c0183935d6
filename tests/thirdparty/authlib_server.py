"""A tool server behind an authorization server built with authlib, as a vendor would write them from the libraries'
documentation.

Two servers in one process (authorization server and resource server apart):

- the authorization server: a Flask app with authlib's ``AuthorizationServer`` (the Flask integration), the
  authorization code grant with PKCE (``CodeChallenge(required=True)``), refresh tokens, RFC 9068 JWT access tokens
  (``JWTBearerTokenGenerator``), RFC 9207's ``IssuerParameter`` extension, RFC 8414 metadata (validated with
  ``AuthorizationServerMetadata``), a JWKS, and a sign-in page and a consent page (Allow / Deny) as in authlib's
  example server. With ``--dcr`` it also offers open RFC 7591 registration (``ClientRegistrationEndpoint``);
  without it, its only client is the one the vendor configured (``VENDOR_CLIENT_ID``/``VENDOR_CLIENT_SECRET``,
  ``--redirect-uri``);
- the resource server: the MCP Python SDK's ``MCPServer`` with ``AuthSettings`` and a ``TokenVerifier`` that
  validates the JWT access tokens with authlib's RFC 9068 ``JWTBearerTokenValidator`` (issuer, audience = this
  server, signature by the AS's JWKS).

Both listen on 127.0.0.1 over TLS (``--certfile``/``--keyfile``). The issuer is the authorization server's origin
(no path), or with ``--issuer-path`` the origin and that path (its metadata at
``/.well-known/oauth-authorization-server{path}``, RFC 8414 §3.1). The Flask server handles one request at a time
(with werkzeug's threaded server, authlib's query-then-delete of an authorization code lets two concurrent exchanges
of one code both succeed). The test account comes from the environment (``VENDOR_USER``/``VENDOR_PASSWORD``).

Not a conformance reference: no code here tries to pass the harness; it is what the libraries make easy.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlencode

import httpx
import uvicorn
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error, rfc8414, rfc9207
from authlib.oauth2.rfc6749 import ClientMixin, grants
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator, JWTBearerTokenValidator
from authlib.oauth2.rfc9207 import IssuerParameter
from flask import Flask, jsonify, redirect, request, session
from joserfc.jwk import KeySet, RSAKey
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import AnyHttpUrl
from werkzeug.serving import make_server
from werkzeug.wrappers import Response

SCOPE = "mcp:tools"


@dataclass
class User:
    id: str

    def get_user_id(self) -> str:
        return self.id


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    """A registered client: its id, secret and RFC 7591 metadata, held in memory."""

    client_id: str
    client_secret: str
    metadata: dict[str, Any]

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        uris = self.metadata.get("redirect_uris") or []
        return str(uris[0]) if uris else None

    def get_allowed_scope(self, scope: str) -> str:
        allowed = set(str(self.metadata.get("scope", SCOPE)).split())
        return " ".join(s for s in scope.split() if s in allowed) if scope else ""

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in (self.metadata.get("redirect_uris") or [])

    def check_client_secret(self, client_secret: str) -> bool:
        return bool(self.client_secret) and secrets.compare_digest(self.client_secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "token":
            return method == self.metadata.get("token_endpoint_auth_method", "client_secret_basic")
        return True

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.metadata.get("response_types", ["code"])

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.metadata.get("grant_types", ["authorization_code"])


@dataclass
class Code:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user_id: str
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Refresh:
    token: str
    client_id: str
    scope: str
    user_id: str
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return client.client_id == self.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return 86400

    def is_expired(self) -> bool:
        return False

    def is_revoked(self) -> bool:
        return self.revoked


@dataclass
class Store:
    user: str
    password: str
    clients: dict[str, Client] = field(default_factory=dict)
    codes: dict[str, Code] = field(default_factory=dict)
    refresh: dict[str, Refresh] = field(default_factory=dict)


def authorization_server(args: argparse.Namespace, issuer: str, key: RSAKey, store: Store) -> Flask:
    app = Flask("vendor-auth")
    app.secret_key = secrets.token_hex(32)
    app.config.update(SESSION_COOKIE_SECURE=True)

    class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
        TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post", "none"]

        def save_authorization_code(self, code: str, request: Any) -> None:
            data = request.payload.data
            store.codes[code] = Code(
                code=code,
                client_id=request.client.client_id,
                redirect_uri=request.payload.redirect_uri,
                scope=request.payload.scope or SCOPE,
                user_id=request.user.get_user_id(),
                code_challenge=data.get("code_challenge"),
                code_challenge_method=data.get("code_challenge_method"),
                expires_at=time.time() + 300,
            )

        def query_authorization_code(self, code: str, client: Client) -> Code | None:
            found = store.codes.get(code)
            if found and found.client_id == client.client_id and found.expires_at > time.time():
                return found
            return None

        def delete_authorization_code(self, authorization_code: Code) -> None:
            store.codes.pop(authorization_code.code, None)

        def authenticate_user(self, authorization_code: Code) -> User:
            return User(authorization_code.user_id)

    class RefreshTokenGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
        TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post", "none"]
        INCLUDE_NEW_REFRESH_TOKEN = True

        def authenticate_refresh_token(self, refresh_token: str) -> Refresh | None:
            found = store.refresh.get(refresh_token)
            return found if found and not found.revoked else None

        def authenticate_user(self, refresh_token: Refresh) -> User:
            return User(refresh_token.user_id)

        def revoke_old_credential(self, refresh_token: Refresh) -> None:
            refresh_token.revoked = True

    class Issuer(IssuerParameter):  # type: ignore[misc]
        def get_issuer(self) -> str:
            return issuer

    class AccessTokens(JWTBearerTokenGenerator):  # type: ignore[misc]
        def get_jwks(self) -> dict[str, Any]:
            return KeySet([key]).as_dict(private=True)

        def get_audiences(self, client: Client, user: User, scope: str) -> str:
            return str(args.resource)

    def query_client(client_id: str) -> Client | None:
        return store.clients.get(client_id)

    def save_token(token: dict[str, Any], request: Any) -> None:
        if token.get("refresh_token"):
            user = request.user.get_user_id() if request.user else request.client.client_id
            store.refresh[token["refresh_token"]] = Refresh(
                token["refresh_token"], request.client.client_id, token.get("scope", ""), user
            )

    server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
    server.register_grant(AuthorizationCodeGrant, [CodeChallenge(required=True)])
    server.register_grant(RefreshTokenGrant)
    server.register_extension(Issuer())
    server.register_token_generator("default", AccessTokens(issuer))

    origin = issuer.removesuffix(args.issuer_path) if args.issuer_path else issuer
    metadata = rfc8414.AuthorizationServerMetadata(
        {
            "issuer": issuer,
            "authorization_endpoint": f"{origin}/oauth/authorize",
            "token_endpoint": f"{origin}/oauth/token",
            "jwks_uri": f"{origin}/oauth/jwks",
            "scopes_supported": [SCOPE],
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
        }
    )
    if args.dcr:
        metadata["registration_endpoint"] = f"{origin}/oauth/register"
    metadata.validate(metadata_classes=[rfc9207.AuthorizationServerMetadata])

    class OpenRegistration(ClientRegistrationEndpoint):  # type: ignore[misc]
        def authenticate_token(self, request: Any) -> bool:
            return True  # open registration: anyone may register a client

        def get_server_metadata(self) -> dict[str, Any]:
            return dict(metadata)

        def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any) -> Client:
            client = Client(client_info["client_id"], client_info.get("client_secret", ""), client_metadata)
            store.clients[client.client_id] = client
            return client

    if args.dcr:
        server.register_endpoint(OpenRegistration)
    else:
        client_metadata = {
            "client_name": "Assistant host",
            "redirect_uris": args.redirect_uri,
            "token_endpoint_auth_method": "client_secret_post",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": SCOPE,
        }
        client = Client(os.environ["VENDOR_CLIENT_ID"], os.environ["VENDOR_CLIENT_SECRET"], client_metadata)
        store.clients[client.client_id] = client

    def page(title: str, body: str, status: int = 200) -> Response:
        document = f"<!DOCTYPE html><html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
        return Response(document, status=status, mimetype="text/html")

    @app.get("/.well-known/oauth-authorization-server" + args.issuer_path)
    def server_metadata() -> Any:
        return jsonify(dict(metadata))

    @app.get("/oauth/jwks")
    def jwks() -> Any:
        return jsonify(KeySet([key]).as_dict(private=False))

    @app.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        target = request.values.get("next", "/")
        if not target.startswith("/oauth/authorize"):
            target = "/"
        error = ""
        if request.method == "POST":
            if request.form.get("username") == store.user and request.form.get("password") == store.password:
                session["uid"] = store.user
                return redirect(target)
            error = '<p class="error">Wrong username or password</p>'
        form = (
            f'{error}<form method="post" action="/login">'
            f'<input type="hidden" name="next" value="{html.escape(target)}">'
            '<label>Username <input name="username"></label><label>Password <input type="password" name="password">'
            '</label><button type="submit">Sign in</button></form>'
        )
        return page("Sign in to Vendor Tools", form, 400 if error else 200)

    @app.route("/oauth/authorize", methods=["GET", "POST"])
    def authorize() -> Any:
        uid = session.get("uid")
        if not uid:
            return redirect("/login?" + urlencode({"next": request.full_path}))
        user = User(uid)
        if request.method == "GET":
            try:
                grant = server.get_consent_grant(end_user=user)
            except OAuth2Error as error:
                return page("Authorization error", f"<p>{html.escape(error.error)}</p>", 400)
            client_name = grant.client.metadata.get("client_name") or grant.client.client_id
            action = html.escape(request.full_path)
            form = (
                f"<p>{html.escape(str(client_name))} asks for: {html.escape(grant.request.payload.scope or SCOPE)}</p>"
                f'<form method="post" action="{action}"><button type="submit" name="confirm" value="yes">Allow</button>'
                '<button type="submit" name="confirm" value="no">Deny</button></form>'
            )
            return page("Allow access?", form)
        grant_user = user if request.form.get("confirm") == "yes" else None
        return server.create_authorization_response(grant_user=grant_user)

    @app.post("/oauth/token")
    def issue_token() -> Any:
        return server.create_token_response()

    if args.dcr:

        @app.post("/oauth/register")
        def register() -> Any:
            return server.create_endpoint_response(ClientRegistrationEndpoint.ENDPOINT_NAME)

    return app


class JwtVerifier(TokenVerifier):
    """Validates RFC 9068 JWT access tokens with authlib's validator: the AS's keys (its jwks_uri, fetched once),
    its issuer, and this server as the audience."""

    def __init__(self, issuer: str, resource: str, ca_file: str) -> None:
        verifier = self

        class Validator(JWTBearerTokenValidator):  # type: ignore[misc]
            def get_jwks(self) -> dict[str, Any]:
                return verifier.jwks()

        self.validator = Validator(issuer=issuer, resource_server=resource)
        self.issuer, self.ca_file = issuer, ca_file
        self._jwks: dict[str, Any] | None = None

    def jwks(self) -> dict[str, Any]:
        if self._jwks is None:
            with httpx.Client(verify=self.ca_file, timeout=10) as client:
                origin, _, path = self.issuer.partition("://")[2].partition("/")
                where = f"https://{origin}/.well-known/oauth-authorization-server" + (f"/{path}" if path else "")
                server_metadata = client.get(where).json()
                self._jwks = client.get(server_metadata["jwks_uri"]).json()
        return self._jwks

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            claims = await asyncio.to_thread(self.validator.authenticate_token, token)
            self.validator.validate_token(claims, [], None)
        except OAuth2Error:
            return None
        audience = claims.get("aud")
        return AccessToken(
            token=token,
            client_id=str(claims["client_id"]),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=audience if isinstance(audience, str) else None,
            subject=str(claims["sub"]),
        )


def resource_server(issuer: str, resource: str, ca_file: str) -> Any:
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(issuer),
        resource_server_url=AnyHttpUrl(resource),
        required_scopes=[SCOPE],
        validate_token_resource=True,
    )
    server: MCPServer[Any] = MCPServer("vendor-tools", token_verifier=JwtVerifier(issuer, resource, ca_file), auth=auth)
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
    issuer = f"https://127.0.0.1:{args.as_port}{args.issuer_path}"
    key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(8), "use": "sig", "alg": "RS256"})
    store = Store(os.environ["VENDOR_USER"], os.environ["VENDOR_PASSWORD"])
    flask_server = make_server(
        "127.0.0.1",
        args.as_port,
        authorization_server(args, issuer, key, store),
        threaded=False,
        ssl_context=(args.certfile, args.keyfile),
    )
    threading.Thread(target=flask_server.serve_forever, daemon=True).start()
    config = uvicorn.Config(
        resource_server(issuer, args.resource, args.cafile),
        host="127.0.0.1",
        port=args.rs_port,
        ssl_certfile=args.certfile,
        ssl_keyfile=args.keyfile,
        log_level="warning",
        lifespan="on",
    )
    await uvicorn.Server(config).serve()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--as-port", type=int, required=True)
    parser.add_argument("--rs-port", type=int, required=True)
    parser.add_argument("--resource", required=True, help="this tool server's URL (the tokens' audience)")
    parser.add_argument("--certfile", required=True)
    parser.add_argument("--keyfile", required=True)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--issuer-path", default="", help="the issuer's path (e.g. /oauth); none by default")
    parser.add_argument("--dcr", action="store_true", help="open dynamic client registration")
    parser.add_argument("--redirect-uri", action="append", default=[], help="the predefined client's redirect URIs")
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
