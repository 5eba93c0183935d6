"""The host's pytest-free signals reach the same verdicts as the verdict exceptions did (issue 15).

``conformance.host`` raises :class:`InvalidResponse` (the answer broke the rule; with ``blocked_by``, a
prerequisite's rule) and :class:`TargetThrottled`; the pytest face meets them as failed, blocked by the
prerequisite, and blocked (throttled), whether a check or its fixture met them, and inside a Hypothesis example a
throttle ends the property at once instead of being shrunk and replayed against a target that refuses it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.report.json_writer import validate_report

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
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--report-dir", "out", "--target-url", DEAD, "test_checks.py", "test_zz_examples.py"
    )
    report: dict[str, Any] = json.loads((pytester.path / "out" / "report.json").read_text())
    validate_report(report)
    by_rule = {r["rule"]: r for r in report["results"]}
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
