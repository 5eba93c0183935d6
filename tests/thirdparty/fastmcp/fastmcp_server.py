"""A FastMCP 2.x tool server as its documentation shows it: ``JWTVerifier`` (JWKS of the authorization server)
behind ``RemoteAuthProvider`` (RFC 9728 metadata naming that server), served as an ASGI app over TLS on 127.0.0.1.

``--audience`` sets ``JWTVerifier(audience=...)``; without it the verifier checks no audience (its default).
Runs in the target's own virtualenv (``.venv-thirdparty``): fastmcp 2.x needs mcp<2.

``--serve PORT ISSUER [AUDIENCE]`` (repeatable) serves several such servers from one process instead, each its own
app, verifier and port, each uvicorn server on its own thread (with its own event loop): the tests' three
configurations pay for one interpreter importing fastmcp (a costly import) instead of three. SIGTERM
ends the process (the threads install no signal handler).
"""

from __future__ import annotations

import argparse
import threading

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


def build_app(port: int, issuer: str, audience: str | None) -> object:
    """The documented FastMCP server on ``port``: its ASGI app."""
    base_url = f"https://127.0.0.1:{port}"
    verifier = JWTVerifier(
        jwks_uri=f"{issuer}/jwks",
        issuer=issuer,
        audience=audience,
        algorithm="RS256",
        required_scopes=["mcp:tools"],
    )
    auth = RemoteAuthProvider(token_verifier=verifier, authorization_servers=[AnyHttpUrl(issuer)], base_url=base_url)
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

    return mcp.http_app(path="/mcp")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--issuer")
    parser.add_argument("--certfile", required=True)
    parser.add_argument("--keyfile", required=True)
    parser.add_argument("--audience")
    parser.add_argument("--serve", nargs="+", action="append", default=[], metavar="PORT ISSUER [AUDIENCE]")
    args = parser.parse_args()
    configs = [(int(port), issuer, rest[0] if rest else None) for port, issuer, *rest in args.serve]
    if args.port is not None:
        configs.append((args.port, args.issuer, args.audience))
    if not configs or not all(issuer for _, issuer, _ in configs):
        parser.error("give --port and --issuer, or --serve PORT ISSUER [AUDIENCE]")
    servers = [
        uvicorn.Server(
            uvicorn.Config(
                build_app(port, issuer, audience),
                host="127.0.0.1",
                port=port,
                ssl_certfile=args.certfile,
                ssl_keyfile=args.keyfile,
                log_level="warning",
            )
        )
        for port, issuer, audience in configs
    ]
    if len(servers) == 1:
        servers[0].run()
        return
    threads = [threading.Thread(target=server.run) for server in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
