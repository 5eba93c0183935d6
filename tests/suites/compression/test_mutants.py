"""The compression suite proven both ways: every IMG rule passes on the reference sandbox, and each mutant fails
exactly its rules (plus at most its dependents). The object stores are shared; each run gets its own sandbox,
served in this process (the subprocess form is covered by the reference tests)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.reference.compression.mutants import MUTANTS
from conformance.rules import RULES
from conformance.testing import RunResult, run_harness
from tests.reference.compression.stack import running_stores, serving_sandbox

IMG_RULES = {rule_id for rule_id, rule in RULES.items() if rule.suite == "compression"}
CASES = ["reference", *sorted(m.name for m in MUTANTS)]
BY_NAME = {m.name: m for m in MUTANTS}
WORKERS = 3  # runs in flight: each is one sandbox process plus one pytest process


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult | BaseException]:
    """Every case's run; a case that could not run keeps its exception, so only its own test errors."""
    root = tmp_path_factory.mktemp("compression-matrix")

    with running_stores(root / "stores") as stores:

        def run(case: str) -> RunResult | BaseException:
            mutants = frozenset() if case == "reference" else frozenset({case})
            failure: BaseException | None = None
            for attempt in range(2):  # a second try only when the run itself could not happen (port race, load)
                try:
                    with serving_sandbox(stores, f"{case}-{attempt}", mutants) as sandbox:
                        report_dir = root / "reports" / f"{case}-{attempt}"
                        report_dir.mkdir(parents=True)
                        args = ["--suite", "compression", "-q"]
                        return run_harness(args, report_dir, env=sandbox.settings, timeout=600)
                except Exception as exc:
                    failure = exc
            assert failure is not None
            return failure

        with ThreadPoolExecutor(WORKERS) as pool:
            return dict(zip(CASES, pool.map(run, CASES), strict=True))


def _result(runs: dict[str, RunResult | BaseException], case: str) -> RunResult:
    result = runs[case]
    if isinstance(result, BaseException):
        raise result
    return result


def _describe(result: RunResult) -> str:
    lines = [f"{r['rule']}: {r['status']} {r.get('message') or ''}"[:300] for r in result.report["results"]]
    return "\n".join(lines) + f"\n--- stdout tail ---\n{result.stdout[-1500:]}"


def test_reference_passes_every_rule(runs: dict[str, RunResult | BaseException]) -> None:
    result = _result(runs, "reference")
    statuses = result.statuses()
    assert set(statuses) == IMG_RULES, _describe(result)
    assert {s for s in statuses.values()} == {"passed"}, _describe(result)
    assert result.exit_code == 0


def test_probes_outside_the_host_client_are_evidence(runs: dict[str, RunResult | BaseException]) -> None:
    """The raw-socket plain-HTTP probe and boto3's read-back show up as exchanges, credentials redacted."""
    result = _result(runs, "reference")
    by_rule = {r["rule"]: r for r in result.report["results"]}
    clients = {rule: {e.get("client") for e in by_rule[rule]["evidence"]} for rule in ("IMG-TLS-01", "IMG-STO-01")}
    assert "raw socket" in clients["IMG-TLS-01"] and "boto3" in clients["IMG-STO-01"], clients
    plain = next(e for e in by_rule["IMG-TLS-01"]["evidence"] if e.get("client") == "raw socket")
    assert plain["url"].startswith("http://") and plain["method"] == "POST"
    assert {k.lower(): v for k, v in plain["request_headers"].items()}["authorization"] == "Basic [REDACTED]"
    stored = next(e for e in by_rule["IMG-STO-01"]["evidence"] if e.get("client") == "boto3")
    assert stored["status"] == 200 and "image/jpeg" in (stored["response_body"] or "")


@pytest.mark.parametrize("name", CASES[1:])
def test_mutant_fails_exactly_its_rules(runs: dict[str, RunResult | BaseException], name: str) -> None:
    mutant = BY_NAME[name]
    result = _result(runs, name)
    assert not result.with_status("error"), _describe(result)
    failed = result.failed_rules
    assert mutant.rules <= failed, f"{name} did not trip {sorted(mutant.rules - failed)}\n{_describe(result)}"
    unexpected = failed - mutant.rules - mutant.dependents
    assert not unexpected, f"{name} also tripped {sorted(unexpected)}\n{_describe(result)}"


def test_every_rule_has_a_mutant() -> None:
    proven = set().union(*(m.rules for m in MUTANTS))
    assert proven == IMG_RULES, sorted(IMG_RULES - proven)
