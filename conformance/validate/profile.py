"""Offline judging of the profile tool: its declaration (PROF-01 … 05) and a result (PROF-06, 07, 10, 12, 14)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.host.profile import (
    declaration_problems,
    find_profile_tool,
    id_encoding_problems,
    id_problems,
    invented_field_problems,
    judge_result,
    placeholder_problems,
)
from conformance.validate._core import Verdict, judged, skipped

DECLARATION_RULES = ("PROF-02", "PROF-03", "PROF-04", "PROF-05")


def declaration(tools: Sequence[Any], *, vendor: str = "openai") -> list[Verdict]:
    """PROF-01 over a listing, and PROF-02 … 05 over the one tool marked ``_meta["<vendor>/profile"]: true``."""
    search = find_profile_tool(tools, vendor)
    verdicts = [judged("PROF-01", search.problems())]
    if search.tool is None:
        why = "several tools carry the profile marker" if search.marked else "no tool is marked as the profile tool"
        return verdicts + [skipped(rule, why) for rule in DECLARATION_RULES]
    problems = declaration_problems(search.tool)
    name = search.tool.get("name")
    return verdicts + [
        judged(rule, [f"{name!r}: " + "; ".join(problems[rule])] if problems[rule] else [])
        for rule in DECLARATION_RULES
    ]


def profile_result(document: Any, *, known: Mapping[str, str] | None = None) -> list[Verdict]:
    """A tools/call result of the profile tool. ``known``: the account's email and display name, when known
    (``{"email": ..., "name": ...}``), for PROF-10."""
    verdicts = judge_result(document, known=known)
    return [judged(rule, problems) for rule, problems in verdicts.problems.items()]


def profile_record(document: Any, *, known: Mapping[str, str] | None = None) -> list[Verdict]:
    """A bare profile record (``structuredContent`` of the result): PROF-07, 10, 12, 14."""
    return [
        judged("PROF-07", id_problems(document)),
        judged("PROF-10", id_encoding_problems(document, known=known)),
        judged("PROF-12", invented_field_problems(document)),
        judged("PROF-14", placeholder_problems(document)),
    ]
