"""Run a suite against the reference platform sandbox and against each of its mutants (one in-process sandbox
per run, a few runs at a time), for the suites' both-ways proof."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conformance.reference.mutants import Mutant
from conformance.reference.platform.mutants import MUTANTS
from conformance.rules import RULES
from conformance.testing import RunResult, run_harness
from tests.reference.platform.live import serving

WORKERS = 3  # runs in flight: each is one sandbox thread plus one pytest process


def suite_mutants(suite: str) -> list[Mutant]:
    return [m for m in MUTANTS if any(RULES[r].suite == suite for r in m.rules)]


def run_matrix(suite: str, root: Path) -> dict[str, RunResult]:
    cases = ["reference", *sorted(m.name for m in suite_mutants(suite))]

    def run(case: str) -> RunResult:
        mutants = frozenset() if case == "reference" else frozenset({case})
        with serving(root / "data" / case, mutants=mutants) as sandbox:
            report_dir = root / "reports" / case
            report_dir.mkdir(parents=True)
            # Every mutant is caught by an explicit case or the first examples (the properties carry @example
            # cases for that); the reference run keeps the default number to guard against false failures.
            examples = {} if case == "reference" else {"CONFORMANCE_HYPOTHESIS_EXAMPLES": "3"}
            env = {**sandbox.settings, **examples}
            return run_harness(["--suite", suite, "-q"], report_dir, env=env, timeout=300)

    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip(cases, pool.map(run, cases), strict=True))


def describe(result: RunResult) -> str:
    lines = [f"{r['rule']}: {r['status']} {r.get('message') or ''}"[:300] for r in result.report["results"]]
    return "\n".join(lines) + f"\n--- stdout tail ---\n{result.stdout[-1500:]}"


def assert_reference_passes(result: RunResult, suite: str, unproven: frozenset[str] = frozenset()) -> None:
    statuses = result.statuses()
    expected = {rule_id for rule_id, rule in RULES.items() if rule.suite == suite}
    assert set(statuses) == expected, describe(result)
    assert {r for r, s in statuses.items() if s != "passed"} == set(unproven), describe(result)


def assert_mutant_trips_exactly(result: RunResult, mutant: Mutant) -> None:
    assert not result.with_status("error"), describe(result)
    failed = result.failed_rules
    assert mutant.rules <= failed, f"{mutant.name} did not trip {sorted(mutant.rules - failed)}\n{describe(result)}"
    unexpected = failed - mutant.rules - mutant.dependents
    assert not unexpected, f"{mutant.name} also tripped {sorted(unexpected)}\n{describe(result)}"
