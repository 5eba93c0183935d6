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
    # Each level opens with a bracket of the text: with no more brackets than levels allowed (most documents), the
    # walk cannot find too many (it was a visible share of every recorded JSON body's cost).
    if _brackets(data) > MAX_DEPTH and nested_deeper_than(value, MAX_DEPTH):
        raise NestedTooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _brackets(data: str | bytes | bytearray) -> int:
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` has more than ``limit`` levels of arrays and objects (iterative: any depth is safe)."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:  # one level at a time, holding only its arrays and objects
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            below += [
                child for child in (item.values() if isinstance(item, dict) else item) if isinstance(child, dict | list)
            ]
        level = below
    return False
