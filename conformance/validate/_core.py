"""Verdicts over one document, judged offline with the same functions the live checks call.

A verdict's status uses the report's words: ``passed``, ``failed`` (a MUST rule), ``warning`` (a SHOULD rule),
``skipped`` (the rule needs something the document alone does not say: the context a live run has, given here as
keyword arguments). INFO rules never fail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from conformance.core.rules import catalog

_LEVELS: dict[str, str] = {rule.id: rule.level.value for rule in catalog()}
# Vendor rules registered at run time (conformance.vendor_rules); looked up last.
EXTRA_LEVELS: dict[str, str] = {}


def level_of(rule: str) -> str:
    return _LEVELS.get(rule) or EXTRA_LEVELS.get(rule) or "MUST"


@dataclass(frozen=True)
class Verdict:
    """One rule over one document: its status and, unless it passed, why."""

    rule: str
    status: str  # passed | failed | warning | skipped
    message: str = ""

    @property
    def level(self) -> str:
        return level_of(self.rule)

    @property
    def broken(self) -> bool:
        """The document breaks the rule (whatever its level)."""
        return self.status in ("failed", "warning")

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "level": self.level, "status": self.status, "message": self.message}


def judged(rule: str, problems: Iterable[str], *, unjudged: str | None = None) -> Verdict:
    """``problems`` found → failed (warning for a SHOULD, passed for an INFO rule); none but part of the rule
    needs context the document lacks (``unjudged``, saying what) → skipped; otherwise passed."""
    found = [p for p in problems if p]
    if found:
        level = level_of(rule)
        status = "warning" if level == "SHOULD" else "passed" if level == "INFO" else "failed"
        return Verdict(rule, status, "; ".join(found))
    if unjudged:
        return Verdict(rule, "skipped", f"needs {unjudged}")
    return Verdict(rule, "passed")


def skipped(rule: str, why: str) -> Verdict:
    return Verdict(rule, "skipped", why)


def exit_code(verdicts: Iterable[Verdict], *, strict: bool = False) -> int:
    """As a live run: 1 when a MUST rule failed (or a SHOULD rule with ``strict``), else 0."""
    return int(any(v.status == "failed" or (strict and v.status == "warning") for v in verdicts))
