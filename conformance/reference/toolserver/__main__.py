"""``python -m conformance.reference.toolserver --host H --port P --certfile F --keyfile F --data-dir D ...``"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

import uvicorn

from conformance.reference._latency import with_latency
from conformance.reference._service import service_parser, uvicorn_options
from conformance.reference.toolserver._deferred import DeferredApp
from conformance.reference.toolserver.mtls_front import MtlsFront
from conformance.reference.toolserver.mutants import MUTANTS


def main(argv: list[str] | None = None) -> None:
    parser = service_parser("conformance.reference.toolserver", (m.name for m in MUTANTS))
    parser.add_argument("--resource", required=True, help="canonical resource = the MCP endpoint URL")
    parser.add_argument("--issuer", required=True, help="issuer of the authorization server")
    parser.add_argument(
        "--trusted-issuer",
        action="append",
        default=[],
        metavar="ISSUER=JWKS_URL",
        help="an extra issuer to trust and its JWKS (https: or file: URL); repeatable",
    )
    parser.add_argument("--vendor", default="openai", help="vendor prefix of the profile marker")
    parser.add_argument(
        "--mcp-era",
        choices=["both", "legacy", "modern"],
        default="both",
        help="the MCP eras served: both (default), legacy (initialize) or modern (2026-07-28) only",
    )
    parser.add_argument("--mtls-port", type=int, help="also serve an mTLS front on this port (AUTH-MTLS-01)")
    parser.add_argument("--mtls-trust", help="the connector intermediate CA client certificates must chain to")
    parser.add_argument("--mtls-dns-name", help="the SAN dnsName client certificates must carry")
    args = parser.parse_args(argv)
    if args.data_dir is None:
        parser.error("--data-dir is required")
    extra = dict(item.split("=", 1) for item in args.trusted_issuer)
    # The app (its module imports the mcp SDK, most of the start) is built in a thread while the server already
    # answers its health check: conformance/reference/toolserver/_deferred.py.
    app = DeferredApp(lambda: _build(args, extra))
    server = uvicorn.Server(uvicorn.Config(with_latency(app, args.latency), **uvicorn_options(args)))
    if not args.mtls_port:
        server.run()
        return
    front = MtlsFront(
        certfile=str(args.certfile),
        keyfile=str(args.keyfile),
        trust_file=args.mtls_trust,
        dns_name=args.mtls_dns_name,
        upstream_host=args.host,
        upstream_port=args.port,
        upstream_ca=args.ca_file,
        check_san="ts-mtls-accept-wrong-san" not in args.mutant,
        san_prefix="ts-mtls-san-prefix" in args.mutant,
        pin_first_leaf="ts-mtls-pin-first-leaf" in args.mutant,
        any_purpose="ts-mtls-accept-server-eku" in args.mutant,
    )

    async def serve() -> None:
        listener = await front.start(args.host, args.mtls_port)  # listening before the health check can pass
        try:
            await server.serve()
        finally:
            listener.close()

    asyncio.run(serve())


def _build(args: argparse.Namespace, extra: dict[str, str]) -> Any:
    from conformance.reference.toolserver.app import ToolServerConfig, create_app

    config = ToolServerConfig(
        resource=args.resource,
        issuer=args.issuer,
        data_dir=args.data_dir,
        ca_file=args.ca_file,
        extra_issuers=extra,
        vendor=args.vendor,
        admin_key=os.environ.get("CONFORMANCE_REFERENCE_ADMIN_KEY") or None,
        defects=frozenset(args.mutant),
        mcp_era=args.mcp_era,
    )
    return create_app(config)


if __name__ == "__main__":
    main()
