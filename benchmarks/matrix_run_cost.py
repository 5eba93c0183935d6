"""What one of the mutant matrix's harness runs spends, and on what (the matrix makes ~166 of them): runs
forked from a process that has imported what the matrix's fork server preloads (tests/matrix/harness.py PRELOAD,
then tests/matrix/_preload.py), with the matrix's arguments, against one reference stack; the CPU of each run
(user + system, measured inside the forked run around ``pytest.main``) and of its report writing by part.

    .venv/bin/python benchmarks/matrix_run_cost.py [--runs 3] [--case auth] [--case platform ...]

Cases: ``auth`` and ``profile`` (the tool-server mutants' suites), ``platform`` (platform,campaigns with 3
Hypothesis examples, as a platform mutant's case runs) and ``compression``. ``fixed`` is a run that selects no check
(``-k`` matching nothing): what every run pays for its start-up and finish whatever it checks. The report parts are
timed by wrapping the writers for the forked run only: ``html``, ``har`` (report.html and report.har, which the
matrix never reads: its runs pass ``--report-formats json`` and skip them; these runs write them), ``json``
(report.json, which it reads), ``build`` (the report model). Prints the medians.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASES: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "auth": ("auth", ["toolserver"], {}),
    "profile": ("profile", ["toolserver"], {}),
    "platform": ("platform,campaigns", ["platform"], {"CONFORMANCE_HYPOTHESIS_EXAMPLES": "3"}),
    "compression": ("compression", ["compression"], {}),
}
PARTS = ("build", "json", "html", "har")


def preload() -> None:
    from tests.matrix.harness import PRELOAD

    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # as the fork server, which skips a module that is missing
            importlib.import_module(name)


def timed(spent: dict[str, float], module: Any, name: str, part: str) -> None:
    original: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[part] = spent.get(part, 0.0) + time.process_time() - began

    setattr(module, name, wrapper)


def forked_run(env: dict[str, str], directory: Path, args: list[str]) -> dict[str, float]:
    """One run forked from this process, as the matrix's fork server forks it: its CPU in total and by part."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the run
        os.close(read)
        spent: dict[str, float] = {}
        try:
            import pytest

            import conformance.pytest.plugin as plugin
            from conformance.report import har, html, json_writer

            timed(spent, plugin, "build_report", "build")
            timed(spent, json_writer, "write_json", "json")
            timed(spent, html, "write_html", "html")
            timed(spent, har, "write_har", "har")
            os.environ.clear()
            os.environ.update(env)
            os.chdir(directory)
            output = os.open(directory / "output.txt", os.O_WRONLY | os.O_CREAT, 0o600)
            os.dup2(output, 1)
            os.dup2(output, 2)
            began = time.process_time()
            pytest.main(["-p", "no:cacheprovider", "--assert=plain", "--report-dir", str(directory), *args])
            spent["total"] = time.process_time() - began
            os.write(write, json.dumps(spent).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        data = answer.read()
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"the forked run in {directory} reported nothing (see its output.txt)")
    result: dict[str, float] = json.loads(data)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", action="append", choices=list(CASES), help="default: all")
    options = parser.parse_args()
    from conformance.reference.stack import running_stack

    preload()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    for case in options.case or list(CASES):
        suites, services, extra = CASES[case]
        with tempfile.TemporaryDirectory() as tmp, running_stack(services=services, data_dir=Path(tmp) / "s") as stack:
            env = {**base, **stack.settings, **extra}
            full: list[dict[str, float]] = []
            fixed: list[dict[str, float]] = []
            for run in range(options.runs):  # alternated, so that both see the same load
                for kind, selection, into in (("full", [], full), ("fixed", ["-k", "no-check-has-this-name"], fixed)):
                    directory = Path(tmp) / f"{kind}-{run}"
                    directory.mkdir()
                    into.append(forked_run(env, directory, ["--suite", suites, "-q", *selection]))

        def median(runs: list[dict[str, float]], part: str) -> float:
            return statistics.median(r.get(part, 0.0) for r in runs) * 1000

        parts = ", ".join(f"{p} {median(full, p):.0f}" for p in PARTS)
        print(
            f"{case:12s} run {median(full, 'total'):4.0f} ms CPU (fixed {median(fixed, 'total'):3.0f} ms); "
            f"reports: {parts} ms; html+har {median(full, 'html') + median(full, 'har'):.0f} ms "
            f"(median of {options.runs})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
