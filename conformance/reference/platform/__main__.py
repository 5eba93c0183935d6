"""Serve the platform sandbox: ``python -m conformance.reference.platform --host H --port P --certfile F
--keyfile F --data-dir D [--config FILE] [--mutant NAME]...`` (plain HTTP when no certificate is given)."""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn

from conformance.reference.platform.app import create_app
from conformance.reference.platform.mutants import MUTANTS
from conformance.reference.platform.settings import load_settings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.reference.platform", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--certfile", type=Path)
    parser.add_argument("--keyfile", type=Path)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--config", type=Path, help="JSON file of API keys and their limits (see settings.py)")
    parser.add_argument("--mutant", action="append", default=[], choices=sorted(m.name for m in MUTANTS))
    args = parser.parse_args(argv)
    if (args.certfile is None) != (args.keyfile is None):
        parser.error("--certfile and --keyfile go together")
    app = create_app(args.data_dir, settings=load_settings(args.config), mutants=frozenset(args.mutant))
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        ssl_certfile=str(args.certfile) if args.certfile else None,
        ssl_keyfile=str(args.keyfile) if args.keyfile else None,
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
