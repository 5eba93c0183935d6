"""What the product's imports cost a run: CPU seconds of importing each piece a certification loads, each in
a fresh interpreter after what a run has already loaded by then, and which heavy modules each one drags in.

    .venv/bin/python benchmarks/import_cost.py [--repeat 7] [--pythonpath OTHER_CHECKOUT]

``--pythonpath`` puts another checkout's ``conformance`` first on the path (compare a base commit with the working
tree; compile it first, ``python -m compileall -q DIR/conformance``, or it is measured compiling itself when
``PYTHONDONTWRITEBYTECODE`` is set). Medians of CPU time (``time.process_time``) around the import alone; machine
load moves them, so compare runs taken one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# (what, already loaded by then, measured import)
PIECES = [
    ("the pytest plugin (every run)", "import pytest", "import conformance.pytest.plugin, conformance.pytest.vendor"),
    (
        "the SDK session (auth/profile checks)",
        "import conformance.pytest.plugin",
        "import conformance.host.mcp_session",
    ),
    ("platform judges", "import conformance.pytest.plugin", "import conformance.judges.platform"),
    ("compression judges", "import conformance.pytest.plugin", "import conformance.judges.compression"),
]
HEAVY = ("httpx._main", "click", "mcp.server", "starlette", "uvicorn", "jsonschema", "jwt", "mcp_types", "hypothesis")
PROBE = """
import json, sys, time
exec(sys.argv[1])
before = set(sys.modules)
started = time.process_time()
exec(sys.argv[2])
cpu = time.process_time() - started
print(json.dumps([cpu, sorted(m for m in sys.argv[3].split(",") if m in sys.modules and m not in before)]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--pythonpath", help="a checkout whose conformance package to measure instead")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.pythonpath, env.get("PYTHONPATH")]))
    for what, before, measured in PIECES:
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", PROBE, before, measured, ",".join(HEAVY)],
                    env=env,
                    cwd=tempfile.gettempdir(),  # not a checkout: `-c` puts the working directory first on the path
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(args.repeat)
        ]
        cpu = statistics.median(r[0] for r in runs)
        print(f"{what:40s} {cpu * 1000:6.0f} ms CPU (median of {len(runs)}); loads {', '.join(runs[0][1]) or '-'}")


if __name__ == "__main__":
    main()
