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
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from conformance.core._exceptions import ConfigError
from conformance.core.rules import RULES, SUITE_TARGET
from conformance.report.model import RuleResult, Status

_FAILING = (Status.FAILED, Status.WARNING, Status.ERROR)

TOP_KEYS = {"expected_failures", "expected"}
ENTRY_KEYS = {"rule", "target", "reason"}


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
        unknown = sorted(set(data) - TOP_KEYS)
        if unknown:
            raise ConfigError(f"baseline {path}: unknown key(s) {unknown}; known: expected_failures, [[expected]]")
        simple = data.get("expected_failures", [])
        if not isinstance(simple, list) or not all(isinstance(x, str) for x in simple):
            raise ConfigError(f"baseline {path}: expected_failures must be a list of rule IDs")
        for rule_id in simple:
            baseline._add(path, f"expected_failures entry {rule_id!r}", rule_id, None, "")
        tables = data.get("expected", [])
        if not isinstance(tables, list):
            raise ConfigError(f"baseline {path}: [[expected]] must be an array of tables")
        for number, table in enumerate(tables, 1):
            entry = f"[[expected]] entry {number}"
            if not isinstance(table, dict) or not isinstance(table.get("rule"), str):
                raise ConfigError(f'baseline {path}: {entry} needs rule = "ID"')
            entry += f" (rule {table['rule']!r})"
            unknown = sorted(set(table) - ENTRY_KEYS)
            if unknown:
                raise ConfigError(f"baseline {path}: {entry} has unknown key(s) {unknown}; known: rule, target, reason")
            target = table.get("target")
            if target is not None and not isinstance(target, str):
                raise ConfigError(f"baseline {path}: {entry}: target must be a string")
            baseline._add(path, entry, table["rule"], target or None, str(table.get("reason", "")))
        return baseline

    def _add(self, path: Path, entry: str, rule_id: str, target: str | None, reason: str) -> None:
        if rule_id not in RULES:
            raise ConfigError(f"baseline {path}: {entry}: unknown rule ID {rule_id!r}")
        if target is not None:
            known = sorted(set(SUITE_TARGET.values()))
            if target not in known:
                raise ConfigError(f"baseline {path}: {entry}: unknown target {target!r}; known: {', '.join(known)}")
            own = SUITE_TARGET[RULES[rule_id].suite]
            if target != own:
                raise ConfigError(f"baseline {path}: {entry}: {rule_id} is judged on target {own!r}, not {target!r}")
        self.entries[(rule_id, target)] = reason

    def expects(self, rule_id: str, target: str | None) -> bool:
        return (rule_id, None) in self.entries or (rule_id, target) in self.entries

    def apply(self, results: Iterable[RuleResult]) -> list[RuleResult]:
        """The results with expected failures and stale entries marked."""
        marked = []
        for result in results:
            if self.expects(result.rule, result.target) and result.status in _FAILING:
                result = replace(result, baseline="expected")
            elif self.expects(result.rule, result.target) and result.status is Status.PASSED:
                result = replace(result, baseline="stale")
            marked.append(result)
        return marked
