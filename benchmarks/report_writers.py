"""CPU of the report writers on what real runs hand them, and a byte-for-byte comparison of what they write.

    .venv/bin/python benchmarks/report_writers.py capture [--targets 1,4] [--suites auth,profile] [--inputs DIR]
    .venv/bin/python benchmarks/report_writers.py measure [--inputs DIR] [--runs 5] [--save DIR] [--compare DIR]

``capture`` certifies the suites against fleets of 1, 4 ... named targets (each the reference stack's services, as
benchmarks/latency.py's fleets) with the plugin benchmarks/_capture_writers.py, which pickles what
``write_reports`` receives: the report, the run's secrets, whether the last redaction pass just scrubbed the report,
and junit.xml as pytest wrote it. The synthetic reports of tests/report/report_factory.py (hostile strings in
every field) are inputs too.

``measure`` writes report.json, report.html, report.har (as a run writes it, and with the whole last redaction
pass, as ``conformance report`` writes it) and junit.xml (a fleet's verdicts added) from each input, ``--runs``
times, the writers' caches emptied before each (a run writes its reports once), and prints the CPU time of each
writer (``time.process_time``, minimum and median). The ``conformance`` package measured is the one first on
``sys.path``: set ``PYTHONPATH`` to another checkout to measure it. ``--save DIR`` keeps the files; ``--compare
DIR`` says, file by file, whether they are byte-identical to those another checkout saved.

A/B of a change of the writers (the files must be identical, the CPU lower):

    PYTHONPATH=/path/to/main .venv/bin/python benchmarks/report_writers.py measure --save /tmp/before
    .venv/bin/python benchmarks/report_writers.py measure --compare /tmp/before

CPU time on a shared machine moves with its load; the instructions of the writers do not. ``--instructions``
writes the reports of one input (``--only``) as a run does, once to warm up and once more inside
``functools.reduce``, for callgrind to count that second time only:

    valgrind --tool=callgrind --toggle-collect=functools_reduce --callgrind-out-file=/tmp/writers.out \
        .venv/bin/python benchmarks/report_writers.py measure --only auth+profile-4 --instructions
    grep ^summary /tmp/writers.out
"""

from __future__ import annotations

import argparse
import filecmp
import functools
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
DEFAULT_INPUTS = Path(tempfile.gettempdir()) / "conformance-report-writers"
WRITERS = ("json", "html", "har", "har-unscrubbed", "junit")
AS_A_RUN = ("json", "html", "har", "junit")  # what a run writes (its HAR: only what is new to it scrubbed)


def capture(targets: list[int], suites: str, inputs: Path) -> None:
    from conformance.reference.stack import running_stack

    sys.path.insert(0, str(BENCHMARKS))
    from latency import fleet_env

    inputs.mkdir(parents=True, exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    with tempfile.TemporaryDirectory() as tmp, running_stack() as stack:
        for size in targets:
            directory = Path(tmp) / f"fleet-{size}"
            (directory / "report").mkdir(parents=True)
            names = [f"copy{n}" for n in range(1, size + 1)]
            env = {**base, **fleet_env(stack.settings, names, directory)}
            env["PYTHONPATH"] = os.pathsep.join([str(BENCHMARKS), *filter(None, [os.environ.get("PYTHONPATH")])])
            target = inputs / f"{suites.replace(',', '+')}-{size}.pickle"
            env["CONFORMANCE_CAPTURE_WRITERS"] = str(target)
            command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_capture_writers", "-q"]
            command += ["--suite", suites, "--report-dir", str(directory / "report")]
            command += ["--junitxml", str(directory / "report" / "junit.xml")]
            run = subprocess.run(command, env=env, cwd=directory, capture_output=True, text=True, check=False)
            print(f"{size} target(s): exit {run.returncode}, {target}")


def _inputs(inputs: Path) -> dict[str, dict[str, Any]]:
    """Each input by name: the captured runs (in the file's order of sizes) and the synthetic reports."""
    from conformance.report.model import RunReport

    sys.path.insert(0, str(ROOT))
    from tests.report.report_factory import build_report

    found: dict[str, dict[str, Any]] = {}
    for path in sorted(inputs.glob("*.pickle"), key=lambda p: (len(p.stem), p.stem)):
        with path.open("rb") as source:
            found[path.stem] = pickle.load(source)
    for name, document in (("synthetic-full", build_report()), ("synthetic-500", build_report(500))):
        found[name] = {"report": RunReport.from_json(document), "secrets": None, "fresh": False, "junit": None}
    return found


def _clear_caches() -> None:
    """Empty the writers' caches of laid-out values (not those of the compiled template and its assets, which a
    run's controller prepares before its end)."""
    from conformance.report import har, html, json_writer, model

    keep = {"_environment", "_assets", "_report_validator"}
    for module in (html, har, json_writer, model):
        for name, value in vars(module).items():
            own = getattr(value, "__module__", "") == module.__name__
            if own and hasattr(value, "cache_clear") and name not in keep:
                value.cache_clear()


def _write_all(captured: dict[str, Any], out: Path, writers: tuple[str, ...] = WRITERS) -> dict[str, float]:
    """The reports of ``captured`` (``writers``) written into ``out``; the CPU seconds of each writer."""
    from conformance.host import Redactor
    from conformance.report.har import write_har
    from conformance.report.html import write_html
    from conformance.report.json_writer import write_json
    from conformance.report.junit import add_fleet_verdicts

    report = captured["report"]
    redactor = Redactor()
    redactor.add_secrets(captured["secrets"] or {})
    redactor.scrub_tree([])  # every secret indexed, as the run's last redaction pass leaves its redactor
    junit = out / "junit.xml"
    if captured["junit"] is not None:
        junit.write_bytes(captured["junit"])
    steps: dict[str, Callable[[], None]] = {
        "json": lambda: write_json(report, out / "report.json"),
        "html": lambda: write_html(report, out / "report.html"),
        "har": lambda: write_har(
            report, out / "report.har", redactor.scrub_tree, report_scrubbed=bool(captured["fresh"])
        ),
        "har-unscrubbed": lambda: write_har(report, out / "report-unscrubbed.har", redactor.scrub_tree),
        "junit": lambda: add_fleet_verdicts(junit, report) if captured["junit"] is not None else None,
    }
    _clear_caches()
    spent: dict[str, float] = {}
    for name in writers:
        step = steps[name]
        start = time.process_time()
        step()
        spent[name] = time.process_time() - start
    return spent


def instructions(inputs: Path, only: str) -> None:
    """The reports of one input written as a run writes them, twice: the second time inside ``functools.reduce``."""
    captured = _inputs(inputs)[only]
    with tempfile.TemporaryDirectory() as tmp:
        for counted in (False, True):
            fresh = pickle.loads(pickle.dumps(captured))
            if counted:
                functools.reduce(lambda _a, _b: _write_all(fresh, Path(tmp), AS_A_RUN), [0, 1])
            else:
                _write_all(fresh, Path(tmp), AS_A_RUN)


def measure(inputs: Path, runs: int, save: Path | None, compare: Path | None, only: str | None) -> int:
    import conformance

    print(f"conformance from {Path(conformance.__file__).parent}")
    different = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, captured in _inputs(inputs).items():
            if only is not None and name != only:
                continue
            out = (save or Path(tmp)) / name
            out.mkdir(parents=True, exist_ok=True)
            times: dict[str, list[float]] = {writer: [] for writer in WRITERS}
            for _ in range(runs):
                captured = pickle.loads(pickle.dumps(captured))  # fresh objects: no identity carried over
                for writer, seconds in _write_all(captured, out).items():
                    times[writer].append(seconds)
            exchanges = sum(len(result.evidence) for result in captured["report"].results)
            print(f"{name}: {len(captured['report'].results)} results, {exchanges} exchanges of evidence")
            times["as a run"] = [sum(run) for run in zip(*(times[writer] for writer in AS_A_RUN), strict=True)]
            for writer, values in times.items():
                low, middle = min(values) * 1000, statistics.median(values) * 1000
                print(f"  {writer:<15} min {low:8.1f} ms   median {middle:8.1f} ms")
            if compare is not None:
                for path in sorted(out.iterdir()):
                    other = compare / name / path.name
                    same = other.is_file() and filecmp.cmp(path, other, shallow=False)
                    different += not same
                    print(f"  {path.name:<24} {'identical' if same else 'DIFFERENT'}")
    return 1 if different else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("capture", "measure"))
    parser.add_argument("--inputs", type=Path, default=DEFAULT_INPUTS)
    parser.add_argument("--targets", default="1,4", help="capture: the fleets' sizes")
    parser.add_argument("--suites", default="auth,profile", help="capture: the suites certified")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--only", help="measure: this input only (a file name of --inputs without .pickle)")
    parser.add_argument("--instructions", action="store_true", help="measure: one run, for callgrind (--only)")
    args = parser.parse_args()
    if args.action == "capture":
        capture([int(n) for n in args.targets.split(",")], args.suites, args.inputs)
        return 0
    if args.instructions:
        instructions(args.inputs, args.only or "auth+profile-4")
        return 0
    return measure(args.inputs, args.runs, args.save, args.compare, args.only)


if __name__ == "__main__":
    raise SystemExit(main())
