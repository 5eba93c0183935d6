"""The pytest face of the harness: options, fixtures, markers, and the hooks that turn tests into rule verdicts.

``pytest --target-url URL`` with no test paths collects the bundled suites. Each check is a test marked with the
rule(s) it decides; its outcome becomes a verdict (passed, failed, warning, skipped, blocked, error) with the
exchanges it recorded as evidence. At the end of the session the verdicts are aggregated per rule and target and
written as report.json, report.html and junit.xml; the exit code is the run's verdict.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Generator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conformance import _context
from conformance._exceptions import ConfigError, TargetError
from conformance._hypothesis import replay_verdict, unwrap_hypothesis
from conformance._verdicts import Blocked, Failure, NeedsUnmet, Throttled
from conformance.config import Settings, Target, all_options, check_report_dir, read_config_files, resolve
from conformance.host._redact import Redactor, redactor_for, scrub_log_file, scrub_log_records
from conformance.host.http import HostHTTP
from conformance.report.baseline import Baseline
from conformance.report.diff import compare_report_option
from conformance.report.model import Status, aggregate, check_outcome, level_status, summarize, verdict
from conformance.rules import IMPLEMENTED, RULES, SUITE_TARGET, SUITES, Level
from conformance.targets import API_KEY_OPTION, TARGET_OPTION

SUITES_DIR = Path(__file__).parent / "suites"
SESSION_KEY = pytest.StashKey["ConformanceSession"]()
NEED_KEY = pytest.StashKey[tuple[str, str]]()
_SKIP_EXCEPTION: type[BaseException] = pytest.skip.Exception
# Fixtures the suites share (linking an account, the tool listing); light until a check requests one.
pytest_plugins = ["conformance.suites.fixtures"]


class ConformanceSession:
    """Per-run state on ``config.stash``."""

    def __init__(self, settings: Settings, strict: bool, baseline: Baseline | None, active: bool) -> None:
        self.settings = settings
        self.strict = strict
        self.baseline = baseline
        self.active = active
        self.outcomes: list[dict[str, Any]] = []
        self.suites_run: set[str] = set()
        self.other_failures = 0
        self.throttle_wait_s = 0.0  # waited for targets' rate limits, summed over checks (and xdist workers)
        self.throttled_checks = 0  # checks blocked because the target throttled the harness
        self.started_at = datetime.now(UTC)
        self.t0 = time.monotonic()
        self.report: dict[str, Any] | None = None
        self.files: list[str] = []
        # One redactor for the run: secrets learnt by any client (tokens, codes) also scrub verdict messages.
        self.redactor = redactor_for(settings)


# -- options ---------------------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "conformance harness (plays the assistant host)")
    for spec in all_options():
        flag = spec.cli_flag
        if flag and flag != "--strict":  # pytest already owns --strict; we read it
            help_text = f"{spec.help} [env {spec.env_var}]"
            if spec.kind == "bool":
                group.addoption(
                    flag, action="store_true", default=None, dest=f"conformance_{spec.name}", help=help_text
                )
            else:
                group.addoption(flag, default=None, dest=f"conformance_{spec.name}", help=help_text)
        parser.addini(f"conformance_{spec.name}", help=f"conformance: {spec.help}", default=None)
    group.addoption(
        "--conformance-config",
        default=None,
        dest="conformance_config",
        help="configuration file (TOML); default conformance.toml, then [tool.conformance] in pyproject.toml",
    )
    group.addoption(
        "--compare-report",
        default=None,
        dest="conformance_compare_report",
        type=compare_report_option,
        metavar="OLD.json",
        help="mark in report.html the rules that changed since this earlier report.json",
    )
    group.addoption(
        "--preflight",
        action="store_true",
        dest="conformance_preflight",
        help="check targets, discovery, credentials and API keys first; stop with one line per problem",
    )


def _build_settings(config: pytest.Config) -> Settings:
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


# -- configuration ---------------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance_rule(*ids): the rule IDs a conformance check decides")
    for suite in SUITES:
        config.addinivalue_line("markers", f"{suite}: conformance suite {suite}")
    try:
        settings = _build_settings(config)
        selected = settings.selected_suites
        path = settings.get("expected_failures")
        baseline = Baseline.load(Path(path)) if path else None
    except ConfigError as exc:
        raise pytest.UsageError(f"conformance: {exc}") from None
    strict = bool(settings.get("strict"))
    explicit_args = config.args_source == pytest.Config.ArgsSource.ARGS
    active = bool(settings.targets()) or any(_in_suites(Path(a.split("::")[0])) for a in config.args if explicit_args)
    if active and not hasattr(config, "workerinput"):
        try:  # found now, not after the whole run
            check_report_dir(_report_dir(config, settings), settings.origins.get("report_dir", "default"))
        except ConfigError as exc:
            raise pytest.UsageError(f"conformance: {exc}") from None
    if not explicit_args and (settings.targets() or settings.get("suite")):
        # No test paths: run the bundled suites, only those selected. Collecting from the suites' root keeps node
        # ids unambiguous ("auth/test_tokens.py" vs "platform/test_tokens.py"); the others are never imported.
        config.args = [str(SUITES_DIR)]
        unselected = [str(SUITES_DIR / s) for s in SUITES if s not in selected and (SUITES_DIR / s).is_dir()]
        config.option.ignore = [*(config.option.ignore or []), *unselected]
    session = ConformanceSession(settings, strict, baseline, active)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(_OutcomeCollector(session), "conformance-collector")
    if active:  # log records (httpx logs every URL it requests) are scrubbed like everything else
        config.add_cleanup(scrub_log_records(session.redactor))
    if active and not getattr(config.option, "xmlpath", None) and not hasattr(config, "workerinput"):
        config.option.xmlpath = str(_report_dir(config, settings) / "junit.xml")


def _report_dir(config: pytest.Config, settings: Settings) -> Path:
    directory = Path(settings.get("report_dir") or "reports")
    return directory if directory.is_absolute() else config.invocation_params.dir / directory


def _in_suites(path: Path) -> bool:
    try:
        path.resolve().relative_to(SUITES_DIR.resolve())
    except (ValueError, OSError):
        return False
    return True


def _suite_of(item: pytest.Item) -> str | None:
    """A check's suite is the suite of the rules it decides (so checks may live anywhere)."""
    rules = _rules_of(item)
    return RULES[rules[0]].suite if rules and rules[0] in RULES else None


def _rules_of(item: pytest.Item) -> list[str]:
    return [rule_id for mark in item.iter_markers("conformance_rule") for rule_id in mark.args]


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash.get(SESSION_KEY, None)
    if session is None or not session.active:
        return []
    lines = [f"conformance: suites {', '.join(session.settings.selected_suites)}; strict={session.strict}"]
    for name, target in session.settings.targets().items():
        lines.append(f"conformance: {name} = {session.redactor.url(target.base_url)}")
    if session.baseline is not None:
        lines.append(f"conformance: baseline {session.baseline.source} ({len(session.baseline.entries)} entries)")
    return lines


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[SESSION_KEY]
    selected = set(state.settings.selected_suites)
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        suite = _suite_of(item)
        rules = _rules_of(item)
        if suite is None or not rules:
            keep.append(item)
            continue
        state.active = True
        if suite not in selected:
            dropped.append(item)
            continue
        item.add_marker(getattr(pytest.mark, suite))
        item.extra_keyword_matches.update(rules)
        for rule_id in rules:
            item.user_properties.append(("conformance.rule", rule_id))
            item.user_properties.append(("conformance.level", RULES[rule_id].level.value))
        target_name = SUITE_TARGET[suite]
        if state.settings.target(target_name) is None:
            flag, env = TARGET_OPTION[target_name]
            need = f"a {target_name.replace('_', ' ')} to certify"
            item.stash[NEED_KEY] = (need, f"{flag} or {env}")
            item.add_marker(pytest.mark.skip(reason=f"needs {need} (supply with {flag} or {env})"))
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_sessionstart(session: pytest.Session) -> None:
    config, state = session.config, session.config.stash.get(SESSION_KEY, None)
    preflight = state is not None and state.active and config.getoption("conformance_preflight", default=False)
    if preflight and not hasattr(config, "workerinput"):  # the controller checks once for every xdist worker
        from conformance.preflight import stop_on_problems

        stop_on_problems(state)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash[SESSION_KEY]
    for item in session.items:
        suite = _suite_of(item)
        if suite is not None and _rules_of(item):
            state.suites_run.add(suite)


# -- running checks --------------------------------------------------------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    if _rules_of(item) and _suite_of(item):
        _context.begin(_rules_of(item))
        item.stash[_STARTED] = time.monotonic()
        try:
            yield
        finally:
            _context.end()
    else:
        yield


_STARTED = pytest.StashKey[float]()
_DONE = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    rules = _rules_of(item)
    _hand_over_throttle_wait(report)
    if not rules or _suite_of(item) is None or item.stash.get(_DONE, False):
        return
    if call.when == "teardown" or (call.when == "setup" and report.passed):
        return
    try:
        _decide(item, call, report, rules)
    except Exception as exc:  # the harness must never crash the run: turn it into a loud error verdict
        report.outcome = "failed"
        report.longrepr = f"conformance harness error while judging {item.nodeid}: {exc!r}"
        report.conformance = check_outcome(  # type: ignore[attr-defined]
            nodeid=item.nodeid, rules=rules, status=Status.ERROR, message=f"harness error: {exc!r}"
        )
    item.stash[_DONE] = True


def _decide(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport, rules: list[str]) -> None:
    state = item.config.stash[SESSION_KEY]
    record = _context.current()
    evidence = list(record.exchanges) if record else []
    notes = list(record.notes) if record else []
    level = _strictest_level(rules)
    need = option = blocked_by = None
    incomplete = False
    excinfo = call.excinfo
    redactor = _redactor(item)
    verdict_exc = _verdict_exception(excinfo.value, record, notes) if excinfo is not None else None
    if record is not None and verdict_exc is not None and verdict_exc is record.first_failure:
        evidence = _up_to_failure(evidence, record.failing_exchange)
    if excinfo is None:
        status, message = Status.PASSED, "; ".join(notes)
    elif isinstance(excinfo.value, NeedsUnmet):
        status, message = Status.SKIPPED, str(excinfo.value.msg)
        need, option = excinfo.value.need, excinfo.value.option
        incomplete = excinfo.value.incomplete
    elif isinstance(excinfo.value, Blocked) and excinfo.value.rule_id in rules:
        # A prerequisite that is this very rule (a shared fixture judging it) failed: the rule failed, it is not
        # blocked by itself.
        status = level_status(Status.FAILED, level, state.strict)
        message = redactor(excinfo.value.reason or str(excinfo.value.msg))
    elif isinstance(excinfo.value, Blocked):
        status, message, blocked_by = Status.BLOCKED, str(excinfo.value.msg), excinfo.value.rule_id
    elif isinstance(excinfo.value, _SKIP_EXCEPTION):
        status, message = Status.SKIPPED, str(getattr(excinfo.value, "msg", "") or "skipped")
        if NEED_KEY in item.stash:
            need, option = item.stash[NEED_KEY]
    elif isinstance(verdict_exc, Blocked):  # throttled while Hypothesis replayed a case
        status, message, blocked_by = Status.BLOCKED, str(verdict_exc.msg), verdict_exc.rule_id
    elif verdict_exc is not None:
        text = verdict_exc.message if isinstance(verdict_exc, Failure) else str(verdict_exc)
        message = redactor(text.strip() or f"{type(verdict_exc).__name__} (no message)")
        if isinstance(verdict_exc, AssertionError) and not isinstance(verdict_exc, Failure):
            message = message.splitlines()[0] if message else "assertion failed"
        status = level_status(Status.FAILED, level, state.strict)
        if level is Level.INFO:
            message = f"observed (INFO): {message}"
    else:
        status = Status.ERROR
        message = redactor(f"harness error: {type(excinfo.value).__name__}: {excinfo.value}")
    if notes and excinfo is not None and status is not Status.PASSED:
        message = "; ".join([message, *notes])
    started = item.stash.get(_STARTED, time.monotonic())
    result = check_outcome(
        nodeid=item.nodeid,
        rules=rules,
        status=status,
        message=message,
        need=need,
        option=option,
        blocked_by=blocked_by,
        evidence=evidence,
        duration_s=time.monotonic() - started,
        incomplete=incomplete,
    )
    result["throttled"] = isinstance(excinfo.value if excinfo else None, Throttled) or isinstance(
        verdict_exc, Throttled
    )
    report.conformance = result  # type: ignore[attr-defined]
    report.user_properties = [*report.user_properties, ("conformance.status", status.value)]
    item.user_properties.append(("conformance.status", status.value))
    # Make pytest's own outcome agree with the verdict.
    expected = state.baseline is not None and all(
        state.baseline.expects(r, SUITE_TARGET[RULES[r].suite]) for r in rules
    )
    if status in (Status.FAILED, Status.WARNING, Status.ERROR) and expected:
        report.outcome = "skipped"
        report.wasxfail = f"expected failure (baseline): {message}"
    elif status is Status.FAILED:
        report.outcome = "failed"
        report.longrepr = f"[{', '.join(rules)}] {message}"
    elif status is Status.WARNING or (status is Status.PASSED and excinfo is not None):
        if call.when == "call":
            report.outcome = "passed"
            report.longrepr = None
    elif status is Status.ERROR:
        report.outcome = "failed"  # keep pytest's traceback (a harness error must be loud), scrubbed of secrets
        report.longrepr = redactor(str(report.longrepr))


def _verdict_exception(
    exc: BaseException, record: _context.CheckRecord | None = None, notes: list[str] | None = None
) -> BaseException | None:
    """The target's failure behind ``exc``, if that is what it is.

    Hypothesis wraps failures (``FlakyFailure``, an ``ExceptionGroup`` of several distinct failures): when every
    member is a verdict (a Failure, an assertion or a TargetError), the first one is the verdict, not a harness error;
    a member that is a throttled answer (``Blocked``) counts only when no other is a verdict. Hypothesis' other flaky
    errors (a target whose answers changed when a failing case was replayed) mean the check's first failure.
    """
    if isinstance(exc, Failure | AssertionError | TargetError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        members = [_verdict_exception(unwrap_hypothesis(e), record) for e in exc.exceptions]
        if members and all(m is not None for m in members):
            return next((m for m in members if not isinstance(m, Blocked)), members[0])
    elif isinstance(exc, Blocked):
        return exc
    first = replay_verdict(exc, record.first_failure if record is not None else None)
    if first is not None and notes is not None:
        replayed = type(exc).__name__
        notes.append(f"the target answered differently when Hypothesis replayed the failing case ({replayed})")
    return first


def _up_to_failure(evidence: list[dict[str, Any]], failing: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Evidence that ends with the exchange the first failure was raised on (replays after it are noise)."""
    if failing is None:
        return evidence
    at = next((i for i, exchange in enumerate(evidence) if exchange is failing), None)
    return [*evidence, failing] if at is None else evidence[: at + 1]


def _hand_over_throttle_wait(report: pytest.TestReport) -> None:
    """Carry the running check's new throttle waits on its report (xdist forwards them to the controller)."""
    record = _context.current()
    if record is not None and record.throttle_wait_s > record.throttle_reported_s:
        report.conformance_throttle_wait_s = record.throttle_wait_s - record.throttle_reported_s  # type: ignore[attr-defined]
        record.throttle_reported_s = record.throttle_wait_s


def _strictest_level(rules: list[str]) -> Level:
    levels = {RULES[r].level for r in rules}
    for level in (Level.MUST, Level.SHOULD, Level.INFO):
        if level in levels:
            return level
    return Level.MUST


def _redactor(item: pytest.Item) -> Any:
    return item.config.stash[SESSION_KEY].redactor.scrub


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    result = getattr(report, "conformance", None)
    if result is None:
        return None
    status = result["status"]
    if hasattr(report, "wasxfail"):
        return None
    if status == "warning":
        return "passed", "W", ("WARNING", {"yellow": True})
    if status == "blocked":
        return "blocked", "B", ("BLOCKED", {"purple": True})
    # pytest would call a failure in a fixture an "error" and a harness bug in the check a "failure": say what the
    # verdict says instead (the target failed; the harness erred).
    if status == "failed" and report.when == "setup":
        return "failed", "F", ("FAILED", {"red": True})
    if status == "error" and report.when == "call":
        return "error", "E", ("ERROR", {"red": True})
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``-n N``: one worker per target (see ``conformance/_xdist.py``)."""
    state = config.stash.get(SESSION_KEY, None)
    if state is None or not state.active:
        return None
    from conformance._xdist import make_scheduler

    return make_scheduler(config, log)


class _OutcomeCollector:
    """Gathers verdicts on the controller (xdist forwards worker reports with their attributes)."""

    def __init__(self, state: ConformanceSession) -> None:
        self.state = state

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: learn the secrets it learnt, for the last redaction pass."""
        exported = getattr(node, "workeroutput", {}).get("conformance_secrets")
        if isinstance(exported, dict):
            self.state.redactor.add_secrets(exported)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.state.throttle_wait_s += getattr(report, "conformance_throttle_wait_s", 0.0)
        result = getattr(report, "conformance", None)
        if result is not None:
            self.state.throttled_checks += bool(result.get("throttled"))
            self.state.outcomes.append(result)
            # Under xdist the controller collects nothing: the suites that ran are known from their verdicts.
            self.state.suites_run.update(RULES[r].suite for r in result["rules"] if r in RULES)
        elif report.failed and report.when != "teardown":
            self.state.other_failures += 1


# -- fixtures --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def conformance_settings(pytestconfig: pytest.Config) -> Settings:
    """The run's resolved settings."""
    return pytestconfig.stash[SESSION_KEY].settings


@pytest.fixture(scope="session")
def host_http(pytestconfig: pytest.Config, conformance_settings: Settings) -> Iterator[HostHTTP]:
    """The host's HTTP client: timeouts, TLS, URL guard, retry policy, evidence recording, redaction."""
    client = HostHTTP.from_settings(conformance_settings, redactor=pytestconfig.stash[SESSION_KEY].redactor)
    try:
        yield client
    finally:
        client.close()


def _target_fixture(name: str) -> Any:
    @pytest.fixture(scope="session", name=f"{name}_target")
    def fixture(conformance_settings: Settings) -> Target:
        target = conformance_settings.target(name)
        if target is None:
            flag, env = TARGET_OPTION[name]
            raise NeedsUnmet(f"a {name.replace('_', ' ')} to certify", f"{flag} or {env}")
        if name in API_KEY_OPTION and not target.api_key:
            # Without its key every call is refused: that is the configuration's gap, never the target's failure.
            raise NeedsUnmet(f"the {name} API key", API_KEY_OPTION[name], incomplete=True)
        return target

    return fixture


tool_server_target = _target_fixture("tool_server")
platform_target = _target_fixture("platform")
compression_target = _target_fixture("compression")


# -- the end of the run ----------------------------------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(SESSION_KEY, None)
    if state is not None and hasattr(config, "workerinput"):
        # The controller writes the reports: it needs the secrets this worker learnt (codes, tokens) for its
        # last redaction pass.
        config.workeroutput["conformance_secrets"] = state.redactor.secrets()  # type: ignore[attr-defined]
        _scrub_log_file(config, state.redactor)
    if state is None or not state.active or hasattr(config, "workerinput") or config.option.collectonly:
        return  # nothing was decided: keep the last run's reports
    try:
        report = build_report(state)
        state.report = report
        state.files = write_reports(report, _report_dir(config, state.settings), config)
    except Exception:
        sys.stderr.write("conformance: could not write the report:\n" + state.redactor.scrub(traceback.format_exc()))
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        return
    finally:
        _scrub_pytest_outputs(config, state.redactor)
    if int(session.exitstatus) in (int(pytest.ExitCode.OK), int(pytest.ExitCode.TESTS_FAILED)):
        session.exitstatus = pytest.ExitCode(report["verdict"]["exit_code"])


def build_report(state: ConformanceSession) -> dict[str, Any]:
    from conformance import __version__
    from conformance.rules import load_all_checks

    load_all_checks(state.suites_run)  # so that "no check in this version" is only said of rules that truly have none
    # Credentials in a target URL (user:password@, ?api_key=) are shown redacted.
    targets = {name: state.redactor.url(t.base_url) for name, t in state.settings.targets().items()}
    results = aggregate(
        state.outcomes,
        strict=state.strict,
        unimplemented_suites=sorted(state.suites_run),
        implemented=IMPLEMENTED.keys(),
        targets=targets,
    )
    if state.baseline is not None:
        state.baseline.apply(results)
    finished = datetime.now(UTC)
    public = state.settings.public()
    report = {
        "format": 1,
        "harness": {"name": "conformance", "version": __version__},
        "started_at": _iso(state.started_at),
        "finished_at": _iso(finished),
        "duration_s": round(time.monotonic() - state.t0, 3),
        "verdict": verdict(
            results,
            strict=state.strict,
            other_failures=state.other_failures,
            local=bool(public.get("allow_insecure_loopback")),
            allow_incomplete=bool(public.get("allow_incomplete")),
        ),
        "config": {
            "strict": state.strict,
            "expected_failures": state.baseline.source if state.baseline else None,
            "suites": sorted(state.suites_run),
            "allow_insecure_loopback": bool(public.get("allow_insecure_loopback")),
            "allow_private_network": bool(public.get("allow_private_network")),
            "allow_incomplete": bool(public.get("allow_incomplete")),
            "run_id": public.get("run_id"),
        },
        "targets": {name: {"url": url} for name, url in targets.items()},
        "summary": summarize(results),
        "throttle": {
            "waited_s": round(state.throttle_wait_s, 3),
            "max_wait_s": float(state.settings.get("max_throttle_wait", 600.0)),
            "blocked_checks": state.throttled_checks,
        },
        "results": results,
    }
    # The last redaction pass, with every secret the run learnt: a code or a token becomes known only after the
    # exchange that carried it was recorded.
    return state.redactor.scrub_tree(report)


def write_reports(report: dict[str, Any], directory: Path, config: pytest.Config | None = None) -> list[str]:
    from conformance.report.json_writer import read_json, write_json

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    json_path = directory / "report.json"
    write_json(report, json_path)
    written.append(str(json_path))
    try:
        from conformance.report.html import write_html
    except ImportError:
        write_html = None  # type: ignore[assignment]
    if write_html is not None:
        html_path = directory / "report.html"
        compare = config.getoption("conformance_compare_report", default=None) if config is not None else None
        write_html(report, html_path, read_json(Path(compare)) if compare else None)
        written.append(str(html_path))
    xmlpath = getattr(config.option, "xmlpath", None) if config is not None else None
    if xmlpath:
        written.append(str(xmlpath))
    return written


def _scrub_pytest_outputs(config: pytest.Config, redactor: Redactor) -> None:
    """What pytest itself writes, scrubbed with every secret the run learnt: junit.xml (already written by
    pytest's junitxml plugin) and the reports the terminal summary is about to print (failures, captured output)."""
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
    _scrub_log_file(config, redactor)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for reports in getattr(reporter, "stats", {}).values():
        for report in reports:
            if isinstance(report, pytest.TestReport | pytest.CollectReport):
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


def _scrub_log_file(config: pytest.Config, redactor: Redactor) -> None:
    log_file = getattr(config.pluginmanager.get_plugin("logging-plugin"), "log_file_handler", None)
    if log_file is not None:
        scrub_log_file(log_file, redactor)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(SESSION_KEY, None)
    if state is None or state.report is None:
        return
    from conformance.report.console import render_summary

    terminalreporter.write_sep("=", "conformance")
    render_summary(
        state.report,
        terminalreporter._tw._file,
        files=state.files,
        color=terminalreporter.hasmarkup,
    )
