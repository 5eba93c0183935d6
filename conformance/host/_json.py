"""JSON from targets. Hostile nesting is bad JSON, like any other: never a RecursionError inside a check, a
recorder or a report writer.

Real hosts cap nesting too (serde_json at 128 levels); past ``MAX_DEPTH`` a document is refused as not JSON, which
also keeps the recursive code that walks parsed documents (schema checks, redaction, pretty printing) safe.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 256


class NestedTooDeep(ValueError):
    """A JSON document nested deeper than the harness parses (a ``ValueError``, as a syntax error would be)."""


def loads(data: str | bytes | bytearray, **kwargs: Any) -> Any:
    """``json.loads`` for target-supplied text; raises ``ValueError`` for bad JSON, including :class:`NestedTooDeep`."""
    try:
        value = json.loads(data, **kwargs)
    except RecursionError:
        raise NestedTooDeep(f"JSON nested too deeply to parse (over {MAX_DEPTH} levels)") from None
    if nested_deeper_than(value, MAX_DEPTH):
        raise NestedTooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` has more than ``limit`` levels of arrays and objects (iterative: any depth is safe)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
