"""The pytest face of the harness: options, fixtures, markers, and the hooks that turn tests into rule verdicts.

``pytest --target-url URL`` with no test paths collects the bundled suites. Each check is a test marked with the
rule(s) it decides; its outcome becomes a verdict (passed, failed, warning, skipped, blocked, error) with the
exchanges it recorded as evidence. At the end of the session the verdicts are aggregated per rule and target and
written as report.json, report.html and junit.xml; the exit code is the run's verdict.
"""

from __future__ import annotations

import copy
import os
import sys
import time
import traceback
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, TextIO, cast

import pytest

from conformance.config import Settings, Target, all_options, check_report_dir
from conformance.core import _budget, _context, _gc, _httpx_cli, _stack_gate  # noqa: F401 - _httpx_cli: before httpx
from conformance.core._exceptions import ConfigError
from conformance.core.rules import (
    ALONE_MARK,
    RULES,
    SUITE_TARGET,
    SUITES,
    TOUCHES_MARK,
    alone_unless,
    rules_of,
    suite_of,
)
from conformance.core.targets import TARGETS, TargetKind
from conformance.host import scrub_log_records
from conformance.host.http import HostHTTP
from conformance.pytest import _evidence, _head_start, _marks, _outcomes, _overlap
from conformance.pytest._outcomes import NEED_KEY
from conformance.pytest._session import (
    SESSION_KEY,
    SUITES_DIR,
    ConformanceSession,
    build_report,
    build_settings,
    in_suites,
    report_dir,
    scrub_log,
    scrub_pytest_outputs,
    scrub_test_report,
    write_reports,
)
from conformance.report.baseline import Baseline
from conformance.report.diff import compare_report_option
from conformance.verdict._hypothesis import drop_idle_summary_hook, skip_assertion_rewriting
from conformance.verdict._verdicts import NeedsUnmet

# Fixtures the suites share (linking an account, the tool listing); light until a check requests one.
pytest_plugins = ["conformance.suites.fixtures"]


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


# -- configuration ---------------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    """Before pytest captures anything: what the bodies of checks running at once print stays theirs."""
    _overlap.BodyOutput.install()
    early_config.add_cleanup(_overlap.BodyOutput.remove)
    early_config.pluginmanager.register(_overlap.PhaseOutput(), "conformance-phase-output")
    return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance_rule(*ids): the rule IDs a conformance check decides")
    config.addinivalue_line("markers", f"{ALONE_MARK}(reason): a conformance check no other check overlaps")
    config.addinivalue_line(
        "markers", f"{TOUCHES_MARK}(group, reason): a conformance check the checks alone among the group do not overlap"
    )
    for suite in SUITES:
        config.addinivalue_line("markers", f"{suite}: conformance suite {suite}")
    try:
        settings = build_settings(config)
        selected = settings.selected_suites
        path = settings.get("expected_failures")
        baseline = Baseline.load(Path(path)) if path else None
    except ConfigError as exc:
        raise pytest.UsageError(f"conformance: {exc}") from None
    strict = bool(settings.get("strict"))
    _context.set_body_budget()  # this process's budget of the run's exchange details, whole at the start
    explicit_args = config.args_source == pytest.Config.ArgsSource.ARGS
    active = bool(settings.targets()) or any(in_suites(Path(a.split("::")[0])) for a in config.args if explicit_args)
    if active and not hasattr(config, "workerinput"):
        try:  # found now, not after the whole run
            check_report_dir(report_dir(config, settings), settings.origins.get("report_dir", "default"))
        except ConfigError as exc:
            raise pytest.UsageError(f"conformance: {exc}") from None
    if not explicit_args and (settings.targets() or settings.get("suite")):
        # No test paths: run the bundled suites, only those selected. Collecting from the suites' root keeps node
        # ids unambiguous ("auth/test_tokens.py" vs "platform/test_tokens.py"); the others are never imported.
        config.args = [str(SUITES_DIR)]
        unselected = [str(SUITES_DIR / s) for s in SUITES if s not in selected and (SUITES_DIR / s).is_dir()]
        config.option.ignore = [*(config.option.ignore or []), *unselected]
    if active and config.getoption("conformance_preflight", default=False) and not hasattr(config, "workerinput"):
        # The controller checks once, before any xdist worker starts: problems are a usage error (exit 4).
        from conformance.suites.preflight import problem_lines

        problems = problem_lines(settings)
        if problems:
            raise pytest.UsageError(*problems)
    session = ConformanceSession(settings, strict, baseline, active)
    config.stash[SESSION_KEY] = session
    if active:
        # Only a certifying run: a session that hosts in-process runs (pytester) must keep Hypothesis rewritten, or
        # each of those runs warns that it "cannot be rewritten" (its loader is not pytest's).
        skip_assertion_rewriting(config)
        _gc.govern(config)  # fewer collections over a run's long-lived heap, none of it walked at exit
    config.pluginmanager.register(_outcomes.OutcomeCollector(session), "conformance-collector")
    if active and _stack_gate.GATE_ENV in os.environ:  # started before its stack was up (conformance demo)
        from conformance.pytest._gate import StackGate

        config.pluginmanager.register(StackGate(config), "conformance-stack-gate")
    if active:  # log records (httpx logs every URL it requests) are scrubbed like everything else
        config.add_cleanup(scrub_log_records(session.redactor))
        config.add_cleanup(session.interruption.install())  # SIGTERM, SIGINT: reports written all the same
    ends_at = getattr(config, "workerinput", {}).get("conformance_run_ends_at")  # an xdist worker's share
    _budget.start_run(settings.get("max_run_time"), left_s=ends_at - time.time() if ends_at else None)
    config.add_cleanup(lambda: _budget.start_run(None))
    if active and not getattr(config.option, "xmlpath", None) and not hasattr(config, "workerinput"):
        config.option.xmlpath = str(report_dir(config, settings) / "junit.xml")


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash.get(SESSION_KEY, None)
    if session is None or not session.active:
        return []
    lines = [f"conformance: suites {', '.join(session.settings.selected_suites)}; strict={session.strict}"]
    for name, target in session.settings.targets().items():
        lines.append(f"conformance: {name} = {session.redactor.url(target.base_url)}")
    requested = config.stash.get(REQUESTED_WORKERS_KEY, None)
    if requested is not None:
        from conformance.pytest._xdist import capped_workers_line

        lines.append(capped_workers_line(requested, session.settings))
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
        suite = suite_of(item)
        rules = rules_of(item)
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
        if fleet_name := _outcomes.fleet_target_of(item):
            item.user_properties.append(("conformance.target", fleet_name))
        settings = state.settings_of(_outcomes.fleet_target_of(item))
        unless = alone_unless(item)
        if unless and all(settings.get(name) for name in unless):  # it works on a subject of its own
            item.own_markers[:] = [mark for mark in item.own_markers if mark.name != ALONE_MARK]
        kind = TARGETS[SUITE_TARGET[suite]]
        if settings.target(kind.name) is None:
            flag, env, need = kind.flag, kind.env, kind.need
            item.stash[NEED_KEY] = (need, f"{flag} or {env}")
            item.add_marker(pytest.mark.skip(reason=f"needs {need} (supply with {flag} or {env})"))
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A fleet run: every check once per named target (its id carries the name); see "fleets" in config.py."""
    state = metafunc.config.stash.get(SESSION_KEY, None)
    if state is not None and state.settings.fleet and rules_of(metafunc.definition):
        names = list(state.settings.fleet)
        metafunc.parametrize(_outcomes.FLEET_FIXTURE, names, indirect=True, ids=names, scope="session")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config, state = session.config, session.config.stash.get(SESSION_KEY, None)
    if state is not None and state.active and not hasattr(config, "workerinput"):
        from conformance.pytest._console import scrub_console

        config.add_cleanup(scrub_console(config, state.redactor))  # the console, as it is written


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """The chain every tool-server check waits for starts while pytest collects (``_head_start.py``)."""
    _head_start.begin(session)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash[SESSION_KEY]
    for item in session.items:
        suite = _marks.keep(item).suite
        if suite is not None:
            state.suites_run.add(suite)
    if state.active:
        _gc.freeze_collected()


# -- running checks --------------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """With ``--concurrency`` above 1 the bodies of independent checks overlap (``conformance/pytest/_overlap.py``)."""
    return _overlap.run_loop(session)


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> None:
    _overlap.refuse_fixture_in_body(fixturedef.argname)
    if fixturedef.scope == "function":
        _evidence.before_function_fixture(request)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    if _marks.of(item).suite is None:
        return (yield)
    _overlap.begin_check(item)
    try:
        return (yield)
    finally:
        _context.end()


RUN_BUDGET_NEED = "time to run this check: the run's time budget was spent before it started"


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Once the run's time budget is spent no further check starts (its fixtures are not set up either). The
    evidence of the session fixtures a check uses is attached during its set-up (``_evidence.py``). The innermost
    wrapper: a set-up refused here has passed through every other wrapper's start (pytest's logging plugin keeps
    what its teardown reads there), as if a hook inside them had refused it."""
    if _marks.of(item).suite is not None and _budget.run_spent():
        raise NeedsUnmet(RUN_BUDGET_NEED, "--max-run-time", incomplete=True)
    _evidence.setup_begins(item)
    try:
        result = yield
    except BaseException:
        _evidence.setup_ends(item, passed=False)
        raise
    _evidence.setup_ends(item, passed=True)
    return result


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """An xdist worker is done: the controller prepares the report while the others finish."""
    state = node.config.stash.get(SESSION_KEY, None)
    if state is not None and state.active:
        state.prepare_report()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """An xdist worker shares the run's time budget: it gets what is left of it."""
    left = _budget.run_left()  # as a wall-clock deadline: the worker starts up within the budget
    node.workerinput["conformance_run_ends_at"] = time.time() + left if left is not None else None


_DONE = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    try:
        _judge_report(item, call, report)
    finally:
        state = item.config.stash.get(SESSION_KEY, None)
        if state is not None and state.active:
            # Scrubbed before any output mode shows it live (-v skip reasons, -rA, --tb=long, --full-trace, junit):
            # with the secrets known so far; the end of the run scrubs again with all of them.
            scrub_test_report(report, state.redactor)
    return report


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
def pytest_runtest_makereport_without_traceback(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> pytest.TestReport | None:
    """pytest's report of a check's set-up or body that raised, made by pytest without laying out the exception's
    traceback, when the verdict then puts its own words in its place (a failure, a warning, blocked; see
    ``_outcomes.keeps_traceback``): laying it out parses the source file of every frame. None (pytest's own report)
    for anything else."""
    excinfo = call.excinfo
    if (
        excinfo is None
        or call.when == "teardown"
        or isinstance(excinfo.value, pytest.skip.Exception | BaseExceptionGroup)
    ):
        return None  # a skip's report is made without a traceback; a group may be all skips
    marks = _marks.of(item)
    state = item.config.stash.get(SESSION_KEY, None)
    if marks.suite is None or state is None or item.stash.get(_DONE, False) or item.get_closest_marker("xfail"):
        return None
    try:
        judgement = _outcomes.judgement_of(item, call, marks.rules)
    except Exception:  # judged again once pytest's report is made, where it becomes a harness error
        return None
    if _outcomes.keeps_traceback(state, call.when, judgement, marks.rules):
        return None
    returned = copy.copy(call)  # the same phase as if it had returned: the report of it is pytest's own
    returned.excinfo = None
    report = pytest.TestReport.from_item_and_call(item, returned)
    report.outcome = "failed"
    report.longrepr = excinfo.exconly()  # until the verdict's words replace it
    return report


def _judge_report(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    _outcomes.hand_over_throttle_wait(report)
    marks = _marks.of(item)
    if marks.suite is None or item.stash.get(_DONE, False):
        return
    if call.when == "teardown" or (call.when == "setup" and report.passed):
        return
    try:
        _outcomes.decide(item, call, report, marks.rules)
    except Exception as exc:  # the harness must never crash the run: turn it into a loud error verdict
        _outcomes.harness_error(item, report, marks.rules, exc)
    item.stash[_DONE] = True


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    return _outcomes.terminal_status(report)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``-n N``: one worker per target (see ``conformance/pytest/_xdist.py``)."""
    state = config.stash.get(SESSION_KEY, None)
    if state is None or not state.active:
        return None
    from conformance.pytest._xdist import make_scheduler

    return make_scheduler(config, log)


REQUESTED_WORKERS_KEY = pytest.StashKey[int]()


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(
    config: pytest.Config,
) -> Generator[None, int | pytest.ExitCode | None, int | pytest.ExitCode | None]:
    """An explicit ``-n N`` is capped to the targets to certify before xdist reads it (``-n auto`` is, below)."""
    if getattr(config.option, "numprocesses", None) and config.pluginmanager.hasplugin("xdist"):
        from conformance.pytest._xdist import capped_workers

        capped = capped_workers(config)
        if capped is not None:
            config.stash[REQUESTED_WORKERS_KEY] = config.option.numprocesses
            config.option.numprocesses = capped
    return (yield)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: never more workers than targets to certify (see ``conformance/pytest/_xdist.py``)."""
    from conformance.pytest._xdist import auto_num_workers

    return auto_num_workers(config)


# -- fixtures --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True, name=_outcomes.FLEET_FIXTURE)
def conformance_fleet_target(request: pytest.FixtureRequest) -> str | None:
    """The named target a check certifies in a fleet run (its parameter); None otherwise."""
    return getattr(request, "param", None)


@pytest.fixture(scope="session")
def conformance_settings(pytestconfig: pytest.Config, conformance_fleet_target: str | None) -> Settings:
    """The run's resolved settings (in a fleet run, those of the named target the check certifies)."""
    return pytestconfig.stash[SESSION_KEY].settings_of(conformance_fleet_target)


@pytest.fixture(scope="session")
def host_http(pytestconfig: pytest.Config, conformance_settings: Settings) -> Iterator[HostHTTP]:
    """The host's HTTP client: timeouts, TLS, URL guard, retry policy, evidence recording, redaction."""
    state = pytestconfig.stash[SESSION_KEY]
    client = _head_start.take_http(pytestconfig, conformance_settings) or _head_start.new_host_http(
        conformance_settings, state
    )
    try:
        yield client
    finally:
        client.close()


def _target_fixture(kind: TargetKind) -> Any:
    """The fixture ``<name>_target`` of a target kind of the table (``platform_target``): its ``Target``."""
    name = kind.name

    @pytest.fixture(scope="session", name=kind.fixture)
    def fixture(conformance_settings: Settings, host_http: HostHTTP) -> Target:
        target = conformance_settings.target(name)
        flag, env = kind.flag, kind.env
        if target is None:
            raise NeedsUnmet(kind.need, f"{flag} or {env}")
        if kind.api_key_env and not target.api_key:
            # Without its key every call is refused: that is the configuration's gap, never the target's failure.
            variable = kind.api_key_env.replace("CONFORMANCE_", conformance_settings.env_prefix, 1)  # a fleet's
            raise NeedsUnmet(f"the {name} API key", variable, incomplete=True)
        # Nothing answering at the URL (refused, unresolvable, a failed TLS handshake) is the configuration's gap
        # (a wrong URL, a server not started, a private CA), never the target failing every rule: one need.
        unreachable = host_http.unreachable(target.base_url)
        if unreachable is not None:
            shown = host_http.redactor.url(target.base_url)
            raise NeedsUnmet(f"a {name.replace('_', ' ')} answering at {shown}: {unreachable}", flag, incomplete=True)
        return target

    return fixture


# One fixture a row of the table (tool_server_target, platform_target, compression_target): pytest finds them as
# this plugin module's attributes.
globals().update({kind.fixture: _target_fixture(kind) for kind in TARGETS.values()})


# -- the end of the run ----------------------------------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    drop_idle_summary_hook(config)  # importing all of Hypothesis at the end of every run
    state = config.stash.get(SESSION_KEY, None)
    if state is not None and hasattr(config, "workerinput"):
        # The controller writes the reports: it needs the secrets this worker learnt (codes, tokens) for its
        # last redaction pass.
        config.workeroutput["conformance_secrets"] = state.redactor.secrets()  # type: ignore[attr-defined]
        scrub_log(config, state.redactor)
    if state is None or not state.active or hasattr(config, "workerinput") or config.option.collectonly:
        return  # nothing was decided: keep the last run's reports
    shut = _stack_gate.shut_reason()
    if shut is not None:
        sys.stderr.write(f"conformance: {shut}: no check ran, no report written\n")
        session.exitstatus = pytest.ExitCode.INTERRUPTED
        return
    if state.interruption.signal_name is not None:
        state.interrupted = f"interrupted ({state.interruption.signal_name})"
    elif int(session.exitstatus) == int(pytest.ExitCode.INTERRUPTED):
        state.interrupted = "interrupted"
    elif any(outcome.need == RUN_BUDGET_NEED for outcome in state.outcomes):
        state.interrupted = f"the run's time budget ({state.settings.get('max_run_time'):g}s, --max-run-time) was spent"
    try:
        report = build_report(state)
        state.report = report
        state.files = write_reports(report, report_dir(config, state.settings), config)
    except Exception:
        sys.stderr.write("conformance: could not write the report:\n" + state.redactor.scrub(traceback.format_exc()))
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        return
    finally:
        scrub_pytest_outputs(config, state.redactor)
    if int(session.exitstatus) in (int(pytest.ExitCode.OK), int(pytest.ExitCode.TESTS_FAILED)) or state.interrupted:
        session.exitstatus = pytest.ExitCode(report.verdict.exit_code)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(SESSION_KEY, None)
    if state is not None and not state.active and int(exitstatus) == int(pytest.ExitCode.NO_TESTS_COLLECTED):
        _say_how_to_start(terminalreporter, config)
    if state is None or state.report is None:
        return
    from conformance.report.console import render_summary

    terminalreporter.write_sep("=", "conformance")
    render_summary(
        state.report,
        cast(TextIO, _ReporterStream(terminalreporter)),
        files=state.files,
        color=terminalreporter.hasmarkup,
    )


class _ReporterStream:
    """The terminal reporter as a text stream (what rich's console writes to): its writes go through the
    terminal writer, scrubbed as all of the console is."""

    encoding = "utf-8"

    def __init__(self, reporter: Any) -> None:
        self._reporter = reporter

    def write(self, text: str) -> int:
        self._reporter.write(text)
        return len(text)

    def flush(self) -> None:
        self._reporter.flush()

    def isatty(self) -> bool:
        return False


def _say_how_to_start(terminalreporter: Any, config: pytest.Config) -> None:
    """A bare ``pytest`` with no target and nothing of its own to collect: name the options that start a
    certification (the plugin never takes over a project's own test run, so it only says so)."""
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return  # the user named what to collect
    from conformance.core.targets import TARGET_OPTION, TARGETS, suites_of

    terminalreporter.write_sep("=", "conformance")
    terminalreporter.write_line("no target given, so no conformance check was collected; to certify, give one of:")
    for name, (flag, env) in TARGET_OPTION.items():
        suites = ", ".join(sorted(suites_of(name)))
        terminalreporter.write_line(f"  {flag} URL (or {env})  {TARGETS[name].label}: suites {suites}")
