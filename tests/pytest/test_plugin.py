"""The plugin end to end with pytester: verdicts, writers, selection, baseline, strictness, xdist, dead targets."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests._checks_run import CheckRun, run_checks
from tests._preloaded import mcp_sdk  # noqa: F401 - a fixture

DEAD = "https://127.0.0.1:1/mcp"


EVERY_STATUS = """
import pytest
from conformance import Blocked, expect, fail, needs, observe, rule

@rule("AUTH-PRM-01")
def test_passes():
    observe("looked fine")

@rule("AUTH-PRM-02")
def test_fails():
    fail("resource was http://evil <script>alert(1)</script>")

@rule("AUTH-PRM-06")
def test_should_fails():
    expect(False, "no scope in the challenge")

@rule("AUTH-TOK-06")
def test_needs():
    needs("a second resource", "--alt-resource")

@rule("AUTH-TOK-03")
def test_blocked():
    raise Blocked("AUTH-TOK-01", "no valid token")

@rule("AUTH-TOK-04")
def test_harness_bug():
    {}["missing"]
"""


def test_every_status_reaches_every_writer(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_checks=EVERY_STATUS)
    result = run_checks(pytester, "--target-url", DEAD, "test_checks.py")
    assert result.ret == 1
    report = result.report
    expected = {
        "AUTH-PRM-01": "passed",
        "AUTH-PRM-02": "failed",
        "AUTH-PRM-06": "warning",
        "AUTH-TOK-06": "skipped",
        "AUTH-TOK-03": "blocked",
        "AUTH-TOK-04": "error",
    }
    got = result.statuses()
    assert {k: got[k] for k in expected} == expected
    by_rule = result.by_rule
    assert by_rule["AUTH-TOK-06"]["need"] == "a second resource"
    assert by_rule["AUTH-TOK-06"]["option"] == "--alt-resource"
    assert by_rule["AUTH-TOK-03"]["blocked_by"] == "AUTH-TOK-01"
    assert "KeyError" in by_rule["AUTH-TOK-04"]["message"]
    assert by_rule["AUTH-PRM-01"]["message"] == "looked fine"
    assert report["verdict"]["accepted"] is False
    # JUnit carries rule, level and status as properties.
    tree = ET.parse(pytester.path / "out" / "junit.xml")
    props = {(p.get("name"), p.get("value")) for case in tree.iter("testcase") for p in case.iter("property")}
    assert ("conformance.rule", "AUTH-PRM-06") in props and ("conformance.level", "SHOULD") in props
    assert {("conformance.status", s) for s in expected.values()} <= props
    # Console: the summary and each problem line.
    out = result.stdout.str()
    assert "NOT ACCEPTED" in out and "WARNING  AUTH-PRM-06" in out and "ERROR    AUTH-TOK-04" in out
    assert "INTERNALERROR" not in out
    # pytest's own tally follows the verdicts: the harness bug is an error, not a failure of the target.
    assert result.parseoutcomes() == {"passed": 2, "failed": 1, "skipped": 1, "blocked": 1, "errors": 1}
    html = pytester.path / "out" / "report.html"
    if html.exists():
        text = html.read_text()
        assert "<script>alert(1)</script>" not in text
        for status in expected.values():
            assert status in text


def test_should_failures_pass_unless_strict(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_should="""
from conformance import fail, rule

@rule("AUTH-PRM-01")
def test_ok():
    pass

@rule("AUTH-PRM-06")
def test_should():
    fail("no scope")
"""
    )
    lenient = run_checks(pytester, "--target-url", DEAD, "test_should.py")
    assert lenient.ret == 0 and lenient.statuses()["AUTH-PRM-06"] == "warning"
    strict = run_checks(pytester, "--target-url", DEAD, "--strict", "test_should.py")
    assert strict.ret == 1 and strict.statuses()["AUTH-PRM-06"] == "failed"


BASELINE_CHECKS = """
from conformance import fail, rule

@rule("AUTH-PRM-01")
def test_ok():
    pass

@rule("AUTH-PRM-02")
def test_bad():
    fail("wrong resource")
"""


@pytest.mark.parametrize(
    ("baseline", "exit_code", "marks"),
    [
        ('expected_failures = ["AUTH-PRM-02"]', 0, {"AUTH-PRM-02": "expected"}),
        ("expected_failures = []", 1, {}),
        (
            '[[expected]]\nrule = "AUTH-PRM-01"\ntarget = "tool_server"\n'
            '[[expected]]\nrule = "AUTH-PRM-02"\nreason = "known"',
            1,
            {"AUTH-PRM-01": "stale", "AUTH-PRM-02": "expected"},
        ),
    ],
    ids=["listed-failure-is-ok", "unlisted-failure-fails", "listed-pass-is-stale"],
)
def test_baseline(pytester: pytest.Pytester, baseline: str, exit_code: int, marks: dict[str, str]) -> None:
    pytester.makepyfile(test_base=BASELINE_CHECKS)
    pytester.path.joinpath("baseline.toml").write_text(baseline)
    result = run_checks(pytester, "--target-url", DEAD, "--expected-failures", "baseline.toml", "test_base.py")
    assert result.ret == exit_code
    report = result.report
    assert report["verdict"]["exit_code"] == exit_code
    assert {r["rule"]: r["baseline"] for r in report["results"] if r["baseline"]} == marks


def test_bad_baseline_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("baseline.toml").write_text('expected_failures = ["NOPE-1"]')
    result = run_checks(pytester, "--target-url", DEAD, "--expected-failures", "baseline.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown rule ID" in result.stderr.str()


@pytest.mark.usefixtures("mcp_sdk")  # the tool-server checks load the SDK in the run
def test_bundled_suites_are_collected_and_a_dead_target_is_incomplete(pytester: pytest.Pytester) -> None:
    """Nothing listens at the target: the run never reached it (INCOMPLETE, one line naming the URL and the error),
    no rule is failed or blocked for it."""
    result = run_checks(pytester, "--target-url", DEAD, "--allow-insecure-loopback", "--suite", "auth")
    assert result.ret == 1
    report = result.report
    assert set(result.statuses().values()) == {"skipped"}
    verdict = report["verdict"]
    assert verdict["status"] == "INCOMPLETE" and len(verdict["missing"]) == 1, verdict
    assert DEAD in verdict["missing"][0] and "connection refused" in verdict["missing"][0], verdict
    out = result.stdout.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out


def test_suite_without_target_is_skipped_with_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_platform="""
from conformance import rule

@rule("TOK-01")
def test_tok(platform_target):
    pass

@rule("AUTH-PRM-01")
def test_auth():
    pass
"""
    )
    run = run_checks(pytester, "--target-url", DEAD, "test_platform.py")
    by_rule = run.by_rule
    assert by_rule["TOK-01"]["status"] == "skipped"
    assert "--platform-url" in by_rule["TOK-01"]["option"]
    assert by_rule["AUTH-PRM-01"]["status"] == "passed"


def test_selection_by_rule_id_marker_and_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sel=EVERY_STATUS)
    result = run_checks(pytester, "--target-url", DEAD, "-k", "AUTH-PRM-01", "test_sel.py")
    result.assert_outcomes(passed=1, deselected=5)
    result = run_checks(pytester, "--target-url", DEAD, "-m", "auth and not auth", "test_sel.py")
    result.assert_outcomes(deselected=6)
    result = run_checks(pytester, "--target-url", DEAD, "--suite", "platform", "test_sel.py")
    result.assert_outcomes(deselected=6)


def test_report_header_shows_targets(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_h="from conformance import rule\n@rule('AUTH-PRM-01')\ndef test_x(): pass\n")
    result = run_checks(pytester, "--target-url", DEAD, "test_h.py")
    result.stdout.fnmatch_lines(["conformance: tool_server = https://127.0.0.1:1/mcp"])


def test_xdist_keeps_every_result(pytester: pytest.Pytester) -> None:
    # A platform check too: the controller must know the platform suite ran to report its harness rule (RL-06).
    pytester.makepyfile(test_par=EVERY_STATUS + '\n@rule("RL-02")\ndef test_platform():\n    pass\n')
    # A run of its own (forked: tests/_forked.py), as the controller must not find state an earlier in-process run
    # of this session left in the plugin's modules.
    result = run_checks(pytester, "--target-url", DEAD, "-n", "2", "test_par.py", how="forked")
    assert result.ret == 1
    got = result.statuses()
    assert {k: got[k] for k in ("AUTH-PRM-01", "AUTH-PRM-02", "AUTH-PRM-06", "AUTH-TOK-06", "AUTH-TOK-03")} == {
        "AUTH-PRM-01": "passed",
        "AUTH-PRM-02": "failed",
        "AUTH-PRM-06": "warning",
        "AUTH-TOK-06": "skipped",
        "AUTH-TOK-03": "blocked",
    }
    assert got["AUTH-TOK-04"] == "error"
    # Nothing is lost against a serial run (in this process, as the other tests here run): the rules with no check
    # are reported by the controller too.
    serial = run_checks(pytester, "--target-url", DEAD, "test_par.py")
    assert serial.ret == 1
    assert serial.statuses() == got
    assert got["RL-06"] == "skipped"


def test_plain_tests_are_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    assert 1\n")
    result = run_checks(pytester, "test_plain.py")
    assert result.ret == 0
    assert not result.report_path.exists()


def test_env_supplies_target(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_TARGET_URL", DEAD)
    pytester.makepyfile(test_e="from conformance import rule\n@rule('AUTH-PRM-01')\ndef test_x(): pass\n")
    run = run_checks(pytester, "test_e.py")
    assert run.report["targets"] == {"tool_server": {"url": DEAD}}


def test_config_file_supplies_target(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("conformance.toml").write_text(f'target_url = "{DEAD}"\n')
    pytester.makepyfile(test_c="from conformance import rule\n@rule('AUTH-PRM-01')\ndef test_x(): pass\n")
    run = run_checks(pytester, "test_c.py")
    assert run.report["targets"]["tool_server"]["url"] == DEAD


def test_secret_in_failure_message_is_redacted(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_PLATFORM_API_KEY", "sk-live-abcdef123456")
    pytester.makepyfile(
        test_s="""
import os
from conformance import fail, rule

@rule("TOK-01")
def test_leaky(platform_target):
    fail("server echoed " + os.environ["CONFORMANCE_PLATFORM_API_KEY"])
"""
    )
    result = run_checks(pytester, "--platform-url", "https://127.0.0.1:1", "test_s.py")
    text = result.report_path.read_text()
    assert "sk-live-abcdef123456" not in text
    assert "sk-live-abcdef123456" not in result.stdout.str()


SETUP_FAILURES = """
import pytest
from conformance import Blocked, TargetUnreachable, rule

@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture bug")

@pytest.fixture
def unreachable():
    raise TargetUnreachable("GET https://t.example/x: could not connect")

@pytest.fixture
def prerequisite():
    raise Blocked("AUTH-PRM-01", "no metadata")

@rule("AUTH-PRM-02")
def test_a(broken_fixture):
    pass

@rule("AUTH-PRM-04")
def test_b(unreachable):
    pass

@rule("AUTH-PRM-05")
def test_c(prerequisite):
    pass

@rule("AUTH-PRM-01")
def test_d(prerequisite):
    pass
"""


def test_fixture_failures_become_verdicts_not_crashes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_setup=SETUP_FAILURES)
    result = run_checks(pytester, "--target-url", DEAD, "test_setup.py")
    got = result.statuses()
    assert got["AUTH-PRM-02"] == "error"
    assert got["AUTH-PRM-04"] == "failed"
    assert got["AUTH-PRM-05"] == "blocked"
    # A shared fixture judging the check's own rule: that rule failed, it is not blocked by itself.
    own = result.by_rule["AUTH-PRM-01"]
    assert (own["status"], own["message"], own["blocked_by"]) == ("failed", "no metadata", None)
    # pytest's tally: the target's failures are failures even when a fixture decided them; the fixture bug errs.
    outcomes = result.parseoutcomes()
    assert (outcomes["failed"], outcomes["errors"], outcomes["blocked"]) == (2, 1, 1), outcomes
    assert "INTERNALERROR" not in result.stdout.str()


# Counts, by check, the tracebacks pytest lays out (every failure's layout goes through ``_repr_failure_py``).
COUNT_LAYOUTS = """
import pytest

def pytest_configure(config):
    original = pytest.Function._repr_failure_py
    laid_out = []

    def counted(self, excinfo, *args, **kwargs):
        laid_out.append(self.name)
        return original(self, excinfo, *args, **kwargs)

    pytest.Function._repr_failure_py = counted

    def restore():
        pytest.Function._repr_failure_py = original
        (config.rootpath / "laid_out.txt").write_text(" ".join(sorted(laid_out)))

    config.add_cleanup(restore)
"""


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_traceback_is_laid_out_only_where_the_report_keeps_it(pytester: pytest.Pytester, concurrency: str) -> None:
    """The report of a check that failed, warned or was blocked by an exception carries the verdict's words, not
    pytest's traceback, which is then never laid out (it parses the source of every frame); a harness error's and a
    fixture bug's keep theirs, as does a failure the baseline expects. Both run loops, set-ups and bodies."""
    pytester.makeconftest(COUNT_LAYOUTS)
    pytester.makepyfile(test_checks=EVERY_STATUS, test_setup=SETUP_FAILURES)
    pytester.path.joinpath("baseline.toml").write_text('expected_failures = ["AUTH-PRM-02"]')
    args = ("--target-url", DEAD, "--concurrency", concurrency, "-rA", "--expected-failures", "baseline.toml")
    result = run_checks(pytester, *args, "test_checks.py", "test_setup.py")
    got = result.statuses()
    assert got["AUTH-PRM-06"] == "warning" and got["AUTH-TOK-04"] == "error" and got["AUTH-PRM-04"] == "failed"
    laid_out = pytester.path.joinpath("laid_out.txt").read_text().split()
    # AUTH-PRM-02 twice: the baseline expects test_fails's failure and test_a's fixture bug (an error).
    assert laid_out == ["test_a", "test_fails", "test_harness_bug"]
    out = result.stdout.str()
    assert "[AUTH-PRM-04] GET https://t.example/x: could not connect" in out  # the verdict's words, a set-up's
    assert "expected failure (baseline): resource was http://evil" in out
    assert "KeyError" in out and "fixture bug" in out


def test_exitfirst_and_last_failed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_lf=BASELINE_CHECKS)
    first = run_checks(pytester, "--target-url", DEAD, "-x", "test_lf.py", cache=True)
    assert first.ret == 1
    again = run_checks(pytester, "--target-url", DEAD, "--lf", "test_lf.py", cache=True)
    again.assert_outcomes(failed=1, deselected=1)
    got = again.statuses()
    assert got["AUTH-PRM-02"] == "failed" and "AUTH-PRM-01" not in got


def test_secret_learnt_during_the_run_is_scrubbed_from_messages(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_learnt="""
from conformance import fail, rule

@rule("AUTH-PRM-01")
def test_token(host_http):
    token = "at-" + "0123456789abcdef"
    host_http.redactor.add_secret(token)
    fail("the server echoed the access token " + token)
"""
    )
    result = run_checks(pytester, "--target-url", DEAD, "test_learnt.py")
    assert "at-0123456789abcdef" not in result.report_path.read_text()
    assert "at-0123456789abcdef" not in result.stdout.str()


def test_wrapped_verdicts_are_failures_and_wrapped_bugs_are_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_groups="""
from conformance import Failure, rule

@rule("AUTH-PRM-02")
def test_group_of_failures():
    raise ExceptionGroup("hypothesis found 2 bugs", [Failure("first bug"), AssertionError("second bug")])

@rule("AUTH-PRM-04")
def test_group_with_a_bug():
    raise ExceptionGroup("mixed", [Failure("a verdict"), KeyError("harness bug")])
"""
    )
    run = run_checks(pytester, "--target-url", DEAD, "test_groups.py")
    by_rule = run.by_rule
    assert by_rule["AUTH-PRM-02"]["status"] == "failed" and by_rule["AUTH-PRM-02"]["message"] == "first bug"
    assert by_rule["AUTH-PRM-04"]["status"] == "error"


def test_bundled_node_ids_are_unambiguous_and_collect_only_writes_nothing(pytester: pytest.Pytester) -> None:
    targets = [
        "--target-url",
        DEAD,
        "--platform-url",
        "https://127.0.0.1:1",
        "--compression-url",
        "https://127.0.0.1:1",
    ]
    result = run_checks(pytester, *targets, "--collect-only", "-q")
    ids = [line for line in result.stdout.lines if "::" in line]
    modules = {node.split("::")[0] for node in ids}
    assert {"auth/test_tokens.py", "platform/test_tokens.py", "compression/test_upload.py"} <= modules, modules
    assert len(ids) == len(set(ids))
    assert not result.report_path.exists()  # nothing was decided: no report replaced
    only = run_checks(pytester, *targets, "--suite", "platform", "--collect-only", "-q")
    assert {line.split("/")[0] for line in only.stdout.lines if "::" in line} == {"platform"}


def test_report_formats_choose_the_reports_besides_report_json(pytester: pytest.Pytester) -> None:
    """--report-formats json writes report.json only and removes an earlier run's report.html, report.har and
    report.sarif (they would pass for this run's); by default json, html and har are written, sarif when asked for;
    an unknown format is a usage error."""
    pytester.makepyfile(test_checks=EVERY_STATUS)
    out = pytester.path / "out"
    run = run_checks(pytester, "--target-url", DEAD, "test_checks.py")
    assert {p.name for p in out.iterdir()} >= {"report.json", "report.html", "report.har"}
    run = run_checks(pytester, "--target-url", DEAD, "--report-formats", "json", "test_checks.py")
    assert run.statuses()["AUTH-PRM-02"] == "failed"
    assert not (out / "report.html").exists() and not (out / "report.har").exists()
    run = run_checks(pytester, "--target-url", DEAD, "--report-formats", "json,har", "test_checks.py")
    assert (out / "report.har").is_file() and not (out / "report.html").exists()
    assert not (out / "report.sarif").exists()  # asked for, never written by default
    run = run_checks(pytester, "--target-url", DEAD, "--report-formats", "json,sarif", "test_checks.py")
    sarif = json.loads((out / "report.sarif").read_text(encoding="utf-8"))
    assert "AUTH-PRM-02" in {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert not (out / "report.har").exists()
    run = run_checks(pytester, "--target-url", DEAD, "--report-formats", "json", "test_checks.py")
    assert not (out / "report.sarif").exists()
    result = run_checks(pytester, "--target-url", DEAD, "--report-formats", "json,pdf", "test_checks.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown report format pdf" in result.stderr.str()


def test_a_bare_run_with_nothing_to_collect_names_the_target_options(pytester: pytest.Pytester) -> None:
    """``pytest`` in an empty folder: nothing to certify and nothing of the project's own; the plugin says which
    options start a certification (and takes nothing over: the exit code stays pytest's "no tests")."""
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["no target given*", "  --target-url URL (or CONFORMANCE_TARGET_URL)*auth, profile"])
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == 0 and "no target given" not in result.stdout.str()


HELD = """
import time
from pathlib import Path
from conformance import observe, rule

@rule("AUTH-PRM-01")
def test_first():
    Path("first-check-at").write_text(repr(time.time()))
    observe("ran")
"""


def _gated_run(pytester: pytest.Pytester, gate: Path, workers: list[str]) -> CheckRun:
    """The checks above, run with a stack gate (``core/_stack_gate.py``) whose opener is this process."""
    import os

    from conformance.core import _stack_gate
    from tests._checks_run import REPORT_DIR
    from tests._forked import runpytest_forked

    pytester.makepyfile(test_held=HELD)
    env = {_stack_gate.GATE_ENV: _stack_gate.gate_value(os.getpid(), gate)}
    args = ("-p", "no:cacheprovider", "--report-dir", REPORT_DIR, "--target-url", DEAD, *workers, "test_held.py")
    return CheckRun(runpytest_forked(pytester, *args, env=env), pytester.path / REPORT_DIR)


@pytest.mark.parametrize("workers", [["-n", "0"], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_run_started_before_its_stack_holds_its_first_check_until_the_gate_opens(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    """``conformance demo`` starts pytest while the stack still starts: no check runs before the stack is up."""
    import threading
    import time

    from conformance.core import _stack_gate

    gate = pytester.path / "stack-ready"
    opened_at: list[float] = []

    def open_gate() -> None:
        time.sleep(0.5)
        opened_at.append(time.time())
        _stack_gate.write(gate, _stack_gate.READY)

    opener = threading.Thread(target=open_gate)
    opener.start()
    result = _gated_run(pytester, gate, workers)
    opener.join()
    assert result.ret == 0 and result.statuses()["AUTH-PRM-01"] == "passed", result.output
    assert float((pytester.path / "first-check-at").read_text()) >= opened_at[0]


@pytest.mark.parametrize("workers", [["-n", "0"], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_run_whose_stack_never_came_up_runs_no_check_and_writes_no_report(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    from conformance.core import _stack_gate

    gate = pytester.path / "stack-ready"
    _stack_gate.write(gate, "failed: service toolserver exited with 1 while starting")
    result = _gated_run(pytester, gate, workers)
    assert result.ret != 0
    assert "the reference stack never came up (failed: service toolserver exited with 1" in result.output
    assert not (pytester.path / "first-check-at").exists()
    assert not result.report_dir.exists() or list(result.report_dir.iterdir()) == []
