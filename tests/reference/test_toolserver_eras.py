"""The tool server's two MCP eras, end to end: the reference tool server served dual-era (the SDK's default),
modern-only and legacy-only is certified with the same verdicts whichever era the host speaks, and the evidence of a
dual-era run shows the modern side (server/discover, requests at 2026-07-28, no session).

The module's certifications are independent (a stack of its own each): the first test that asks for one starts them
all, two at a time (``RUNS``), each forked with its stack's Python services from the matrix's fork server
(tests/_forked.py: how a stack or a run starts is not what this module is about)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conformance.testing import RunResult
from tests._forked import forked_harness, forked_stack

SUITES = "auth,profile"
IN_FLIGHT = 2
# name: (the eras the tool server serves, the harness's arguments, mutants, suites)
RUNS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], str]] = {
    "legacy": ("both", ("--mcp-era", "legacy"), (), SUITES),
    "dual": ("both", (), (), SUITES),
    "modern": ("modern", (), (), SUITES),
    "legacy-only": ("legacy", (), (), SUITES),
    "both": ("both", ("--mcp-era", "both"), (), SUITES),
    # both modern-only defects
    "mutant": (
        "both",
        ("--mcp-era", "both"),
        ("ts-token-checked-at-initialize-only", "ts-authorizes-by-mcp-name"),
        "auth",
    ),
}


def _run(
    tmp_path: Path, name: str, served: str, *args: str, mutants: tuple[str, ...] = (), suites: str = SUITES
) -> RunResult:
    data_dir = tmp_path / f"stack-{name}"
    with forked_stack(services=["toolserver"], data_dir=data_dir, mcp_era=served, mutants=mutants) as stack:
        ca_bundle = stack.settings["CONFORMANCE_CA_BUNDLE"]
        env = {**stack.settings, "SSL_CERT_FILE": ca_bundle}
        report_dir = tmp_path / f"report-{name}"
        report_dir.mkdir()
        argv = ["--suite", suites, "-q", "--report-formats", "json", *args]
        return forked_harness(argv, report_dir, env=env, timeout=600)


# The runs each test reads (besides "legacy", which most compare with).
TEST_RUNS = {
    "test_a_dual_era_server_is_certified_on_its_modern_side": ("legacy", "dual"),
    "test_the_legacy_choice_speaks_initialize": ("legacy",),
    "test_a_single_era_server_gets_the_same_verdicts": ("legacy", "modern", "legacy-only"),
    "test_both_eras_certify_the_tool_server_once_per_era": ("legacy", "both"),
    "test_a_rule_broken_in_one_era_only_fails_the_run": ("mutant",),
}


@pytest.fixture(scope="module")
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[RunResult]]]:
    """The certifications the selected tests of this module read, started at once (IN_FLIGHT at a time): name -> its
    future result."""
    root = tmp_path_factory.mktemp("eras")
    mine = [item for item in request.session.items if getattr(item, "module", None) is request.module]
    selected = {getattr(item, "originalname", item.name) for item in mine}
    wanted = {run for test in selected for run in TEST_RUNS.get(test, RUNS)}
    with ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="eras") as pool:
        futures = {
            name: pool.submit(_run, root, name, served, *args, mutants=mutants, suites=suites)
            for name, (served, args, mutants, suites) in RUNS.items()
            if name in wanted
        }
        yield futures
        for future in futures.values():
            future.cancel()


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
def legacy_run(runs: dict[str, Future[RunResult]]) -> RunResult:
    return runs["legacy"].result()


def _statuses(result: RunResult) -> dict[str, str]:
    return {r["rule"]: r["status"] for r in result.report["results"]}


def test_a_dual_era_server_is_certified_on_its_modern_side(
    runs: dict[str, Future[RunResult]], legacy_run: RunResult
) -> None:
    result = runs["dual"].result()
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
    assert _statuses(result) == _statuses(legacy_run), result.explained() + "\n" + legacy_run.explained()


def test_the_legacy_choice_speaks_initialize(legacy_run: RunResult) -> None:
    assert legacy_run.report["config"]["mcp_era_spoken"] == ["legacy (2025-06-18)"]
    methods = [body.get("method") for _, body, _ in _mcp_posts(legacy_run)]
    assert "initialize" in methods and "server/discover" not in methods
    assert not legacy_run.with_status("failed", "warning", "error"), legacy_run.explained()


@pytest.mark.parametrize("served", ["modern", "legacy"])
def test_a_single_era_server_gets_the_same_verdicts(
    runs: dict[str, Future[RunResult]], served: str, legacy_run: RunResult
) -> None:
    result = runs["modern" if served == "modern" else "legacy-only"].result()
    spoken = "modern (2026-07-28)" if served == "modern" else "legacy (2025-06-18)"
    assert result.report["config"]["mcp_era_spoken"] == [spoken]
    assert _statuses(result) == _statuses(legacy_run), result.explained() + "\n" + legacy_run.explained()


def test_both_eras_certify_the_tool_server_once_per_era(
    runs: dict[str, Future[RunResult]], legacy_run: RunResult
) -> None:
    result = runs["both"].result()
    assert result.report["config"]["mcp_era"] == "both"
    assert result.report["config"]["mcp_era_spoken"] == ["legacy (2025-06-18)", "modern (2026-07-28)"]
    rows = {row["name"]: row["verdict"]["status"] for row in result.report["fleet"]}
    assert rows == {"legacy": "ACCEPTED", "modern": "ACCEPTED"}, result.explained()
    per_era = {(r["target_name"], r["rule"]): r["status"] for r in result.report["results"]}
    expected = _statuses(legacy_run)
    for era in ("legacy", "modern"):
        assert {rule: status for (target, rule), status in per_era.items() if target == era} == expected, (
            result.explained()
        )


def test_a_rule_broken_in_one_era_only_fails_the_run(runs: dict[str, Future[RunResult]]) -> None:
    result = runs["mutant"].result()
    rows = {row["name"]: row["verdict"]["status"] for row in result.report["fleet"]}
    assert rows == {"legacy": "ACCEPTED", "modern": "NOT ACCEPTED"}, result.explained()
    assert result.report["verdict"]["status"] == "NOT ACCEPTED" and result.exit_code == 1
    failed = {r["rule"] for r in result.report["results"] if r["status"] == "failed"}
    assert failed and all(r["target_name"] == "modern" for r in result.report["results"] if r["status"] == "failed"), (
        result.explained()
    )
    assert failed == {
        *("AUTH-TOK-03", "AUTH-TOK-04", "AUTH-TOK-05", "AUTH-TOK-06", "AUTH-TOK-07", "AUTH-TOOL-03", "AUTH-TOOL-07")
    }, result.explained()
