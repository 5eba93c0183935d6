"""What a certification imports before its first check, per suite group, against one embedded reference
stack: ``python -X importtime -m pytest --suite ...`` with a plugin that marks the first check on stderr; the
import-time lines before the mark are summed per top-level package (self time, microseconds as Python reports them).
The run uses ``-s``: pytest's capture would otherwise swallow what collection writes on stderr.

    .venv/bin/python benchmarks/imports_before_first_check.py [--suites compression platform auth,profile] [--top 15]

Import times are wall clock and grow with the machine's load and with ``PYTHONDONTWRITEBYTECODE``; compare the
package lists and their relative shares, and the modules that should not be there at all (``mcp`` on a
compression or platform run, ``hypothesis`` when no property check is collected).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from conformance.reference.stack import running_stack

HERE = Path(__file__).resolve().parent
MARK = "##first-check##"
WATCH = ("mcp", "hypothesis", "jsonschema", "pydantic", "rich", "jinja2", "cryptography", "starlette", "uvicorn")


def profile(env: dict[str, str], suites: str, tmp: str) -> tuple[Counter[str], int, set[str], Counter[str]]:
    command = [sys.executable, "-X", "importtime", "-m", "pytest", "-p", "no:cacheprovider", "-p", "_first_check", "-s"]
    command += ["-q", "--suite", suites, "--report-dir", str(Path(tmp) / f"report-{suites}")]
    run = subprocess.run(
        command, env={**env, "BENCH_FIRST_CHECK_MARK": MARK}, cwd=tmp, capture_output=True, text=True, check=False
    )
    per_package: Counter[str] = Counter()
    after: Counter[str] = Counter()  # imported during the checks and the end of the run
    modules: set[str] = set()
    marked = False
    for line in run.stderr.splitlines():
        if line.startswith(MARK):
            marked = True
            continue
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = (part.strip() for part in line[len("import time:") :].split("|"))
        module = name.strip()
        if marked:
            after[module.split(".")[0]] += int(self_us)
            continue
        modules.add(module)
        per_package[module.split(".")[0]] += int(self_us)
    return per_package, sum(per_package.values()), modules, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", nargs="*", default=["compression", "platform", "auth,profile"])
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), base.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp, running_stack() as stack:
        env = {**base, **stack.settings}
        for suites in args.suites:
            per_package, total, modules, after = profile(env, suites, tmp)
            print(f"== {suites}: {len(modules)} modules, {total / 1e6:.2f} s of import self time before the 1st check")
            for package, us in per_package.most_common(args.top):
                print(f"   {package:28s} {us / 1e3:7.0f} ms")
            present = [w for w in WATCH if any(m == w or m.startswith(w + ".") for m in modules)]
            print(f"   watched packages imported: {', '.join(present) or 'none'}")
            later = ", ".join(f"{p} {us / 1e3:.0f} ms" for p, us in after.most_common(6))
            print(f"   after the first check: {sum(after.values()) / 1e6:.2f} s ({later})", flush=True)


if __name__ == "__main__":
    main()
