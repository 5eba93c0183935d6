"""The host's pytest-free signals reach the same verdicts as the verdict exceptions did; the process's
signals (SIGTERM, SIGINT) end a run in order, its reports written.

``conformance.host`` raises :class:`InvalidResponse` (the answer broke the rule; with ``blocked_by``, a
prerequisite's rule) and :class:`TargetThrottled`; the pytest face meets them as failed, blocked by the
prerequisite, and blocked (throttled), whether a check or its fixture met them, and inside a Hypothesis example a
throttle ends the property at once instead of being shrunk and replayed against a target that refuses it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.report.json_writer import validate_report
from tests._checks_run import run_checks
from tests._hostile import hostile, slow_drip

DEAD = "https://127.0.0.1:1/mcp"

CHECKS = """
import pytest
from hypothesis import given, strategies as st
from conformance import rule
from conformance.host import TargetThrottled, json_field
from conformance.suites.platform.client import run_property, target_settings

@pytest.fixture
def throttled_setup():
    raise TargetThrottled("GET https://t.example/a → 429, Retry-After '30'")

@rule("AUTH-PRM-01")
def test_invalid_answer():
    json_field({}, "resource", type=str, what="the metadata")

@rule("AUTH-PRM-02")
def test_prerequisite_answer():
    json_field({}, "resource", type=str, what="the metadata", blocked_by="AUTH-PRM-01")

@rule("AUTH-PRM-03")
def test_prerequisite_is_this_rule():
    json_field({}, "resource", type=str, what="the metadata", blocked_by="AUTH-PRM-03")

@rule("AUTH-ASM-01")
def test_throttled_fixture(throttled_setup):
    pass

examples = []

@rule("AUTH-ASM-02")
def test_throttled_property():
    @target_settings(max_examples=10)
    @given(st.integers(0, 10))
    def prop(n):
        examples.append(n)
        raise TargetThrottled("GET https://t.example/b → 429, Retry-After '30'")

    run_property(prop)
    raise AssertionError("run_property returned: the throttle was lost")
"""


def test_host_signals_are_verdicts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_checks=CHECKS)
    pytester.makepyfile(
        test_zz_examples="from test_checks import examples\n\n"
        "def test_one_example():\n    assert len(examples) == 1, examples\n"
    )
    result = run_checks(pytester, "--target-url", DEAD, "test_checks.py", "test_zz_examples.py")
    report = result.report
    by_rule = result.by_rule
    status = {rule: by_rule[rule]["status"] for rule in ("AUTH-PRM-01", "AUTH-PRM-02", "AUTH-PRM-03")}
    assert status == {"AUTH-PRM-01": "failed", "AUTH-PRM-02": "blocked", "AUTH-PRM-03": "failed"}
    assert by_rule["AUTH-PRM-01"]["message"] == "the metadata: 'resource' is missing"
    assert by_rule["AUTH-PRM-02"]["blocked_by"] == "AUTH-PRM-01"
    assert by_rule["AUTH-PRM-03"]["message"] == "the metadata: 'resource' is missing"
    for rule in ("AUTH-ASM-01", "AUTH-ASM-02"):
        assert by_rule[rule]["status"] == "blocked" and by_rule[rule]["blocked_by"] is None, by_rule[rule]
        assert by_rule[rule]["message"].startswith("target throttled the harness: GET https://t.example/")
    assert report["throttle"]["blocked_checks"] == 2
    # test_one_example passed: the property ran one example, the throttle was not shrunk and replayed
    assert result.parseoutcomes() == {"passed": 1, "failed": 2, "blocked": 3}


# -- the process's signals: SIGTERM and SIGINT end a run in order -----------------------------------------------


def _interrupted_run(tmp_path: Path, signum: int, *, workers: int, to_group: bool) -> tuple[dict[str, Any], str, float]:
    """A real run against a target that drips its answers, signalled once two checks were decided: (report.json,
    output, seconds from the signal to the exit)."""
    with hostile(slow_drip(0.05)) as base:
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "--report-dir", str(tmp_path)]
        command += ["--platform-url", base, "--compression-url", base, "--suite", "platform,compression"]
        command += ["--allow-insecure-loopback", "--max-check-time", "0.5", "-n", str(workers)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
        env |= {"CONFORMANCE_PLATFORM_API_KEY": "sk-signal-platform", "CONFORMANCE_COMPRESSION_API_KEY": "sig-key"}
        run = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        assert run.stdout is not None
        output, deadline = b"", time.monotonic() + 90
        while output.count(b"BLOCKED") < 2 and time.monotonic() < deadline and run.poll() is None:
            output += run.stdout.read1(65536)
        if to_group:  # as `timeout` and CI runners do: the whole process group, xdist workers included
            os.killpg(run.pid, signum)
        else:
            run.send_signal(signum)
        signalled = time.monotonic()
        rest, _ = run.communicate(timeout=60)
        seconds = time.monotonic() - signalled
    report = json.loads((tmp_path / "report.json").read_text())
    return report, (output + rest).decode(errors="replace"), seconds


@pytest.mark.parametrize(
    ("signum", "workers", "to_group"),
    [(signal.SIGTERM, 0, False), (signal.SIGINT, 0, False), (signal.SIGTERM, 2, True)],
    ids=["sigterm", "sigint", "sigterm-xdist-group"],
)
def test_a_signalled_run_writes_its_reports(tmp_path: Path, signum: int, workers: int, to_group: bool) -> None:
    report, output, seconds = _interrupted_run(tmp_path, signum, workers=workers, to_group=to_group)
    validate_report(report)
    name = signal.Signals(signum).name
    assert report["verdict"]["status"] == "INCOMPLETE", report["verdict"]
    assert report["verdict"]["reason"].startswith(f"interrupted ({name})"), report["verdict"]
    decided = [r for r in report["results"] if r["status"] == "blocked"]
    # every check decided before the signal is in the report (two checks may decide the same rule)
    assert decided, ([(r["rule"], r["status"]) for r in report["results"]], output[-3000:])
    assert all(r["message"].startswith("target too slow: ") for r in decided), decided
    assert seconds < 20, seconds
    assert "INTERNALERROR" not in output, output[-3000:]
    for name in ("report.html", "report.har", "junit.xml"):
        assert (tmp_path / name).is_file(), name
