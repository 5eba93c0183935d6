"""The token checks without a trusted test issuer: real tokens only (a target that cannot trust the harness).

AUTH-TOK-05 then waits out a short-lived real token (the reference IdP's lifetime set to a few seconds, below
``--max-expiry-wait``), AUTH-TOK-06 uses a real token for ``--alt-resource`` (AUTH-TOOL-07 both, on the tool that
declares noauth and oauth2), and AUTH-TOK-07 is skipped with the need it has. Proven both ways: the reference
passes, ``ts-skip-exp`` and ``ts-skip-audience`` trip their rules.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.testing import RunResult
from tests._forked import forked_harness, forked_stack

SUITES_DIR = Path(__file__).resolve().parents[3] / "conformance" / "suites"
HARNESS_ARGS = ("-q",)  # forked runs (tests/_forked.py) add --assert=plain: checks decide with expect()/fail()

TTL_S = 5
# The token rules, and AUTH-TOOL-07 (a tool declaring noauth and oauth2 presented with expired and other-audience
# tokens: real ones here too).
TOK_RULES = frozenset({*(f"AUTH-TOK-0{i}" for i in range(1, 10)), "AUTH-TOK-10", "AUTH-TOOL-07"})
CASES = {
    "reference": frozenset(),
    "ts-skip-exp": {"AUTH-TOK-05", "AUTH-TOOL-07"},
    "ts-skip-audience": {"AUTH-TOK-06", "AUTH-TOOL-07"},
}


def describe(result: RunResult) -> str:
    lines = [f"{r['rule']}: {r['status']} {r.get('message') or ''}"[:300] for r in result.report["results"]]
    return "\n".join(lines) + f"\n--- stdout tail ---\n{result.stdout[-1500:]}"


def run_case(case: str, root: Path) -> RunResult:
    mutants = [] if case == "reference" else [case]
    with forked_stack(mutants=mutants, services=["toolserver"], data_dir=root / "data" / case) as stack:
        env = {k: v for k, v in stack.settings.items() if not k.startswith("CONFORMANCE_TEST_ISSUER")}
        report_dir = root / "reports" / case
        report_dir.mkdir(parents=True)
        args = [*HARNESS_ARGS, str(SUITES_DIR / "auth" / "test_tokens.py"), "--max-expiry-wait", "30"]
        return forked_harness(args, report_dir, env=env, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    root = tmp_path_factory.mktemp("tokens-real-mode")
    with pytest.MonkeyPatch.context() as patch:
        # Read by the IdP's services() when each stack starts: every case gets short-lived access tokens.
        patch.setenv("CONFORMANCE_REFERENCE_ACCESS_TOKEN_TTL", str(TTL_S))
        with ThreadPoolExecutor(len(CASES)) as pool:
            return dict(zip(CASES, pool.map(lambda case: run_case(case, root), CASES), strict=True))


def test_reference_passes_with_real_tokens(runs: dict[str, RunResult]) -> None:
    result = runs["reference"]
    statuses = {r: s for r, s in result.statuses().items() if r in TOK_RULES}
    assert statuses == {r: "skipped" if r == "AUTH-TOK-07" else "passed" for r in TOK_RULES}, describe(result)
    by_rule = {r["rule"]: r for r in result.report["results"]}
    assert "waited out a real token" in by_rule["AUTH-TOK-05"]["message"], describe(result)
    assert "harness-issued" in (by_rule["AUTH-TOK-07"].get("need") or ""), describe(result)


@pytest.mark.parametrize("case", [c for c in CASES if c != "reference"])
def test_mutant_trips_its_rule_with_real_tokens(runs: dict[str, RunResult], case: str) -> None:
    result = runs[case]
    failed = result.failed_rules & TOK_RULES
    assert failed == CASES[case], describe(result)
