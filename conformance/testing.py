"""Helpers for the project's own tests: run the harness in a subprocess and read what it reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class RunResult:
    exit_code: int
    stdout: str
    stderr: str
    report: dict[str, Any]

    def statuses(self) -> dict[str, str]:
        return {r["rule"]: r["status"] for r in self.report.get("results", [])}

    def with_status(self, *statuses: str) -> set[str]:
        return {r["rule"] for r in self.report.get("results", []) if r["status"] in statuses}

    @property
    def failed_rules(self) -> set[str]:
        """Rules that failed (MUST) or warned (SHOULD)."""
        return self.with_status("failed", "warning")

    def explained(self) -> str:
        """:func:`explain` of this run."""
        return explain(self.report, self.stdout)


def explain(report: Mapping[str, Any], output: str) -> str:
    """What a failing assertion about a run shows: the run's verdict and each fleet row's, every rule result that did
    not pass (target, rule, status, message), and the tail of the run's output."""
    verdict = report["verdict"]
    rows = [f"run: {verdict['status']} ({verdict.get('reason', '')})"]
    rows += [
        f"{row['name']}: {row['verdict']['status']} ({row['verdict'].get('reason', '')})"
        for row in report.get("fleet", ())
    ]
    unpassed = [
        f"{r.get('target_name') or ''} {r['rule']} {r['status']}: {(r.get('message') or '')[:400]}".lstrip()
        for r in report["results"]
        if r["status"] != "passed"
    ]
    return "\n".join([*rows, *unpassed, "output:", output[-1500:]])


def run_harness(
    args: Sequence[str],
    report_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    cwd: Path | None = None,
) -> RunResult:
    """``python -m pytest ARGS --report-dir DIR`` in a fresh process; the report must exist afterwards."""
    merged = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    merged.update(env or {})
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--report-dir",
        str(report_dir),
        *args,
    ]
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=merged,
        cwd=str(cwd or report_dir),
        check=False,
    )
    report_path = report_dir / "report.json"
    if not report_path.is_file():
        raise AssertionError(
            f"no report written (exit {completed.returncode})\nstdout:\n{completed.stdout[-4000:]}\n"
            f"stderr:\n{completed.stderr[-4000:]}"
        )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    return RunResult(completed.returncode, completed.stdout, completed.stderr, report)
