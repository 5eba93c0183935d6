"""The reference's half of the mutant matrix (tests/matrix/test_matrix.py), proven on the report of the session's
`conformance demo` run (tests/conftest.py ``demo_run``: every suite against the embedded reference stack, unmutated).

The demo run is the certification a reference case would make (the same suites, the same checks, the default number of
Hypothesis examples), so the reference is certified once. These tests are scheduled with demo_run
(tests/conftest.py SHARED_FIXTURE_SCOPES), so that it is made once per run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.core.rules import HARNESS_RULES
from conformance.testing import RunResult
from tests.matrix.plan import Case, plan
from tests.matrix.test_matrix import describe, params

REFERENCES = [case for case in plan() if case.mutant is None]
COMPRESSION = [case for case in REFERENCES if case.target == "compression"]


def reference_run(demo_run: tuple[int, Path, str], case: Case) -> RunResult:
    """The demo run, as if it had run only ``case``'s suites: its results for the rules of those suites."""
    code, report_dir, output = demo_run
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    results = [r for r in report["results"] if r["suite"] in case.suites]
    return RunResult(code, output, "", {**report, "results": results})


@pytest.mark.parametrize("case", params(REFERENCES))
def test_reference_passes_every_rule(demo_run: tuple[int, Path, str], case: Case) -> None:
    result = reference_run(demo_run, case)
    statuses = result.statuses()
    assert set(statuses) == case.rules, describe(result)
    # Rules about the harness itself are proven by the project's tests, not by a target: skipped here, or passed by
    # a check that shows the host's behaviour in the run.
    not_passed = {rule for rule, status in statuses.items() if status != "passed"}
    assert not_passed <= case.rules & set(HARNESS_RULES), describe(result)
    assert not result.with_status("failed", "warning", "error", "blocked"), describe(result)


@pytest.mark.parametrize("case", params(COMPRESSION))
def test_probes_outside_the_host_client_are_evidence(demo_run: tuple[int, Path, str], case: Case) -> None:
    """Compression: the raw-socket plain-HTTP probe and the SigV4-signed read-back of the S3 store show up as
    exchanges, credentials redacted (on the reference run, which the demo makes anyway): the signature is in no
    header and nowhere in the report."""
    result = reference_run(demo_run, case)
    by_rule = {r["rule"]: r for r in result.report["results"]}
    clients = {e.get("client") for e in by_rule["IMG-TLS-01"]["evidence"]}
    assert "raw socket" in clients, clients
    plain = next(e for e in by_rule["IMG-TLS-01"]["evidence"] if e.get("client") == "raw socket")
    assert plain["url"].startswith("http://") and plain["method"] == "POST"
    assert {k.lower(): v for k, v in plain["request_headers"].items()}["authorization"] == "Basic [REDACTED]"
    stored = next(
        e for e in by_rule["IMG-STO-01"]["evidence"] if e["method"] == "GET" and "/conformance-objstore-a/" in e["url"]
    )
    assert stored["status"] == 200 and "image/jpeg" in (stored["response_body"] or "")
    headers = {k.lower(): v for k, v in stored["request_headers"].items()}
    assert headers["authorization"] == "[REDACTED]" and headers["x-amz-content-sha256"], headers
    assert "Signature=" not in json.dumps(result.report)


def test_every_rule_has_a_mutant_case_that_must_not_fail_it() -> None:
    """What the matrix's own reference runs also showed: that its way of running (forked harness runs, forked or
    in-process services, shared object stores) fails no rule of a correct target. It still does, rule by rule: each
    rule is decided by some mutant case that must not fail it (neither the mutant's rule nor a dependent), so a rule
    the machinery broke would fail that case ("also tripped"); one it made skip would fail its own mutant's case."""
    mutants = [case for case in plan() if case.mutant is not None]
    unguarded = [
        rule
        for reference in REFERENCES
        for rule in sorted(reference.rules - set(HARNESS_RULES))
        if not any(
            rule in case.rules and rule not in case.mutant.rules | case.mutant.dependents
            for case in mutants
            if case.mutant is not None
        )
    ]
    assert unguarded == []
