"""Problems and verdicts over one document, in the verdict layer's words: the report's :class:`Status` at the
catalog's :class:`Level`.

A :class:`Problem` is one defect, carrying the rule it breaks; a :class:`Verdict` is one rule over one document.

A document verdict is ``passed``, ``failed`` (a MUST rule), ``warning`` (a SHOULD rule), or ``skipped`` (the rule
needs something the document alone does not say: the context a live run has, given here as keyword arguments).
INFO rules never fail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from conformance.core.rules import RULES, Level, Status, level_status


def level_of(rule: str) -> Level:
    """The rule's level in the catalog (vendor rules registered at run time included); MUST for an unknown ID."""
    known = RULES.get(rule)
    return known.level if known is not None else Level.MUST


@dataclass(frozen=True)
class Problem:
    """One defect: the rule it breaks, where it is, and what is wrong."""

    rule: str
    where: str  # e.g. "tool 'search' (tools[0]).inputSchema"; empty: the document as a whole
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


def describe(problems: Iterable[Problem], limit: int = 20) -> str:
    """A one-line verdict text for ``fail()``; long lists are cut with a count of the rest."""
    items = [str(p) for p in problems]
    text = "; ".join(items[:limit])
    return text + (f"; … and {len(items) - limit} more" if len(items) > limit else "")


@dataclass(frozen=True)
class Verdict:
    """One rule over one document: its status and, unless it passed, why."""

    rule: str
    status: Status
    message: str = ""

    @property
    def level(self) -> Level:
        return level_of(self.rule)

    @property
    def broken(self) -> bool:
        """The document breaks the rule (whatever its level)."""
        return self.status in (Status.FAILED, Status.WARNING)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "level": str(self.level), "status": str(self.status), "message": self.message}

    def problem(self) -> Problem | None:
        """What the document gets wrong about the rule, when it breaks it."""
        return Problem(self.rule, "", self.message) if self.broken else None


def judged(rule: str, problems: Iterable[str], *, unjudged: str | None = None) -> Verdict:
    """``problems`` found → failed (warning for a SHOULD, passed for an INFO rule); none but part of the rule
    needs context the document lacks (``unjudged``, saying what) → skipped; otherwise passed."""
    found = [p for p in problems if p]
    if found:
        return Verdict(rule, level_status(Status.FAILED, level_of(rule)), "; ".join(found))
    if unjudged:
        return Verdict(rule, Status.SKIPPED, f"needs {unjudged}")
    return Verdict(rule, Status.PASSED)


def skipped(rule: str, why: str) -> Verdict:
    return Verdict(rule, Status.SKIPPED, why)


def noted(verdict: Verdict, note: str) -> Verdict:
    """A passing verdict with what the rule says is reported (a failing or skipped one keeps its own message)."""
    return Verdict(verdict.rule, verdict.status, note) if verdict.status is Status.PASSED and note else verdict


def exit_code(verdicts: Iterable[Verdict], *, strict: bool = False) -> int:
    """As a live run: 1 when a MUST rule failed (or a SHOULD rule with ``strict``), else 0."""
    return int(any(v.status == Status.FAILED or (strict and v.status == Status.WARNING) for v in verdicts))
