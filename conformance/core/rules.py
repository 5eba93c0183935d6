"""The rule catalog: every rule the harness certifies, keyed by its stable ID.

Checks declare the rules they decide with :func:`rule`; an unknown ID fails at import time, so the catalog and the
checks cannot drift apart. A leaf: it imports nothing of the package but the catalog data and the exceptions
(loading every check and listing mutants live in :mod:`conformance.suites._checks`, beside the CLI), and pytest only
when a check is declared.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from conformance.core._catalog import CATALOG
from conformance.core._exceptions import UnknownRuleError
from conformance.core.targets import SUITE_NAMES
from conformance.core.targets import SUITE_TARGET as SUITE_TARGET  # re-exported: which target each suite certifies

SUITES: tuple[str, ...] = SUITE_NAMES  # the suites, in the contract's order (declared in conformance.core.targets)

DOCUMENTS: dict[str, str] = {
    "A": "Tool-Server Authorization Contract (000_0337f9e2b7ef4d29.txt)",
    "P": "Platform API (001_ac3353e89bc660bb.txt)",
    "C": "Image Compression API (002_62e67b920237d681.txt)",
}


class Level(StrEnum):
    MUST = "MUST"  # a failure fails the run
    SHOULD = "SHOULD"  # a failure is a warning (fails only with --strict)
    INFO = "INFO"  # observed and reported, never fails


class Status(StrEnum):
    """What a rule came to, in a run or over one document (the report's words)."""

    PASSED = "passed"
    FAILED = "failed"  # a MUST rule failed
    WARNING = "warning"  # a SHOULD rule failed
    SKIPPED = "skipped"  # could not run: a need is missing
    BLOCKED = "blocked"  # a prerequisite rule failed
    ERROR = "error"  # the harness itself failed


def level_status(failed_status: Status, level: Level, strict: bool = False) -> Status:
    """What a failure of a rule at ``level`` becomes: failed (MUST), warning (SHOULD), passed (INFO)."""
    if failed_status is not Status.FAILED:
        return failed_status
    if level is Level.SHOULD:
        return Status.FAILED if strict else Status.WARNING
    if level is Level.INFO:
        return Status.PASSED
    return Status.FAILED


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    suite: str
    title: str
    text: str
    source: str
    needs: str | None = None

    @property
    def document(self) -> str | None:
        """The contract document the source points to, when it names one."""
        return DOCUMENTS.get(self.source.split(" ", 1)[0])


RULES: dict[str, Rule] = {
    str(entry["id"]): Rule(
        id=str(entry["id"]),
        level=Level(str(entry["level"])),
        suite=str(entry["suite"]),
        title=str(entry["title"]),
        text=str(entry["text"]),
        source=str(entry["source"]),
        needs=entry["needs"],
    )
    for entry in CATALOG
}

# Rules about the harness itself rather than the target: proven by the project's own tests, reported as such. A
# harness rule may have a check that shows the host's behaviour in the run; it never fails the target.
HARNESS_RULES: dict[str, str] = {
    "AUTH-ISS-03": "a rule about this harness as a host (it refuses an authorization response whose iss is missing or "
    "differs while advertised, and says why): every run's check self-tests the host's callback validation and "
    "reports the real responses it refused, proven by its own test suite (tests/host/test_oauth.py); the "
    "authorization server's defect is judged under AUTH-ISS-01 and AUTH-ISS-02",
    "RL-06": "a rule about this harness as a client (Retry-After, backoff with jitter, bounds, no retry of "
    "quota errors), proven by its own test suite (tests/host/test_retry.py, tests/suites/platform/"
    "test_host_client.py), not a property of the target",
}

# Rule IDs that have at least one check, filled as suite modules are imported.
IMPLEMENTED: dict[str, list[str]] = {}


def get_rule(rule_id: str) -> Rule:
    try:
        return RULES[rule_id]
    except KeyError:
        raise UnknownRuleError(f"unknown rule ID {rule_id!r}: not in the catalog (conformance rules)") from None


F = TypeVar("F", bound=Callable[..., Any])


def rule(*rule_ids: str) -> Callable[[F], F]:
    """Declare the rule(s) a check decides. Adds the ``rule`` marker; unknown IDs raise at import."""
    if not rule_ids:
        raise UnknownRuleError("@rule needs at least one rule ID")
    for rule_id in rule_ids:
        get_rule(rule_id)

    def decorate(func: F) -> F:
        import pytest  # only checks need it: the catalog itself is read without pytest (``conformance report``)

        for rule_id in rule_ids:
            IMPLEMENTED.setdefault(rule_id, []).append(f"{func.__module__}.{func.__qualname__}")
        marked: F = pytest.mark.conformance_rule(*rule_ids)(func)
        if inspect.iscoroutinefunction(func):  # an async check: pytest-asyncio runs it (in its strict mode too)
            marked = pytest.mark.asyncio(marked)
        return marked

    return decorate


def rules_of(item: Any) -> list[str]:
    """The rule IDs a collected check (a pytest item) decides: those its :func:`rule` markers name."""
    return [rule_id for mark in item.iter_markers("conformance_rule") for rule_id in mark.args]
