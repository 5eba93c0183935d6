"""The profile tool's designation and declaration: PROF-01 … PROF-05."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from conformance import expect, observe, rule
from conformance.config import Settings
from conformance.judges.profile import ProfileToolSearch, declaration_problems
from conformance.suites._tool_access import vendor_of


@rule("PROF-01")
def test_at_most_one_profile_tool(profile_search: ProfileToolSearch, conformance_settings: Settings) -> None:
    problems = profile_search.problems()
    expect(not problems, "; ".join(problems))
    if profile_search.tool is None:
        vendor = vendor_of(conformance_settings)
        observe(
            f'no tool carries _meta["{vendor}/profile"]: true (INFO: accounts still connect, but labels, '
            "recognition and duplicate detection are less reliable)"
        )
    else:
        observe(f"profile tool: {profile_search.names[0]!r}")


# The part of the declaration each rule reads, shown on a pass so that the report says what was checked.
_DECLARED = {
    "PROF-02": "inputSchema",
    "PROF-03": "annotations",
    "PROF-04": "securitySchemes",
    "PROF-05": "outputSchema",
}


def _judge(tool: Mapping[str, Any], rule_id: str) -> None:
    problems = declaration_problems(tool)[rule_id]
    expect(not problems, f"{tool.get('name')!r}: " + "; ".join(problems))
    part = _DECLARED[rule_id]
    shown = json.dumps(tool.get(part), sort_keys=True, ensure_ascii=False)
    observe(f"{tool.get('name')!r} declares {part} {shown[:300]}{'…' if len(shown) > 300 else ''}")


@rule("PROF-02")
def test_input_schema_is_empty_object(profile_tool: Mapping[str, Any]) -> None:
    _judge(profile_tool, "PROF-02")


@rule("PROF-03")
def test_annotations_read_only_closed_world(profile_tool: Mapping[str, Any]) -> None:
    _judge(profile_tool, "PROF-03")


@rule("PROF-04")
def test_security_schemes_declare_oauth2(profile_tool: Mapping[str, Any]) -> None:
    _judge(profile_tool, "PROF-04")


@rule("PROF-05")
def test_output_schema_is_the_profile_record(profile_tool: Mapping[str, Any]) -> None:
    _judge(profile_tool, "PROF-05")
