"""The linking checks of the auth suite (issue 5) proven both ways against the embedded reference stack.

The reference passes every rule below; each authorization mutant (IdP, proxy, and the tool-server mutants of
these rules) fails exactly its rules among them, plus at most its dependents. One stack per case, three cases in
flight; each run executes every linking check of the suite (the token and tool checks have their own matrix), so
that a mutant failing anything outside its rules and dependents is caught.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.reference.mutants import Mutant, all_mutants
from conformance.reference.stack import running_stack
from conformance.testing import RunResult, run_harness

SUITE_DIR = Path(__file__).resolve().parents[3] / "conformance" / "suites" / "auth"
CHECK_FILES = (
    "test_prm.py",
    "test_asmeta.py",
    "test_cimd.py",
    "test_dcr.py",
    "test_flow.py",
    "test_iss.py",
    "test_reauth.py",
    "test_ws.py",
)
RULES = frozenset(
    {
        *(f"AUTH-PRM-0{i}" for i in range(1, 7)),
        *(f"AUTH-ASM-0{i}" for i in range(1, 9)),
        *(f"AUTH-CIMD-0{i}" for i in range(1, 7)),
        "AUTH-DCR-01",
        "AUTH-DCR-02",
        *(f"AUTH-FLOW-0{i}" for i in range(1, 8)),
        "AUTH-ISS-01",
        "AUTH-ISS-02",
        "AUTH-ISS-03",
        "AUTH-REAUTH-01",
        "AUTH-WS-01",
    }
)
WORKERS = 3  # stacks in flight: each is an IdP, a tool server (and a proxy) plus one pytest process
MUTANTS: dict[str, Mutant] = {
    m.name: m for m in all_mutants().values() if m.service in ("idp", "proxy", "toolserver") and m.rules & RULES
}


def run_case(case: str, root: Path) -> RunResult:
    """Every case runs every linking check: precision is proven per mutant, not inferred from the reference."""
    args = ["-q", *(str(SUITE_DIR / name) for name in CHECK_FILES)]
    mutants = []
    if case != "reference":
        mutants.append(case)
    services = ["toolserver", "proxy"] if case.startswith("proxy-") else ["toolserver"]
    with running_stack(mutants=mutants, services=services, data_dir=root / "data" / case) as stack:
        report_dir = root / "reports" / case
        report_dir.mkdir(parents=True)
        return run_harness(args, report_dir, env=stack.settings, timeout=300)


@pytest.fixture(scope="module")
def matrix(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    """Every selected case, run once (``-k idp-code-reuse`` runs only that mutant and the reference)."""
    selected = {"reference"}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("name") in MUTANTS:
            selected.add(callspec.params["name"])
    root = tmp_path_factory.mktemp("auth-matrix")
    cases = sorted(selected)
    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip(cases, pool.map(lambda case: run_case(case, root), cases), strict=True))


def describe(result: RunResult) -> str:
    lines = [
        f"{r['rule']}: {r['status']} {r.get('blocked_by') or ''} {r.get('message') or ''}"[:300]
        for r in result.report["results"]
        if r["rule"] in RULES
    ]
    return "\n".join(lines) + f"\n--- stdout tail ---\n{result.stdout[-1500:]}"


def test_reference_passes_every_rule(matrix: dict[str, RunResult]) -> None:
    result = matrix["reference"]
    statuses = result.statuses()
    assert {r: statuses.get(r) for r in RULES} == dict.fromkeys(RULES, "passed"), describe(result)
    assert not result.with_status("failed", "warning", "error", "blocked"), describe(result)


def test_every_rule_has_a_mutant() -> None:
    proven = set().union(*(m.rules for m in MUTANTS.values()))
    assert sorted(RULES - proven) == []


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_fails_exactly_its_rules(matrix: dict[str, RunResult], name: str) -> None:
    mutant, result = MUTANTS[name], matrix[name]
    assert not result.with_status("error"), describe(result)
    failed = result.failed_rules & RULES
    expected = mutant.rules & RULES
    assert expected <= failed, f"{name} did not trip {sorted(expected - failed)}\n{describe(result)}"
    unexpected = failed - expected - mutant.dependents
    assert not unexpected, f"{name} also tripped {sorted(unexpected)}\n{describe(result)}"
