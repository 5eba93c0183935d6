"""Vendors' own async tests in a conformance run: the example in docs/examples runs against the embedded stack with
the host's session and token, its extension rules land in the report, and no asyncio warning shows."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.core._exceptions import UnknownRuleError
from conformance.core.rules import RULES
from conformance.pytest.vendor import register_rule
from tests._checks_run import DEAD_TOOL_SERVER, run_checks

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "test_acme_tools.py"
# Any warning pytest reports: the named ones, the summary section, or a count in the final line.
WARNINGS = re.compile(r"Pytest\w*Warning|DeprecationWarning|warnings summary|\d+ warnings?\b", re.I)


def test_example_runs_against_the_embedded_stack(tmp_path: Path) -> None:
    from conformance.testing import run_harness
    from tests._forked import forked_stack

    vendor = tmp_path / "vendor"  # a vendor's directory: no ini of this project, no conftest
    vendor.mkdir()
    shutil.copy(EXAMPLE, vendor / EXAMPLE.name)
    with forked_stack(services=["toolserver"], data_dir=tmp_path / "stack") as stack:
        result = run_harness([str(vendor / EXAMPLE.name)], tmp_path / "reports", env=stack.settings, cwd=vendor)
    output = result.stdout + result.stderr
    statuses = result.statuses()
    assert statuses.get("X-ACME-01") == "passed", output[-3000:]
    assert statuses.get("X-ACME-02") == "passed", output[-3000:]
    assert not WARNINGS.search(output), output[-3000:]
    acme = next(r for r in result.report["results"] if r["rule"] == "X-ACME-01")
    assert acme["level"] == "MUST" and acme["text"].startswith("list_orders")
    calls = [e for e in acme["evidence"] if "tools/call" in (e.get("request_body") or "")]
    assert calls, "the session's exchanges are recorded as the check's evidence"
    for exchange in acme["evidence"]:
        authorization = exchange["request_headers"].get("authorization") or exchange["request_headers"].get(
            "Authorization"
        )
        assert authorization is None or not re.search(r"Bearer [A-Za-z0-9_-]{20,}", authorization), authorization


def _run(directory: Path, *extra: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header", "-rA", *extra],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout + completed.stderr


ASYNC_TEST = """
import asyncio
import pytest
import pytest_asyncio


@pytest_asyncio.fixture(scope="module")
async def shared():
    yield asyncio.get_running_loop()


@pytest.mark.asyncio(loop_scope="module")
async def test_uses_the_fixture(shared, request):
    assert shared is asyncio.get_running_loop()
    print("LOOP_SCOPE=" + str(request.config.getini("asyncio_default_fixture_loop_scope")))
"""


def test_a_vendor_run_shows_no_asyncio_warning(tmp_path: Path) -> None:
    (tmp_path / "test_vendor.py").write_text(ASYNC_TEST)
    output = _run(tmp_path)
    assert not WARNINGS.search(output), output
    assert "LOOP_SCOPE=fixture-scope" in output  # pytest-asyncio's current behaviour, said explicitly
    # Without the harness's setting, pytest-asyncio warns in that same run: the check above can fail (pytest 8 does
    # not show a warning raised while the plugins configure).
    if pytest.version_tuple >= (9,):
        assert WARNINGS.search(_run(tmp_path, "-p", "no:conformance-vendor"))


def test_the_vendors_own_asyncio_settings_are_kept(tmp_path: Path) -> None:
    (tmp_path / "test_vendor.py").write_text(ASYNC_TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = module\nasyncio_mode = auto\n")
    output = _run(tmp_path)
    assert "LOOP_SCOPE=module" in output and not WARNINGS.search(output), output


def test_extension_rules_only() -> None:
    with pytest.raises(UnknownRuleError, match="closed"):
        register_rule("AUTH-PRM-01", "MUST", "redefined")
    with pytest.raises(UnknownRuleError, match="X-ACME-01"):
        register_rule("ACME-01", "MUST", "no extension prefix")
    with pytest.raises(UnknownRuleError, match="suite"):
        register_rule("X-ACME-91", "MUST", "x", suite="nowhere")
    register_rule("X-TESTVENDOR-01", "SHOULD", "A vendor rule.")
    try:
        assert RULES["X-TESTVENDOR-01"].level.value == "SHOULD"
        register_rule("X-TESTVENDOR-01", "SHOULD", "A vendor rule.")  # the same again: a module imported twice
        with pytest.raises(UnknownRuleError, match="differently"):
            register_rule("X-TESTVENDOR-01", "MUST", "Another rule.")
    finally:
        del RULES["X-TESTVENDOR-01"]


ASYNC_CHECKS = """
import asyncio
from conformance import expect, fail, needs, observe, rule
from conformance.pytest.vendor import register_rule

register_rule("X-ACME-01", "MUST", "An async vendor check that passes.")
register_rule("X-ACME-02", "MUST", "An async vendor check that fails.")
register_rule("X-ACME-03", "SHOULD", "An async vendor SHOULD that fails.")

@rule("X-ACME-01")
async def test_passes():
    await asyncio.sleep(0)
    observe("awaited fine")

@rule("X-ACME-02")
async def test_fails():
    await asyncio.sleep(0)
    fail("the vendor's own rule is broken")

@rule("X-ACME-03")
async def test_should():
    expect(False, "a should")

@rule("AUTH-TOK-06")
async def test_needs():
    needs("a second resource", "--alt-resource")
"""


def test_async_checks_and_extension_rules_reach_the_report(pytester: pytest.Pytester) -> None:
    """Unmarked ``async def`` checks run under pytest-asyncio (strict mode) and every verdict kind survives."""

    pytester.makepyfile(test_vendor=ASYNC_CHECKS)
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_vendor.py", how="forked")
    by_rule = result.by_rule
    assert {k: by_rule[k]["status"] for k in ("X-ACME-01", "X-ACME-02", "X-ACME-03", "AUTH-TOK-06")} == {
        "X-ACME-01": "passed",
        "X-ACME-02": "failed",
        "X-ACME-03": "warning",
        "AUTH-TOK-06": "skipped",
    }
    assert by_rule["X-ACME-01"]["message"] == "awaited fine" and by_rule["X-ACME-03"]["level"] == "SHOULD"
    assert result.ret == 1 and result.report["verdict"]["accepted"] is False
    assert not WARNINGS.search(result.stdout.str() + result.stderr.str())
