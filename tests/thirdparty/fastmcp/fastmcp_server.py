"""A FastMCP 2.x tool server as its documentation shows it: ``JWTVerifier`` (JWKS of the authorization server)
behind ``RemoteAuthProvider`` (RFC 9728 metadata naming that server), served as an ASGI app over TLS on 127.0.0.1.

``--audience`` sets ``JWTVerifier(audience=...)``; without it the verifier checks no audience (its default).
Runs in the target's own virtualenv (``.venv-thirdparty``): fastmcp 2.x needs mcp<2.
"""

from __future__ import annotations

import argparse

import uvicorn
from fastmcp import FastMCP
from fastmcp.server.auth import RemoteAuthProvider
from fastmcp.server.auth.providers.jwt import JWTVerifier
from fastmcp.server.dependencies import get_access_token
from pydantic import AnyHttpUrl

PROFILE_SCHEMA = {
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--certfile", required=True)
    parser.add_argument("--keyfile", required=True)
    parser.add_argument("--audience")
    args = parser.parse_args()

    base_url = f"https://127.0.0.1:{args.port}"
    verifier = JWTVerifier(
        jwks_uri=f"{args.issuer}/jwks",
        issuer=args.issuer,
        audience=args.audience,
        algorithm="RS256",
        required_scopes=["mcp:tools"],
    )
    auth = RemoteAuthProvider(
        token_verifier=verifier, authorization_servers=[AnyHttpUrl(args.issuer)], base_url=base_url
    )
    mcp = FastMCP("vendor-tools", auth=auth)

    read_only = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}

    @mcp.tool(annotations=read_only)
    def echo(text: str) -> str:
        """Repeat the text back."""
        return text

    @mcp.tool(annotations=read_only)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    # The host's profile tool, declared as its contract describes (marker, annotations, the record schema).
    @mcp.tool(annotations=read_only, meta={"openai/profile": True}, output_schema=PROFILE_SCHEMA)
    def whoami() -> dict[str, str]:
        """The signed-in account's profile."""
        token = get_access_token()
        subject = (token.claims or {}).get("sub") if token is not None else None
        if not isinstance(subject, str) or not subject.strip():
            raise ValueError("no signed-in account")
        return {"id": subject}

    app = mcp.http_app(path="/mcp")
    uvicorn.run(
        app, host="127.0.0.1", port=args.port, ssl_certfile=args.certfile, ssl_keyfile=args.keyfile, log_level="warning"
    )


if __name__ == "__main__":
    main()
