"""``python -m conformance.reference.proxy --port P --certfile F --keyfile F --upstream URL [--mutant NAME]...``"""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn

from conformance.reference.proxy.app import create_app
from conformance.reference.proxy.mutants import MUTANTS


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.reference.proxy")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--certfile", required=True)
    parser.add_argument("--keyfile", required=True)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--ca-file")
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--mutant", action="append", default=[], choices=[m.name for m in MUTANTS])
    args = parser.parse_args(argv)
    app = create_app(args.upstream, args.ca_file, frozenset(args.mutant))
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        ssl_certfile=args.certfile,
        ssl_keyfile=args.keyfile,
        log_level="warning",
        timeout_graceful_shutdown=2,
    )


if __name__ == "__main__":
    main()
