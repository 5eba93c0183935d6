"""``conformance demo``'s runs: one pytest process per kind of target, started with the stack, joined at the end.

Each kind of target the demo certifies (the tool server's suites, the platform's, the compression sandbox's) is
certified by a pytest process of its own, with the plugin's overlapping loop: a process per target keeps a target's
checks in one process (its counters and rate-limit windows are read by no other), uses both cores, and leaves out
a controller that would only pass the workers' reports along. The runs start as soon as the stack's processes are
launched (their settings known, the services still starting) and hold their first check at the stack's gate
(``core/_stack_gate.py``) until the services their suites need are up.

Each run writes its target's report.json, report.har and junit.xml to ``<report dir>/<target>/`` and its console
output to a file of its own, printed whole when it ends (the runs' lines never interleave). Once every run has
ended, the demo joins their reports into the run's report files (``conformance.report.join``), prints the joined
summary and exits with the joined verdict.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from conformance.config import DEFAULT_REPORT_FORMATS, report_formats
from conformance.core._exceptions import ConformanceError
from conformance.core.targets import SUITE_SERVICES, SUITES, TARGETS

if TYPE_CHECKING:
    from conformance.report.model import RunReport

# How long an interrupted run (Ctrl-C, SIGTERM) is given to write its report before it is killed.
INTERRUPTED_RUN_GRACE_S = 30.0
POLL_S = 0.05  # how often the demo looks for a run that has ended
# What each run writes: report.json to join, report.har because only the run knows every secret it learnt (the HAR
# decodes URLs and headers, so its last redaction pass is the run's), and pytest's junit.xml. The joined HTML and
# SARIF are written from the joined report.
PART_FORMATS = "json,har"
PART_FILES = ("report.json", "report.har", "junit.xml")
EXIT_NO_TESTS = 5  # pytest's ExitCode.NO_TESTS_COLLECTED (the CLI does not import pytest)
# Exit codes of a run that went wrong in itself (interrupted, internal error, usage error): the demo's, whatever
# the others decided.
EXIT_OF_ITS_OWN = (2, 3, 4)


@dataclass
class Part:
    """One kind of target: its suites, its pytest command, its report directory and, while it runs, its process
    and the file its console output goes to."""

    kind: str
    suites: tuple[str, ...]
    command: list[str]
    directory: Path  # its reports: <report dir>/<kind>
    process: subprocess.Popen[bytes] | None = None
    output: IO[bytes] | None = None
    code: int | None = None
    shown: bool = False


def plan(report_dir: Path, suite: str | None, pytest_args: Sequence[str]) -> list[Part]:
    """The demo's runs: one per kind of target that the chosen suites (all by default) certify, in the table's
    order, each with the caller's extra pytest arguments."""
    chosen = [s.strip() for s in suite.split(",") if s.strip()] if suite else [s.name for s in SUITES]
    unknown = [s for s in chosen if s not in SUITE_SERVICES]
    if unknown:
        raise ConformanceError(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITE_SERVICES)}")
    parts = []
    for kind in TARGETS.values():
        suites = tuple(s.name for s in SUITES if s.target is kind and s.name in chosen)
        if suites:
            directory = report_dir / kind.name
            parts.append(Part(kind.name, suites, command(directory, suites, pytest_args), directory))
    return parts


def command(report_dir: Path, suites: Sequence[str], pytest_args: Sequence[str]) -> list[str]:
    """One run's pytest command: its suites, its report directory and the formats the join reads (last, so that
    no extra argument changes them); no xdist (one target: a worker would only add its start-up) unless the extra
    arguments ask for it."""
    words = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--report-dir", str(report_dir)]
    for plugin in ("anyio", "asyncio"):
        # No check of ours is an anyio-marked test nor an async one: these pytest plugins (anyio and its asyncio
        # backend, pytest-asyncio and its hooks around every check, costly to import in every process, more so when
        # pytest must rewrite them without a bytecode cache, as in a fresh CI job) are left out, unless the
        # caller's own arguments mention them.
        if not any(plugin in a for a in pytest_args):
            words += ["-p", f"no:{plugin}"]
    if not any(a.startswith(("-n", "--numprocesses", "--dist", "-d")) or "xdist" in a for a in pytest_args):
        words += ["-p", "no:xdist"]
    return [*words, "--suite", ",".join(suites), *pytest_args, "--report-formats", PART_FORMATS]


def joined_formats(pytest_args: Sequence[str]) -> list[str]:
    """The formats the caller's extra arguments ask of the run (``--report-formats``, the last one given), else
    the default; json always."""
    asked: str | None = None
    for n, arg in enumerate(pytest_args):
        if arg == "--report-formats" and n + 1 < len(pytest_args):
            asked = pytest_args[n + 1]
        elif arg.startswith("--report-formats="):
            asked = arg.partition("=")[2]
    if asked is None:
        return list(DEFAULT_REPORT_FORMATS)
    formats = [f.strip() for f in asked.split(",") if f.strip()]
    try:
        report_formats(formats)
    except ValueError as exc:
        raise ConformanceError(str(exc)) from None
    return ["json", *(f for f in formats if f != "json")]


class DemoRuns:
    """The demo's runs, started as soon as the stack's processes are; each run is a process group of its own (a
    worker the caller asked for is in its run's group). A run whose stack never came up, or whose settings a
    restart of the stack replaced, is killed whole before it writes anything."""

    def __init__(self, parts: list[Part], gate_dir: Path, ended: Callable[[Part], None] = lambda part: None) -> None:
        self.parts = parts
        self.ended = ended  # told of each run once it has ended and its output is shown
        self.gate = gate_dir / "stack-ready"
        self.outputs = gate_dir
        self.opened = False

    def start(self, settings: dict[str, str]) -> None:
        from conformance.core import _stack_gate

        self.kill()  # started on the settings of a stack that was started again on fresh ports
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
        env.update(settings)
        env[_stack_gate.GATE_ENV] = _stack_gate.gate_value(os.getpid(), self.gate)
        for part in self.parts:
            print("$ " + " ".join(part.command), flush=True)
        if self.parts:
            clear_parts(self.parts[0].directory.parent)
        for part in self.parts:
            part.output = tempfile.TemporaryFile(dir=self.outputs)  # noqa: SIM115 - shown, then closed, when it ends
            part.code, part.shown = None, False
            # Its own target only: the other kinds' URLs are the other runs' targets, not this run's.
            others = {kind.env for kind in TARGETS.values() if kind.name != part.kind}
            part.process = subprocess.Popen(
                part.command,
                env={k: v for k, v in env.items() if k not in others},
                stdout=part.output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def up(self, packages: frozenset[str]) -> None:
        """Some of the stack is up: the suites that need only that may start."""
        from conformance.core import _stack_gate

        if any(part.process is not None for part in self.parts):
            _stack_gate.write(self.gate, _stack_gate.up(packages))

    def open(self, startup_s: float) -> None:
        from conformance.core import _stack_gate

        print(f"# reference stack up in {startup_s:.1f} s", flush=True)
        _stack_gate.write(self.gate, _stack_gate.READY)
        self.opened = True

    def shut(self, reason: str) -> None:
        """The stack will not come up: the runs are killed before their first check (and the gate says why, to
        whatever of them is still waiting)."""
        from conformance.core import _stack_gate

        if any(part.process is not None for part in self.parts):
            _stack_gate.write(self.gate, f"failed: {reason}")
        self.kill()

    def wait(self) -> None:
        """Every run's end, each one's output printed whole as it ends. Interrupted meanwhile (Ctrl-C, SIGTERM):
        the runs are told as they would have been in the foreground, given time to write the reports of what they
        decided, and their output is printed."""
        try:
            while not self._all_ended():
                time.sleep(POLL_S)
        except BaseException as exc:
            self.interrupt(signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM)
            raise
        finally:
            self._show_ended()
        self.kill()  # whatever of a run's group outlived it

    def _all_ended(self) -> bool:
        for part in self.parts:
            if part.process is not None and part.code is None:
                part.code = part.process.poll()
        self._show_ended()
        return all(part.code is not None for part in self.parts if part.process is not None)

    def _show_ended(self) -> None:
        for part in self.parts:
            if part.code is not None and not part.shown and part.output is not None:
                part.shown = True
                part.output.seek(0)
                sys.stdout.flush()
                print(f"# {TARGETS[part.kind].label} ({', '.join(part.suites)}): exit {part.code}", flush=True)
                shutil.copyfileobj(part.output, sys.stdout.buffer)
                sys.stdout.buffer.flush()
                part.output.close()
                self.ended(part)

    def interrupt(self, signum: signal.Signals) -> None:
        running = [p for p in self.parts if p.process is not None and p.process.poll() is None]
        for part in running:
            assert part.process is not None
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(part.process.pid, signum)
        deadline = time.monotonic() + INTERRUPTED_RUN_GRACE_S
        for part in running:
            assert part.process is not None
            with contextlib.suppress(subprocess.TimeoutExpired):
                part.code = part.process.wait(max(0.0, deadline - time.monotonic()))
        self._show_ended()  # what the runs told before they ended, and the reports they wrote
        self.kill()

    def kill(self) -> None:
        """Every process of every run, at once."""
        for part in self.parts:
            if part.process is None:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(part.process.pid, signal.SIGKILL)
            code = part.process.wait()
            part.code = code if part.code is None else part.code
            part.process = None
            if not part.shown and part.output is not None:
                part.output.close()  # a run killed before it ended: its output is not this demo's to show
                part.output = None

    def exit_code(self, verdict_code: int | None) -> int:
        """The demo's exit code: a run's own failure (interrupted, internal or usage error), else the joined
        verdict's, else (no run collected a check) pytest's "no tests"."""
        codes = [part.code for part in self.parts if part.code is not None]
        own = [code for code in codes if code in EXIT_OF_ITS_OWN or code < 0]
        if own:
            return own[0]
        if codes and all(code == EXIT_NO_TESTS for code in codes):
            return EXIT_NO_TESTS
        if verdict_code is None:
            return next((code for code in codes if code != EXIT_NO_TESTS), 1)
        return verdict_code


class Join:
    """The runs' reports joined into the run's report files: each run's report read as soon as it ends (while the
    others still run), the report modules imported ahead, so that what is left once the last run ends is its own
    report and the writing."""

    def __init__(self, report_dir: Path, formats: Sequence[str], *, color: bool) -> None:
        self.report_dir = report_dir
        self.formats = formats
        self.color = color
        self.reports: dict[str, RunReport] = {}  # by kind of target, in the order the runs ended
        self.hars: dict[str, dict[str, Any]] = {}
        self.junits: dict[str, Path] = {}
        self._imports = threading.Thread(target=_import_writers, args=(formats,), daemon=True)
        self._imports.start()

    def take(self, part: Part) -> None:
        """An ended run's report files, if it wrote them (its own, just written: read without the schema's check;
        the joined report is written from the model, in the schema's shape)."""
        self._imports.join()  # one thread imports a module at a time
        from conformance.report.json_writer import read_json
        from conformance.report.model import RunReport

        report, har, junit = (part.directory / name for name in PART_FILES)
        if not report.is_file():
            return
        self.reports[part.kind] = RunReport.from_json(read_json(report), validate=False)
        if har.is_file():
            self.hars[part.kind] = read_json(har)
        if junit.is_file():
            self.junits[part.kind] = junit

    def write(self) -> int | None:
        """The joined report files written, the joined summary printed; the joined verdict's exit code, or None when
        no run wrote a report."""
        if not self.reports:
            return None
        from conformance.report.console import render_summary
        from conformance.report.files import write_report_files
        from conformance.report.join import join_har, join_junit, join_reports

        report = join_reports(list(self.reports.values()))
        # The HAR joined from the runs' own (each scrubbed by the run that learnt the secrets), when every run wrote
        # one.
        hars = list(self.hars.values()) if self.hars.keys() == self.reports.keys() else None
        files: list[Path] = []
        try:
            files += write_report_files(
                report,
                self.report_dir,
                self.formats,
                write_har=(lambda path: join_har(hars, path)) if hars is not None else None,
            )
            if self.junits.keys() == self.reports.keys():
                files.append(self.report_dir / "junit.xml")
                join_junit(list(self.junits.values()), files[-1])
        except OSError as exc:
            where = files[-1] if files else self.report_dir
            raise ConformanceError(f"demo: cannot write {where}: {exc.strerror or type(exc).__name__}") from None
        print("=" * 30 + " conformance: the runs joined " + "=" * 30, flush=True)
        render_summary(report, sys.stdout, files=[str(f) for f in files], color=self.color)
        sys.stdout.flush()
        return report.verdict.exit_code


def _import_writers(formats: Sequence[str]) -> None:
    """The modules the join needs, imported while the runs run (the demo's process is idle meanwhile)."""
    with contextlib.suppress(ImportError):
        import conformance.report.console
        import conformance.report.files
        import conformance.report.join

        if "html" in formats:
            import conformance.report.html
        if "sarif" in formats:
            import conformance.report.sarif  # noqa: F401


def clear_parts(report_dir: Path) -> None:
    """The reports each kind of target's run left in ``report_dir`` from an earlier demo: they would pass for this
    run's (a run killed before it wrote, a kind not certified this time)."""
    for kind in TARGETS:
        directory = report_dir / kind
        for name in PART_FILES:
            (directory / name).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            directory.rmdir()  # only when nothing else is in it
