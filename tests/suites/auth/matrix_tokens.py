"""The mutant matrix of the token, tool, challenge, mTLS and profile checks (issue 6), shared by
``tests/suites/auth/test_token_mutants.py`` and ``tests/suites/profile/test_profile_mutants.py``.

One reference stack (IdP + tool server) per case; every case runs *all* these checks (not only the mutant's
rules), so a mutant proves both that it trips its rules and that it trips nothing else among them. The runs are
made once per test session (whichever module asks first) and shared.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.reference.mutants import Mutant, all_mutants
from conformance.reference.stack import running_stack
from conformance.testing import RunResult, run_harness

SUITES_DIR = Path(__file__).resolve().parents[3] / "conformance" / "suites"
CHECKS = (
    SUITES_DIR / "auth" / "test_tokens.py",
    SUITES_DIR / "auth" / "test_tools.py",
    SUITES_DIR / "auth" / "test_mtls.py",
    SUITES_DIR / "profile",
)
RULES = frozenset(
    {
        *(f"AUTH-TOK-0{i}" for i in range(1, 10)),
        *(f"AUTH-TOOL-0{i}" for i in range(1, 7)),
        "AUTH-CHAL-01",
        "AUTH-CHAL-02",
        "AUTH-MTLS-01",
        *(f"PROF-{i:02d}" for i in range(1, 14)),
    }
)
# Checks decide with expect()/fail(), never with bare asserts: skipping pytest's assertion rewriting (of the whole
# conformance package, the plugin's distribution, uncached under PYTHONDONTWRITEBYTECODE) saves ~1.3 s CPU a run.
HARNESS_ARGS = ("-q", "--assert=plain")
WORKERS = 4  # stacks in flight: an IdP (node), a tool server and a pytest process each (half of it is waiting)
MUTANTS: dict[str, Mutant] = {
    m.name: m for m in all_mutants().values() if m.service == "toolserver" and m.rules & RULES
}

_lock = threading.Lock()
_runs: dict[str, RunResult] = {}


def run_case(case: str, root: Path) -> RunResult:
    mutants = [] if case == "reference" else [case]
    with running_stack(mutants=mutants, services=["toolserver"], data_dir=root / "data" / case) as stack:
        report_dir = root / "reports" / case
        report_dir.mkdir(parents=True)
        return run_harness([*HARNESS_ARGS, *map(str, CHECKS)], report_dir, env=stack.settings, timeout=300)


def selected_cases(session: pytest.Session) -> set[str]:
    """The reference and every mutant a collected test asks about (``-k NAME`` runs just that one)."""
    selected = {"reference"}
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("name") in MUTANTS:
            selected.add(callspec.params["name"])
    return selected


def matrix(session: pytest.Session, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    with _lock:
        missing = sorted(selected_cases(session) - set(_runs))
        if missing:
            root = tmp_path_factory.mktemp("tokens-matrix")
            with ThreadPoolExecutor(WORKERS) as pool:
                _runs.update(zip(missing, pool.map(lambda case: run_case(case, root), missing), strict=True))
        return dict(_runs)


def describe(result: RunResult) -> str:
    lines = [
        f"{r['rule']}: {r['status']} {r.get('blocked_by') or ''} {r.get('message') or ''}"[:300]
        for r in result.report["results"]
        if r["rule"] in RULES
    ]
    return "\n".join(lines) + f"\n--- stdout tail ---\n{result.stdout[-1500:]}"


def mine(result: RunResult) -> dict[str, str]:
    return {rule: status for rule, status in result.statuses().items() if rule in RULES}


def assert_reference_passes(result: RunResult, rules: frozenset[str]) -> None:
    statuses = {r: s for r, s in mine(result).items() if r in rules}
    assert set(statuses) == rules, describe(result)
    bad = {r: s for r, s in statuses.items() if s != "passed"}
    assert not bad, describe(result)


def assert_trips_exactly(result: RunResult, mutant: Mutant) -> None:
    statuses = mine(result)
    errors = {r for r, s in statuses.items() if s == "error"}
    assert not errors, f"harness errors {sorted(errors)}\n{describe(result)}"
    failed = {r for r, s in statuses.items() if s in ("failed", "warning")}
    expected = mutant.rules & RULES
    assert expected <= failed, f"{mutant.name} did not trip {sorted(expected - failed)}\n{describe(result)}"
    unexpected = failed - mutant.rules - mutant.dependents
    assert not unexpected, f"{mutant.name} also tripped {sorted(unexpected)}\n{describe(result)}"
