"""A small rewriting HTTPS reverse proxy in front of the IdP, for defects the IdP cannot be configured into.

It forwards every request with its Host header, so the IdP builds its URLs (metadata endpoints, redirects) for the
proxy's origin, and rewrites only what the active mutant names: the discovery JSON, the ``iss`` of authorization
redirects, or the ``resource`` parameter of requests. Without a mutant it is a transparent pass-through.
"""

from __future__ import annotations

import itertools
import json
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

METADATA_PATHS = ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server")
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}


def rewrite_metadata(document: dict[str, Any], defects: frozenset[str], path: str = "") -> dict[str, Any]:
    doc = dict(document)
    if path == "/.well-known/openid-configuration":
        # The OpenID discovery copy goes its own way; the RFC 8414 copy, the one a host reads first, stays right.
        if "proxy-openid-copy-other-issuer" in defects:
            doc["issuer"] = str(doc["issuer"]).rstrip("/") + "/"
        if "proxy-openid-copy-other-token-endpoint" in defects and isinstance(doc.get("token_endpoint"), str):
            doc["token_endpoint"] = doc["token_endpoint"].rstrip("/") + "/v1"
    if "proxy-issuer-trailing-slash" in defects:
        doc["issuer"] = str(doc["issuer"]).rstrip("/") + "/"
    if "proxy-drop-s256" in defects:
        doc.pop("code_challenge_methods_supported", None)
    if "proxy-iss-unadvertised" in defects:
        doc["authorization_response_iss_parameter_supported"] = False
    if "proxy-http-token-endpoint" in defects and isinstance(doc.get("token_endpoint"), str):
        doc["token_endpoint"] = "http://" + doc["token_endpoint"].removeprefix("https://")
    if "proxy-no-client-identification" in defects:
        doc.pop("registration_endpoint", None)
        doc.pop("client_id_metadata_document_supported", None)
    if "proxy-secret-methods-only" in defects:
        doc["token_endpoint_auth_methods_supported"] = ["client_secret_basic"]
    return doc


# proxy-strip-iss-after-first: how many successful authorization responses (with a code) went through already.
_successes = itertools.count()


def _rewrite_params(params: list[tuple[str, str]], defects: frozenset[str]) -> list[tuple[str, str]]:
    if "proxy-drop-state" in defects:
        params = [(k, v) for k, v in params if k != "state"]
    if "proxy-strip-iss-after-first" in defects and any(k == "code" for k, _ in params) and next(_successes) > 0:
        params = [(k, v) for k, v in params if k != "iss"]
    request_error = any(k == "error" and v != "access_denied" for k, v in params)  # raised before any consent
    if "proxy-strip-iss" in defects or ("proxy-strip-iss-on-request-errors" in defects and request_error):
        params = [(k, v) for k, v in params if k != "iss"]
    elif "proxy-alter-iss" in defects:
        params = [(k, "https://other-issuer.example.test" if k == "iss" else v) for k, v in params]
    elif "proxy-issuer-trailing-slash" in defects:
        params = [(k, v.rstrip("/") + "/" if k == "iss" else v) for k, v in params]
    return params


def rewrite_location(location: str, defects: frozenset[str]) -> str:
    """The redirect with the mutant's change to its query or fragment parameters (untouched otherwise)."""
    parts = urlsplit(location)
    for part_name in ("query", "fragment"):
        params = parse_qsl(getattr(parts, part_name), keep_blank_values=True)
        changed = _rewrite_params(params, defects)
        if changed != params:
            parts = parts._replace(**{part_name: urlencode(changed)})
    return urlunsplit(parts)


def _drop_resource(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in pairs if k != "resource"]


def create_app(upstream: str, ca_file: str | None, defects: frozenset[str]) -> Starlette:
    # The user agents' cookies travel in their own Cookie headers: the proxy's client must never keep a jar of its
    # own, or every user behind the proxy would share the first one's IdP session.
    no_jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    client = httpx.AsyncClient(
        base_url=upstream,
        cookies=no_jar,
        verify=ssl.create_default_context(cafile=ca_file) if ca_file else True,
        timeout=15.0,
        follow_redirects=False,
    )

    async def forward(request: Request) -> Response:
        path = request.url.path
        if "proxy-no-metadata" in defects and path in METADATA_PATHS:
            return JSONResponse({"error": "not_found"}, 404)
        if "proxy-dcr-broken" in defects and path == "/reg":
            return JSONResponse({"error": "server_error", "error_description": "registration is unavailable"}, 500)
        if "proxy-reject-id-token-hint" in defects and "id_token_hint" in request.query_params:
            return JSONResponse({"error": "invalid_request", "error_description": "id_token_hint not accepted"}, 400)
        query = request.url.query
        body = await request.body()
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP]
        headers = [(k, v) for k, v in headers if k.lower() != "accept-encoding"] + [("accept-encoding", "identity")]
        if "proxy-drop-resource" in defects:
            query = urlencode(_drop_resource(parse_qsl(query, keep_blank_values=True)))
            if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
                body = urlencode(_drop_resource(parse_qsl(body.decode(), keep_blank_values=True))).encode()
        upstream_response = await client.request(
            request.method, path + ("?" + query if query else ""), headers=headers, content=body
        )
        content = upstream_response.content
        out_headers = [(k, v) for k, v in upstream_response.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        if path in METADATA_PATHS and upstream_response.status_code == 200:
            content = json.dumps(rewrite_metadata(upstream_response.json(), defects, path)).encode()
        if "proxy-token-type-not-bearer" in defects and path == "/token" and upstream_response.status_code == 200:
            content = json.dumps({**upstream_response.json(), "token_type": "mac"}).encode()
        location = upstream_response.headers.get("location")
        if location is not None:
            out_headers = [(k, v) for k, v in out_headers if k.lower() != "location"]
            out_headers.append(("location", rewrite_location(location, defects)))
        response = Response(content, status_code=upstream_response.status_code)
        response.raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in out_headers]
        response.raw_headers.append((b"content-length", str(len(content)).encode()))
        return response

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await client.aclose()

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)], lifespan=lifespan)
