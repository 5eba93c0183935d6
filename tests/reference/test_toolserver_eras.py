"""The tool server's two MCP eras, end to end: the reference tool server served dual-era (the SDK's default),
modern-only and legacy-only is certified with the same verdicts whichever era the host speaks, and the evidence of a
dual-era run shows the modern side (server/discover, requests at 2026-07-28, no session)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.reference.stack import running_stack
from conformance.testing import RunResult, run_harness

SUITES = "auth,profile"


def _run(
    tmp_path: Path, name: str, served: str, *args: str, mutants: tuple[str, ...] = (), suites: str = SUITES
) -> RunResult:
    data_dir = tmp_path / f"stack-{name}"
    with running_stack(services=["toolserver"], data_dir=data_dir, mcp_era=served, mutants=mutants) as stack:
        ca_bundle = stack.settings["CONFORMANCE_CA_BUNDLE"]
        env = {**stack.settings, "SSL_CERT_FILE": ca_bundle}
        report_dir = tmp_path / f"report-{name}"
        report_dir.mkdir()
        argv = ["--suite", suites, "-q", "--report-formats", "json", *args]
        return run_harness(argv, report_dir, env=env, timeout=600)


def _exchanges(result: RunResult) -> list[dict[str, Any]]:
    return [e for r in result.report["results"] for e in r.get("evidence") or []]


def _mcp_posts(result: RunResult) -> list[tuple[dict[str, str], dict[str, Any], dict[str, str]]]:
    """(request headers, JSON-RPC body, response headers) of every JSON-RPC POST in the evidence."""
    posts = []
    for exchange in _exchanges(result):
        if exchange.get("method") != "POST" or not exchange.get("request_body"):
            continue
        try:
            body = json.loads(exchange["request_body"])
        except ValueError:
            continue
        if isinstance(body, dict) and body.get("jsonrpc") == "2.0":
            lower = {k.lower(): v for k, v in (exchange.get("request_headers") or {}).items()}
            answered = {k.lower(): v for k, v in (exchange.get("response_headers") or {}).items()}
            posts.append((lower, body, answered))
    return posts


@pytest.fixture(scope="module")
def legacy_run(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return _run(tmp_path_factory.mktemp("eras"), "legacy", "both", "--mcp-era", "legacy")


def _statuses(result: RunResult) -> dict[str, str]:
    return {r["rule"]: r["status"] for r in result.report["results"]}


def test_a_dual_era_server_is_certified_on_its_modern_side(tmp_path: Path, legacy_run: RunResult) -> None:
    result = _run(tmp_path, "dual", "both")
    assert result.report["config"]["mcp_era"] == "auto"
    assert result.report["config"]["mcp_era_spoken"] == ["modern (2026-07-28)"], result.report["config"]
    assert "MCP era: modern (2026-07-28)" in result.stdout
    posts = _mcp_posts(result)
    methods = [body.get("method") for _, body, _ in posts]
    assert "server/discover" in methods and "initialize" not in methods
    calls = [(h, b, a) for h, b, a in posts if b.get("method") in ("tools/list", "tools/call")]
    assert calls
    for headers, body, answered in calls:
        assert headers.get("mcp-protocol-version") == "2026-07-28" and headers.get("mcp-method") == body["method"]
        assert body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert "mcp-session-id" not in headers and "mcp-session-id" not in answered
    assert _statuses(result) == _statuses(legacy_run)


def test_the_legacy_choice_speaks_initialize(legacy_run: RunResult) -> None:
    assert legacy_run.report["config"]["mcp_era_spoken"] == ["legacy (2025-06-18)"]
    methods = [body.get("method") for _, body, _ in _mcp_posts(legacy_run)]
    assert "initialize" in methods and "server/discover" not in methods
    assert not legacy_run.with_status("failed", "warning", "error"), legacy_run.stdout[-2000:]


@pytest.mark.parametrize("served", ["modern", "legacy"])
def test_a_single_era_server_gets_the_same_verdicts(tmp_path: Path, served: str, legacy_run: RunResult) -> None:
    result = _run(tmp_path, served, served)
    spoken = "modern (2026-07-28)" if served == "modern" else "legacy (2025-06-18)"
    assert result.report["config"]["mcp_era_spoken"] == [spoken]
    assert _statuses(result) == _statuses(legacy_run)


def test_both_eras_certify_the_tool_server_once_per_era(tmp_path: Path, legacy_run: RunResult) -> None:
    result = _run(tmp_path, "both", "both", "--mcp-era", "both")
    assert result.report["config"]["mcp_era"] == "both"
    assert result.report["config"]["mcp_era_spoken"] == ["legacy (2025-06-18)", "modern (2026-07-28)"]
    rows = {row["name"]: row["verdict"]["status"] for row in result.report["fleet"]}
    assert rows == {"legacy": "ACCEPTED", "modern": "ACCEPTED"}, result.stdout[-3000:]
    per_era = {(r["target_name"], r["rule"]): r["status"] for r in result.report["results"]}
    expected = _statuses(legacy_run)
    for era in ("legacy", "modern"):
        assert {rule: status for (target, rule), status in per_era.items() if target == era} == expected


def test_a_rule_broken_in_one_era_only_fails_the_run(tmp_path: Path) -> None:
    mutants = ("ts-token-checked-at-initialize-only", "ts-authorizes-by-mcp-name")  # both modern-only defects
    result = _run(tmp_path, "mutant", "both", "--mcp-era", "both", mutants=mutants, suites="auth")
    rows = {row["name"]: row["verdict"]["status"] for row in result.report["fleet"]}
    assert rows == {"legacy": "ACCEPTED", "modern": "NOT ACCEPTED"}, result.stdout[-3000:]
    assert result.report["verdict"]["status"] == "NOT ACCEPTED" and result.exit_code == 1
    failed = {r["rule"] for r in result.report["results"] if r["status"] == "failed"}
    assert failed and all(r["target_name"] == "modern" for r in result.report["results"] if r["status"] == "failed")
    assert failed == {
        *("AUTH-TOK-03", "AUTH-TOK-04", "AUTH-TOK-05", "AUTH-TOK-06", "AUTH-TOK-07", "AUTH-TOOL-03", "AUTH-TOOL-07")
    }
