"""report.json: the machine-readable run report, and the source every other writer can re-render from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.report.model import RunReport

FORMAT_VERSION = 1


def report_schema() -> dict[str, Any]:
    """The shipped schema of report.json (its home is the result model, which checks every report it reads)."""
    from conformance.report.model import report_schema as schema

    return schema()


def validate_report(report: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` when ``report`` does not follow the published schema."""
    import jsonschema

    jsonschema.validate(report, report_schema())


def write_json(report: RunReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    text = json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
    # A lone surrogate (a hostile body, read back from a report's "\\ud800") cannot be UTF-8: written as the JSON
    # escape it came from (only strings can hold one), so the file stays valid UTF-8 and reads back the same.
    tmp.write_bytes(text.encode("utf-8", "backslashreplace"))
    tmp.replace(path)  # a reader never sees half a report


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def read_report(path: Path) -> RunReport:
    """report.json read back and checked against the shipped schema. Raises OSError, ValueError (not JSON) or
    :class:`conformance.report.model.InvalidReport` (not a report)."""
    from conformance.report.model import RunReport

    return RunReport.from_json(read_json(path))
