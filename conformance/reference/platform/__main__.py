"""Serve the platform sandbox: ``python -m conformance.reference.platform --host H --port P --certfile F
--keyfile F --data-dir D [--config FILE] [--request-limit N [--window S]] [--mutant NAME]...`` (plain HTTP when no
certificate is given)."""

from __future__ import annotations

from pathlib import Path

import uvicorn

from conformance.reference._latency import with_latency
from conformance.reference._service import KEEP_ALIVE_S, http_protocol, service_parser
from conformance.reference.platform.app import create_app
from conformance.reference.platform.mutants import MUTANTS
from conformance.reference.platform.settings import load_settings


def main(argv: list[str] | None = None) -> None:
    parser = service_parser(
        "conformance.reference.platform", (m.name for m in MUTANTS), tls_required=False, description=__doc__
    )
    parser.add_argument("--config", type=Path, help="JSON file of API keys and their limits (see settings.py)")
    parser.add_argument(
        "--request-limit", type=int, help="requests per window for every key but the throttled one (default: none)"
    )
    parser.add_argument("--window", type=float, default=60.0, help="seconds of a --request-limit window (60)")
    args = parser.parse_args(argv)
    if args.data_dir is None:
        parser.error("--data-dir is required")
    if (args.certfile is None) != (args.keyfile is None):
        parser.error("--certfile and --keyfile go together")
    settings = load_settings(args.config)
    if args.request_limit is not None:
        settings = settings.with_request_limit(args.request_limit, args.window)
    app = create_app(args.data_dir, settings=settings, mutants=frozenset(args.mutant))
    uvicorn.run(
        with_latency(app, args.latency),
        host=args.host,
        port=args.port,
        ssl_certfile=str(args.certfile) if args.certfile else None,
        ssl_keyfile=str(args.keyfile) if args.keyfile else None,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_S,
        http=http_protocol(),
    )


if __name__ == "__main__":
    main()
