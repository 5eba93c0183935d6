"""What reading the rule catalog (conformance/core/catalog.toml) costs a process: parsed with tomllib (a cold
cache) and read back from the cache directory (every later process), each building the ``Rule`` rows.

    .venv/bin/python benchmarks/catalog_load.py [--runs 30]

Prints the best and median CPU time of each, in milliseconds (in-process, so interpreter start-up is not counted).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(action: Callable[[], object], runs: int) -> list[float]:
    spent = []
    for _ in range(runs):
        started = time.process_time()
        action()
        spent.append((time.process_time() - started) * 1000)
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()
    import os

    from conformance.core import rules

    raw = (files("conformance.core") / rules.CATALOG_FILE).read_bytes()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        rules._parsed(raw)  # fill the cache
        figures = {
            "tomllib parse": timed(lambda: rules.parse_rows(tomllib.loads(raw.decode("utf-8"))["rule"]), options.runs),
            "from the cache": timed(lambda: rules.parse_rows(rules._parsed(raw)), options.runs),
        }
    for name, spent in figures.items():
        best, median = min(spent), statistics.median(spent)
        print(f"{name:15} best {best:7.2f} ms CPU   median {median:7.2f} ms CPU   ({len(spent)} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
