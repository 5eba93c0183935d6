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
