"""The run's state on ``config.stash`` and the end of the run: the report built, written, and what pytest itself
wrote scrubbed of every secret the run learnt. The pytest hooks that drive it are in
:mod:`conformance.pytest.plugin`."""

from __future__ import annotations

import os
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conformance.config import DEFAULT_REPORT_FORMATS, Settings, all_options, read_config_files, resolve
from conformance.core._interrupt import Interruption
from conformance.host import Redactor, redactor_for, scrub_log_file
from conformance.report.baseline import Baseline
from conformance.report.model import CheckOutcome, RunReport, Throttle

SUITES_DIR = Path(__file__).parents[1] / "suites"


class ConformanceSession:
    """Per-run state on ``config.stash``."""

    def __init__(self, settings: Settings, strict: bool, baseline: Baseline | None, active: bool) -> None:
        self.settings = settings
        self.strict = strict
        self.baseline = baseline
        self.active = active
        self.outcomes: list[CheckOutcome] = []
        self.suites_run: set[str] = set()
        self.other_failures = 0
        self.throttle_wait_s = 0.0  # waited for targets' rate limits, summed over checks (and xdist workers)
        self.throttled_checks = 0  # checks blocked because the target throttled the harness
        self.started_at = datetime.now(UTC)
        self.t0 = time.monotonic()
        self.report: RunReport | None = None
        self.report_generation: int | None = None  # the redactor's generation when ``report`` was scrubbed
        self.files: list[str] = []
        # One redactor for the run: secrets learnt by any client (tokens, codes) also scrub verdict messages.
        self.redactor = redactor_for(settings)
        self.interruption = Interruption()  # SIGTERM, SIGINT: the run ends in order (conformance.core._interrupt)
        self.interrupted: str | None = None  # why the run ended early ("interrupted (SIGTERM)"), when it did
        self.report_preparation: threading.Thread | None = None  # see prepare_report

    def prepare_report(self) -> None:
        """Import what building and writing the report needs (every selected suite's checks, the writers) in the
        background, once: called by an xdist controller when its first worker is done, a core idle while the
        others finish, so that the serial tail after the last worker is shorter. Importing more suites than ran
        changes no report: only the rules of the suites that ran are read from what the imports register."""
        if self.report_preparation is None:
            suites = list(self.settings.selected_suites)
            self.report_preparation = threading.Thread(
                target=_prepare_report, args=(suites,), name="conformance-report-preparation", daemon=True
            )
            self.report_preparation.start()

    def settings_of(self, fleet_target: str | None) -> Settings:
        """The settings a check works with: the run's, or in a fleet run its named target's."""
        return self.settings.fleet[fleet_target] if fleet_target else self.settings


SESSION_KEY = pytest.StashKey[ConformanceSession]()


def build_settings(config: pytest.Config) -> Settings:
    cli: dict[str, Any] = {}
    ini: dict[str, Any] = {}
    for spec in all_options():
        if spec.name == "strict":
            cli["strict"] = True if config.getoption("strict", default=False) else None
        elif not spec.secret:
            cli[spec.name] = config.getoption(f"conformance_{spec.name}", default=None)
        try:
            ini[spec.name] = config.getini(f"conformance_{spec.name}")
        except (ValueError, KeyError):
            ini[spec.name] = None
    explicit = config.getoption("conformance_config", default=None)
    files = read_config_files(config.rootpath, Path(explicit) if explicit else None)
    return resolve(cli=cli, env=os.environ, files=files, ini=ini)


def report_dir(config: pytest.Config, settings: Settings) -> Path:
    directory = Path(settings.get("report_dir") or "reports")
    return directory if directory.is_absolute() else config.invocation_params.dir / directory


def in_suites(path: Path) -> bool:
    try:
        path.resolve().relative_to(SUITES_DIR.resolve())
    except (ValueError, OSError):
        return False
    return True


def _prepare_report(suites: list[str]) -> None:
    try:
        from conformance.suites._checks import load_all_checks

        load_all_checks(suites)
        import conformance.report.files
        import conformance.report.har
        import conformance.report.html
        import conformance.report.json_writer
        import conformance.report.junit  # noqa: F401 - imported ahead of the writing
    except Exception:  # only ahead of time: the report's own imports say what is wrong
        pass


def build_report(state: ConformanceSession) -> RunReport:
    from conformance import __version__
    from conformance.core.rules import IMPLEMENTED
    from conformance.suites._checks import load_all_checks

    if state.report_preparation is not None:
        state.report_preparation.join()

    load_all_checks(state.suites_run)  # so that "no check in this version" is only said of rules that truly have none
    # Credentials in a target URL (user:password@, ?api_key=) are shown redacted.
    # (in a fleet run, "name/kind" for each named target's)
    targets = {name: state.redactor.url(t.base_url) for name, t in state.settings.targets().items()}
    public = state.settings.public()
    flags = ("allow_insecure_loopback", "allow_private_network", "allow_incomplete")
    report = RunReport.build(
        state.outcomes,
        strict=state.strict,
        suites_run=state.suites_run,
        implemented=IMPLEMENTED.keys(),
        targets=targets,
        baseline=state.baseline,
        other_failures=state.other_failures,
        fleet=list(state.settings.fleet),
        config={flag: bool(public.get(flag)) for flag in flags}
        | {"run_id": public.get("run_id")}
        | _mcp_era(state.outcomes, public.get("mcp_era"), any(k.endswith("tool_server") for k in targets)),
        harness_version=__version__,
        started_at=_iso(state.started_at),
        finished_at=_iso(datetime.now(UTC)),
        duration_s=round(time.monotonic() - state.t0, 3),
        interrupted=state.interrupted,
        throttle=Throttle(
            waited_s=state.throttle_wait_s,
            max_wait_s=float(state.settings.get("max_throttle_wait", 600.0)),
            blocked_checks=state.throttled_checks,
        ),
    )
    # The last redaction pass, with every secret the run learnt: a code or a token becomes known only after the
    # exchange that carried it was recorded.
    state.report_generation = state.redactor.generation  # before the pass: a secret learnt during it counts as new
    return report.scrubbed(state.redactor.scrub_tree)


def _mcp_era(outcomes: list[CheckOutcome], chosen: Any, tool_server: bool) -> dict[str, Any]:
    """The MCP era of the run, for the report's config: ``mcp_era`` (the choice, ``--mcp-era``) and
    ``mcp_era_spoken`` (what the host settled on with each tool server, as its checks noted it)."""
    if not tool_server:
        return {}
    from conformance.host.mcp_era import NOTE

    spoken = sorted({m.group(1) for o in outcomes for m in NOTE.finditer(o.message or "")})
    return {"mcp_era": chosen or "auto", "mcp_era_spoken": spoken}


def write_reports(report: RunReport, directory: Path, config: pytest.Config | None = None) -> list[str]:
    from conformance.report.files import write_report_files
    from conformance.report.json_writer import read_report

    state = config.stash.get(SESSION_KEY, None) if config is not None else None
    # The reports the run asked for (``report_formats``); all of them without a run's settings.
    formats = set((state.settings.get("report_formats") if state is not None else None) or DEFAULT_REPORT_FORMATS)
    compare = config.getoption("conformance_compare_report", default=None) if config is not None else None

    def har(path: Path) -> None:
        from conformance.report.har import write_har

        # The last redaction pass over the HAR: all of it, unless this report is the one that pass just scrubbed
        # and the run learnt no secret since; then only what the HAR adds (values decoded from URLs and headers).
        fresh = state is not None and state.report is report and state.report_generation == state.redactor.generation
        write_har(report, path, state.redactor.scrub_tree if state is not None else None, report_scrubbed=fresh)

    earlier = read_report(Path(compare)) if compare and "html" in formats else None
    files = write_report_files(report, directory, formats, write_har=har, compare=earlier)
    written = [str(path) for path in files]
    xmlpath = getattr(config.option, "xmlpath", None) if config is not None else None
    if xmlpath:
        from conformance.report.junit import add_fleet_verdicts

        add_fleet_verdicts(Path(xmlpath), report)
        written.append(str(xmlpath))
    return written


def scrub_pytest_outputs(config: pytest.Config, redactor: Redactor) -> None:
    """What pytest itself writes, scrubbed with every secret the run learnt: junit.xml (already written by
    pytest's junitxml plugin) and the reports the terminal summary is about to print (failures, captured output)."""
    _scrub_junit_file(config, redactor)
    scrub_log(config, redactor)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for reports in getattr(reporter, "stats", {}).values():
        for report in reports:
            if isinstance(report, pytest.TestReport | pytest.CollectReport):
                scrub_test_report(report, redactor)


def _scrub_junit_file(config: pytest.Config, redactor: Redactor) -> None:
    from conformance.report.junit import scrub_junit

    xmlpath = getattr(config.option, "xmlpath", None)
    if xmlpath and Path(xmlpath).is_file():
        try:
            scrub_junit(Path(xmlpath), redactor)
        except OSError as exc:  # better no junit.xml than one that may hold a secret
            try:
                Path(xmlpath).unlink(missing_ok=True)
                done = "removed"
            except OSError:
                done = "could not remove"
            sys.stderr.write(f"conformance: {done} {xmlpath}: it could not be scrubbed of secrets ({exc})\n")


def scrub_test_report(report: pytest.TestReport | pytest.CollectReport, redactor: Redactor) -> None:
    if isinstance(report.longrepr, tuple):  # a skip: (path, line, reason), kept a tuple for pytest
        path, line, reason = report.longrepr
        report.longrepr = (redactor.scrub(path), line, redactor.scrub(reason))
    elif report.longrepr is not None:
        text = str(report.longrepr)
        if redactor.scrub(text) != text:  # else keep pytest's own representation (colours, layout)
            report.longrepr = redactor.scrub(text)
    report.sections = [(title, redactor.scrub(content)) for title, content in report.sections]
    if isinstance(getattr(report, "wasxfail", None), str):
        report.wasxfail = redactor.scrub(report.wasxfail)  # type: ignore[union-attr]


def scrub_log(config: pytest.Config, redactor: Redactor) -> None:
    log_file = getattr(config.pluginmanager.get_plugin("logging-plugin"), "log_file_handler", None)
    if log_file is not None:
        scrub_log_file(log_file, redactor)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
