"""Time the declaration checks over 1,000 realistic tools and one result per tool (target: < 2 s, linear).

Every tool gets its own schemas (no two alike, so the validator cache cannot hide compile costs); 2,000 tools are
timed too, to show the growth is linear. Run: ``.venv/bin/python benchmarks/declarations_1000_tools.py``.
"""

from __future__ import annotations

import random
import time
from typing import Any

from conformance.judges.declarations import DeclarationChecker, check_challenge_result
from conformance.judges.profile import declaration_problems, find_profile_tool, judge_result

VERBS = ["list", "get", "create", "update", "cancel", "search", "archive", "export"]
NOUNS = ["orders", "invoices", "customers", "tickets", "projects", "documents", "campaigns", "shipments"]
LEAVES: list[tuple[dict[str, Any], Any]] = [
    ({"type": "string", "minLength": 1, "maxLength": 200}, "abc"),
    ({"type": "integer", "minimum": 0}, 7),
    ({"type": "number", "minimum": 0, "maximum": 1e6}, 12.5),
    ({"type": "boolean"}, True),
    ({"type": "string", "enum": ["open", "closed", "pending"]}, "open"),
    ({"type": "string", "format": "date-time"}, "2026-01-01T00:00:00Z"),
    ({"type": "array", "items": {"type": "string"}, "maxItems": 50}, ["a", "b"]),
    ({"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4}$"}, "AB-1234"),
]


def make_tool(i: int, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{i}"
    fields = {f"field_{i}_{k}": rng.choice(LEAVES) for k in range(rng.randint(3, 8))}
    item = {
        "type": "object",
        "properties": {k: schema for k, (schema, _) in fields.items()},
        "required": sorted(fields)[:2],
        "additionalProperties": False,
    }
    output = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": item}, "next_cursor": {"type": ["string", "null"]}},
        "required": ["items"],
        "additionalProperties": False,
    }
    read_only = rng.random() < 0.6
    tool = {
        "name": name,
        "description": f"{name.replace('_', ' ').capitalize()} for the signed-in customer. " * 3,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 500},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "cursor": {"type": "string"},
            },
            "additionalProperties": False,
        },
        "outputSchema": output,
        "annotations": {"readOnlyHint": read_only, "destructiveHint": not read_only, "openWorldHint": False},
        "securitySchemes": [{"type": "oauth2", "scopes": ["read" if read_only else "write"]}],
        "_meta": {"openai/profile": False, "openai/outputTemplate": f"ui://widget/{i}.html"},
    }
    rows = [{k: value for k, (_, value) in fields.items()} for _ in range(rng.randint(1, 20))]
    result = {
        "content": [{"type": "text", "text": f"{len(rows)} {name} found"}],
        "structuredContent": {"items": rows, "next_cursor": None},
        "isError": False,
    }
    return tool, result


def run(count: int) -> dict[str, float]:
    rng = random.Random(count)
    pairs = [make_tool(i, rng) for i in range(count)]
    tools = [t for t, _ in pairs]
    timings: dict[str, float] = {}
    checker = DeclarationChecker()
    started = time.perf_counter()
    problems = checker.check_tools(tools)
    timings["declarations"] = time.perf_counter() - started
    assert not problems, problems[:3]
    started = time.perf_counter()
    for tool, result in pairs:
        assert not checker.check_result(tool["name"], result)
    timings["results"] = time.perf_counter() - started
    started = time.perf_counter()
    for tool, result in pairs:
        checker.check_result(tool["name"], result)
    timings["results (again)"] = time.perf_counter() - started
    started = time.perf_counter()
    find_profile_tool(tools)
    timings["profile marker scan"] = time.perf_counter() - started
    timings["total"] = sum(timings.values())
    return timings


def main() -> None:
    challenge = {
        "isError": True,
        "content": [{"type": "text", "text": "Sign in"}],
        "_meta": {"mcp/www_authenticate": ['Bearer resource_metadata="https://r/m", error="e", error_description="d"']},
    }
    profile_tool = {
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "outputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "minLength": 1, "pattern": "\\S"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    }
    started = time.perf_counter()
    for _ in range(1000):
        check_challenge_result(challenge)
        judge_result(
            {"isError": False, "structuredContent": {"id": "u1"}, "content": [{"type": "text", "text": '{"id":"u1"}'}]}
        )
    extras = time.perf_counter() - started
    started = time.perf_counter()
    declaration_problems(profile_tool)
    profile_decl = time.perf_counter() - started

    for count in (1000, 2000):
        cpu = time.process_time()
        timings = run(count)
        line = ", ".join(f"{k} {v:.3f}s" for k, v in timings.items())
        # CPU time too: on a shared machine wall time also measures the neighbours.
        print(f"{count} tools: {line} (CPU {time.process_time() - cpu:.3f}s incl. generating the tools)")
    print(f"1000 challenge checks + 1000 profile result judgements: {extras:.3f}s")
    print(f"profile declaration rules (PROF-02..05, one tool): {profile_decl:.3f}s")


if __name__ == "__main__":
    main()
