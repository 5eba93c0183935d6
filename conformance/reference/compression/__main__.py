"""``python -m conformance.reference.compression --host H --port P --certfile F --keyfile F --data-dir D``.

API keys come from ``--api-key`` (repeatable) or ``COMPRESSION_API_KEYS`` (comma-separated); the object store
endpoints from ``--objstore-a-endpoint`` / ``--objstore-b-endpoint``; ``--plain-port`` adds a plain-HTTP listener
that redirects every request to HTTPS (see ``serve``).
"""

from __future__ import annotations

import sys

from conformance.reference._service import service_parser

from .app import api_keys_from_env, create_app
from .fetch import SourcePolicy
from .mutants import MUTANTS
from .serve import SandboxServer
from .store import StoreConfig
from .workers import use_fork_server


def main(argv: list[str] | None = None) -> int:
    parser = service_parser("conformance.reference.compression", (m.name for m in MUTANTS))
    parser.add_argument("--api-key", action="append", default=[], help="accepted API key (repeatable)")
    parser.add_argument("--objstore-a-endpoint", help="S3 API endpoint for store service objstore_a")
    parser.add_argument("--objstore-b-endpoint", help="GCS JSON API endpoint for store service objstore_b")
    parser.add_argument(
        "--allow-loopback-sources", action="store_true", help="let {source: {url}} fetch from loopback (tests only)"
    )
    parser.add_argument("--monthly-limit", type=int, default=0, help="compressions per key per month (0: none)")
    parser.add_argument("--workers", type=int, default=4, help="concurrent compression jobs")
    parser.add_argument("--plain-port", type=int, help="also listen on plain HTTP there, redirecting to HTTPS")
    args = parser.parse_args(argv)
    if args.data_dir is None:
        parser.error("--data-dir is required")
    use_fork_server()  # this process is the sandbox: its engine workers are forked, the engine imported once
    keys = args.api_key + api_keys_from_env()
    if not keys:
        parser.error("give at least one API key (--api-key or COMPRESSION_API_KEYS)")
    app = create_app(
        args.data_dir,
        keys,
        args.mutant,
        source_policy=SourcePolicy(allow_loopback=args.allow_loopback_sources, ca_file=args.ca_file),
        stores=StoreConfig(args.objstore_a_endpoint, args.objstore_b_endpoint, args.ca_file),
        monthly_limit=args.monthly_limit,
        workers=args.workers,
    )
    server = SandboxServer(
        app,
        args.host,
        args.port,
        str(args.certfile),
        str(args.keyfile),
        plain_http="plain_http" in args.mutant,
        plain_output_only="plain_http_output" in args.mutant,
        plain_port=args.plain_port,
        latency_s=args.latency,
    )
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
