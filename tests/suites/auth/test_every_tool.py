"""Where a rule says "every tool" or "each response", the verdict names every offending tool, not the
first twenty problems' tools (a message cut at a fixed count would hide the others)."""

from __future__ import annotations

from conformance.judges.declarations import Problem, tool_label
from conformance.suites.auth.test_tools import every_offender


def test_every_offending_tool_is_named_beyond_the_problem_limit() -> None:
    problems = [Problem("AUTH-TOOL-01", tool_label({"name": f"t{i:02d}"}, i), "has no description") for i in range(25)]
    message = every_offender(problems)
    assert message.startswith("25 offending tool(s) ")
    assert all(f"'t{i:02d}'" in message.split(":", 1)[0] for i in range(25)), message
    assert "… and 5 more" in message


def test_results_name_their_tool_and_a_clean_run_says_nothing_extra() -> None:
    problems = [Problem("AUTH-TOOL-05", "result of 'list_orders'", "total_cents is not an integer")]
    assert "['list_orders']" in every_offender([f"{problems[0]} (linked account)"])
    assert every_offender([]) == ""
