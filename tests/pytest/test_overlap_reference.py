"""The reference tool server certified one check at a time and with checks at once: the same (rule, status) pairs,
in the same order, whatever ``--concurrency`` says (conformance/pytest/_overlap.py, conformance/suites/_order.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests._forked import forked_harness, forked_stack


def _certify(tmp_path: Path, env: dict[str, str], concurrency: str) -> list[tuple[str, str]]:
    report_dir = tmp_path / f"report-{concurrency}"
    report_dir.mkdir()
    argv = ["--suite", "auth,profile", "-q", "--report-formats", "json", "--concurrency", concurrency]
    forked_harness(argv, report_dir, env=env, timeout=600)
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    return [(str(r["rule"]), str(r["status"])) for r in report["results"]]


def test_checks_at_once_certify_as_one_at_a_time(tmp_path: Path) -> None:
    with forked_stack(services=["toolserver"], data_dir=tmp_path / "stack") as stack:
        env = {**stack.settings, "SSL_CERT_FILE": stack.settings["CONFORMANCE_CA_BUNDLE"]}
        one_at_a_time = _certify(tmp_path, env, "1")
        at_once = _certify(tmp_path, env, "8")
    assert len(one_at_a_time) == 71, one_at_a_time
    assert at_once == one_at_a_time
