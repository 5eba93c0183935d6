"""report.json: the machine-readable run report, and the source every other writer can re-render from."""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.report.model import RunReport

FORMAT_VERSION = 1


def report_schema() -> dict[str, Any]:
    text = resources.files("conformance").joinpath("schemas/report.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def validate_report(report: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` when ``report`` does not follow the published schema."""
    import jsonschema

    jsonschema.validate(report, report_schema())


def write_json(report: RunReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    text = dumps_indented(report.to_json()) + "\n"
    # A lone surrogate (a hostile body, read back from a report's "\\ud800") cannot be UTF-8: written as the JSON
    # escape it came from (only strings can hold one), so the file stays valid UTF-8 and reads back the same.
    tmp.write_bytes(text.encode("utf-8", "backslashreplace"))
    tmp.replace(path)  # a reader never sees half a report


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, the same text, about three times faster: with ``indent``
    json falls back to its pure-Python encoder, a generator per value (a run's report.json holds ~70 000 values).
    The same strings (json's own C escaper), numbers, key conversions and TypeErrors."""
    out: list[str] = []
    _encode(value, out, "\n")
    return "".join(out)


_ENCODE_STRING = json.encoder.encode_basestring  # what json.dumps(..., ensure_ascii=False) escapes strings with


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return float.__repr__(value)


def _encode(value: Any, out: list[str], newline: str) -> None:
    """Append ``value`` to ``out``; ``newline``: a line break and the indentation of the value's own line."""
    if isinstance(value, str):
        out.append(_ENCODE_STRING(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            separator = "," + inner
            _encode(item, out, inner)
        out.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        separator = "{" + inner
        for key, item in value.items():
            out.append(separator)
            separator = "," + inner
            out.append(_ENCODE_STRING(_key(key)))
            out.append(": ")
            _encode(item, out, inner)
        out.append(newline + "}")
    else:
        raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def read_report(path: Path) -> RunReport:
    """report.json read back and checked against the shipped schema. Raises OSError, ValueError (not JSON) or
    :class:`conformance.report.model.InvalidReport` (not a report)."""
    from conformance.report.model import RunReport

    return RunReport.from_json(read_json(path))
