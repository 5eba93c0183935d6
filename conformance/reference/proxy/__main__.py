"""``python -m conformance.reference.proxy --port P --certfile F --keyfile F --upstream URL [--mutant NAME]...``"""

from __future__ import annotations

import uvicorn

from conformance.reference._latency import with_latency
from conformance.reference._service import service_parser, uvicorn_options
from conformance.reference.proxy.app import create_app
from conformance.reference.proxy.mutants import MUTANTS


def main(argv: list[str] | None = None) -> None:
    parser = service_parser("conformance.reference.proxy", (m.name for m in MUTANTS))
    parser.add_argument("--upstream", required=True)
    args = parser.parse_args(argv)
    app = create_app(args.upstream, args.ca_file, frozenset(args.mutant))
    uvicorn.run(with_latency(app, args.latency), **uvicorn_options(args))


if __name__ == "__main__":
    main()
