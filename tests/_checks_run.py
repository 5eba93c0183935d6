"""Running checks in a pytester directory and reading what they reported: the one call the tests make for it.

``run_checks(pytester, *args)`` is ``pytest -p no:cacheprovider --report-dir out ARGS`` in the pytester directory
(in-process, in a subprocess, or forked from the fork server: tests/_forked.py); the :class:`CheckRun` it returns is
pytester's result (exit code, output, outcomes) and the run's ``report.json``, read on first use and checked against
the report's schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from conformance.report.json_writer import validate_report

DEAD_TOOL_SERVER = "https://127.0.0.1:1/mcp"  # nothing answers there: for checks whose fixtures are stubs
REPORT_DIR = "out"


@dataclass
class CheckRun:
    """A run of checks: pytester's result and the report it wrote."""

    outcome: pytest.RunResult
    report_dir: Path
    _report: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def ret(self) -> int:
        return int(self.outcome.ret)

    @property
    def stdout(self) -> pytest.LineMatcher:
        return self.outcome.stdout

    @property
    def stderr(self) -> pytest.LineMatcher:
        return self.outcome.stderr

    @property
    def output(self) -> str:
        """Both streams, as the console showed them."""
        return "\n".join(self.outcome.outlines + self.outcome.errlines)

    def assert_outcomes(self, **counts: int) -> None:
        self.outcome.assert_outcomes(**counts)

    def __getattr__(self, name: str) -> Any:
        """The rest of pytester's result (``parseoutcomes``, ``outlines`` ...)."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.outcome, name)

    @property
    def report_path(self) -> Path:
        return self.report_dir / "report.json"

    @property
    def report(self) -> dict[str, Any]:
        """``report.json``, valid against its schema."""
        if self._report is None:
            report: dict[str, Any] = json.loads(self.report_path.read_text(encoding="utf-8"))
            validate_report(report)
            self._report = report
        return self._report

    @property
    def results(self) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = self.report["results"]
        return results

    @property
    def first(self) -> dict[str, Any]:
        """The first result (the only one, when one check of one rule ran)."""
        return self.results[0]

    @property
    def by_rule(self) -> dict[str, dict[str, Any]]:
        return {r["rule"]: r for r in self.results}

    def statuses(self) -> dict[str, str]:
        return {r["rule"]: r["status"] for r in self.results}


def run_checks(
    pytester: pytest.Pytester,
    *args: str,
    how: Literal["in-process", "subprocess", "forked"] = "in-process",
    report_dir: str = REPORT_DIR,
    cache: bool = False,
) -> CheckRun:
    """``pytest -p no:cacheprovider --report-dir REPORT_DIR ARGS`` in the pytester directory: in-process
    (``pytester.runpytest``), in a fresh interpreter (``runpytest_subprocess``: what a real process shows), or forked
    from the fork server (a fresh run's state without a fresh interpreter's imports). ``cache``: keep pytest's cache
    (``--lf`` reads it)."""
    argv = (
        ("--report-dir", report_dir, *args) if cache else ("-p", "no:cacheprovider", "--report-dir", report_dir, *args)
    )
    if how == "forked":
        from tests._forked import runpytest_forked

        outcome = runpytest_forked(pytester, *argv)
    elif how == "subprocess":
        outcome = pytester.runpytest_subprocess(*argv)
    else:
        outcome = pytester.runpytest(*argv)
    return CheckRun(outcome, pytester.path / report_dir)
