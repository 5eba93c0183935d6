"""``conformance attest``: the run's verdict as an in-toto Statement (v1) about report.json, for signing.

The subject is report.json by its SHA-256 digest; the predicate is the in-toto test-result predicate (v0.1):
``result`` (PASSED, WARNED, FAILED), the ``configuration`` the run used (the harness and its version, the targets,
the run's settings as report.json records them) and the rule IDs that passed, warned and failed. Only an
``ACCEPTED`` run is PASSED (WARNED when SHOULD rules warned); ``PASSED LOCALLY`` (never a certification),
``NOT ACCEPTED`` and ``INCOMPLETE`` are FAILED, with the verdict in the configuration's annotations. The statement is
unsigned: ``actions/attest`` (``predicate-path``) or ``cosign attest-blob --predicate`` sign it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.report.model import ACCEPTED, RunReport, Status

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://in-toto.io/attestation/test-result/v0.1"


def _test_name(rule: str, where: str) -> str:
    return f"{where}:{rule}"


def predicate(report: RunReport, *, url: str | None = None) -> dict[str, Any]:
    """The test-result predicate of a report."""
    by_status: dict[Status, list[str]] = {}
    for result in report.results:
        by_status.setdefault(result.status, []).append(_test_name(result.rule, result.where))
    warned = by_status.get(Status.WARNING, [])
    outcome = ("WARNED" if warned else "PASSED") if report.verdict.status == ACCEPTED else "FAILED"
    configuration: list[dict[str, Any]] = [
        {
            "name": report.harness_name,
            "annotations": {
                "version": report.harness_version,
                "verdict": report.verdict.status,
                "reason": report.verdict.reason,
            },
        },
        *({"name": name, "uri": uri} for name, uri in sorted(report.targets.items())),
        {"name": "settings", "annotations": dict(report.config)},
    ]
    found: dict[str, Any] = {
        "result": outcome,
        "configuration": configuration,
        "passedTests": sorted(by_status.get(Status.PASSED, [])),
        "warnedTests": sorted(warned),
        "failedTests": sorted(by_status.get(Status.FAILED, []) + by_status.get(Status.ERROR, [])),
    }
    if url:
        found["url"] = url
    return found


def ci_run_url(env: Mapping[str, str] = os.environ) -> str | None:
    """The CI job that made the report, where the CI says so (GitHub Actions, GitLab CI)."""
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        return f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    return env.get("CI_JOB_URL") or None


def statement(report_path: Path, report: RunReport, *, url: str | None = None) -> dict[str, Any]:
    """The in-toto Statement: report.json's digest as the subject, the test-result predicate."""
    digest = hashlib.sha256(report_path.read_bytes()).hexdigest()
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": report_path.name, "digest": {"sha256": digest}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate(report, url=url),
    }
