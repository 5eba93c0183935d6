"""``python -m conformance.reference.compression --host H --port P --certfile F --keyfile F --data-dir D``.

API keys come from ``--api-key`` (repeatable) or ``COMPRESSION_API_KEYS`` (comma-separated); the object store
endpoints from ``--objstore-a-endpoint`` / ``--objstore-b-endpoint``.
"""

from __future__ import annotations

import argparse
import sys

from .app import api_keys_from_env, create_app
from .fetch import SourcePolicy
from .serve import SandboxServer
from .store import StoreConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.reference.compression")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--certfile", required=True)
    parser.add_argument("--keyfile", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--mutant", action="append", default=[], help="switch on one defect (repeatable)")
    parser.add_argument("--api-key", action="append", default=[], help="accepted API key (repeatable)")
    parser.add_argument("--objstore-a-endpoint", help="S3 API endpoint for store service objstore_a")
    parser.add_argument("--objstore-b-endpoint", help="GCS JSON API endpoint for store service objstore_b")
    parser.add_argument("--ca-file", help="extra CA trusted for the object stores and https sources")
    parser.add_argument(
        "--allow-loopback-sources", action="store_true", help="let {source: {url}} fetch from loopback (tests only)"
    )
    parser.add_argument("--monthly-limit", type=int, default=0, help="compressions per key per month (0: none)")
    parser.add_argument("--workers", type=int, default=4, help="concurrent compression jobs")
    args = parser.parse_args(argv)
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
        app, args.host, args.port, args.certfile, args.keyfile, plain_http="plain_http" in args.mutant
    )
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
