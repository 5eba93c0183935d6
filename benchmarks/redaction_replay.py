"""The redactor's work in a real certification, replayed from a trace of its calls (``_redact_trace.py``): every
secret registered, every text, URL, header set and body scrubbed, and the last pass, in the run's order.

    REDACT_TRACE_DIR=DIR PYTEST_PLUGINS=benchmarks._redact_trace .venv/bin/python benchmarks/latency.py --marginal \\
        --copies 2 --rounds 1 --suites auth,profile --concurrency 1    # DIR/trace-PID.pkl: the fleet of one, of two
    .venv/bin/python benchmarks/redaction_replay.py TRACE [--out RESULTS]

A trace is recorded once and replayed with each checkout (``PYTHONPATH`` set to it), under cachegrind for a count
the machine's load does not move: the difference between the fleet of two's trace and the fleet of one's is the
redactor's work for a further target, divided by its exchanges (half the header sets of that difference).
``--out`` writes what every call returned (pickled), for comparing two checkouts' redaction byte for byte.
``SKIP=name,...`` leaves those calls out (what a part of the work costs: the difference it makes).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from conformance.host._redact import Redactor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--out", type=Path, help="write every call's result there (pickled)")
    args = parser.parse_args()
    skip = set(os.environ.get("SKIP", "").split(","))
    calls = [(ident, name, pickle.loads(arguments)) for ident, name, arguments in pickle.loads(args.trace.read_bytes())]
    redactors: dict[int, Redactor] = {}
    results: list[Any] = []
    started = time.process_time()
    for ident, name, (positional, named) in calls:
        if name == "__init__":
            redactors[ident] = Redactor(*positional, **named)
            continue
        redactor = redactors.get(ident) or redactors.setdefault(ident, Redactor())
        if name not in skip:
            results.append(getattr(redactor, "header_items" if name == "headers" else name)(*positional, **named))
    spent = time.process_time() - started
    header_sets = sum(1 for _, name, _ in calls if name in ("header_items", "headers"))
    print(f"{len(calls)} calls ({header_sets} header sets): {spent:.3f} s CPU", file=sys.stderr)
    if args.out is not None:
        args.out.write_bytes(pickle.dumps(results))


if __name__ == "__main__":
    main()
