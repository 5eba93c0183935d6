"""The expected-failures baseline.

A TOML file listing rules that are known to fail, optionally per target::

    expected_failures = ["AUTH-PRM-06"]          # any target

    [[expected]]
    rule = "CAMP-14"
    target = "platform"                          # optional
    reason = "conflict hook not available on staging"

A listed failure is accepted; an unlisted failure fails the run; a listed rule that now passes fails the run as
stale, so the baseline only ever shrinks.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance._exceptions import ConfigError
from conformance.rules import RULES


@dataclass
class Baseline:
    entries: dict[tuple[str, str | None], str] = field(default_factory=dict)  # (rule, target) -> reason
    source: str | None = None

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            with path.open("rb") as handle:
                data = tomllib.load(handle)
        except OSError as exc:
            raise ConfigError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"baseline {path} is not valid TOML: {exc}") from None
        baseline = cls(source=str(path))
        simple = data.get("expected_failures", [])
        if not isinstance(simple, list) or not all(isinstance(x, str) for x in simple):
            raise ConfigError(f"baseline {path}: expected_failures must be a list of rule IDs")
        for rule_id in simple:
            baseline._add(path, rule_id, None, "")
        tables = data.get("expected", [])
        if not isinstance(tables, list):
            raise ConfigError(f"baseline {path}: [[expected]] must be an array of tables")
        for table in tables:
            if not isinstance(table, dict) or not isinstance(table.get("rule"), str):
                raise ConfigError(f'baseline {path}: every [[expected]] needs rule = "ID"')
            target = table.get("target")
            baseline._add(path, table["rule"], str(target) if target else None, str(table.get("reason", "")))
        return baseline

    def _add(self, path: Path, rule_id: str, target: str | None, reason: str) -> None:
        if rule_id not in RULES:
            raise ConfigError(f"baseline {path}: unknown rule ID {rule_id!r}")
        self.entries[(rule_id, target)] = reason

    def expects(self, rule_id: str, target: str | None) -> bool:
        return (rule_id, None) in self.entries or (rule_id, target) in self.entries

    def apply(self, results: list[dict[str, Any]]) -> None:
        """Mark results as expected failures or stale entries (in place)."""
        for result in results:
            if not self.expects(result["rule"], result["target"]):
                continue
            if result["status"] in ("failed", "warning", "error"):
                result["baseline"] = "expected"
            elif result["status"] == "passed":
                result["baseline"] = "stale"
