"""report.json: the machine-readable run report, and the source every other writer can re-render from."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterator
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
    """Raise ``jsonschema.ValidationError`` when ``report`` does not follow the published schema: what
    ``jsonschema.validate`` does, with the schema itself checked once per process instead of at every report."""
    import jsonschema

    error = jsonschema.exceptions.best_match(_report_validator().iter_errors(report))
    if error is not None:
        raise error


@functools.cache
def _report_validator() -> Any:
    import jsonschema

    schema = report_schema()
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


# ``json.dumps`` with ``indent`` runs the pure-Python encoder, several times slower on a run's evidence than the C
# encoder, which lays everything on one line: the layout below is made of one-line pieces the C encoder writes. No
# check for cycles: a report is made of JSON values (none can hold itself), and the check costs a tenth of the work.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), check_circular=False).encode


def pieces(document: dict[str, Any]) -> Iterator[str]:
    """A report's text in pieces: a line per top-level member, per result and per exchange of a result's evidence
    (a diff or a grep of two reports then reads result by result, exchange by exchange). Written piece by piece, a
    report of megabytes is never one string."""
    if not document:
        yield "{}"
        return
    for number, (key, value) in enumerate(document.items()):
        yield f"{',' if number else '{'}\n  {_ENCODE(key)}: "
        if key == "results" and isinstance(value, list) and value:
            shared = _shared_exchanges(value)
            for index, result in enumerate(value):
                yield ",\n    " if index else "[\n    "
                yield from _result(result, shared)
            yield "\n  ]"
        else:
            yield _ENCODE(value)
    yield "\n}"


def dumps(document: dict[str, Any]) -> str:
    """The text :func:`write_json` writes (without its last newline)."""
    return "".join(pieces(document))


def _shared_exchanges(results: list[Any]) -> dict[int, list[Any]]:
    """The exchanges that are evidence for several results (one object in the document, one check deciding many
    rules), by identity: [uses left, text]. Each one's text is made once and kept until its last use only."""
    uses = Counter(
        id(exchange)
        for result in results
        if isinstance(result, dict) and isinstance(result.get("evidence"), list)
        for exchange in result["evidence"]
    )
    return {ident: [count, None] for ident, count in uses.items() if count > 1}


def _exchange(exchange: Any, shared: dict[int, list[Any]]) -> str:
    known = shared.get(id(exchange))  # the document holds every object it has: no id is reused meanwhile
    if known is None:
        return _ENCODE(exchange)
    if known[1] is None:
        known[1] = _ENCODE(exchange)
    known[0] -= 1
    if not known[0]:
        del shared[id(exchange)]
    text: str = known[1]
    return text


def _result(result: Any, shared: dict[int, list[Any]]) -> Iterator[str]:
    evidence = result.get("evidence") if isinstance(result, dict) else None
    if not evidence or not isinstance(evidence, list):
        yield _ENCODE(result)
        return
    head = _ENCODE({k: v for k, v in result.items() if k != "evidence"})
    yield f'{head[:-1]}{", " if len(head) > 2 else ""}"evidence": ['
    for index, exchange in enumerate(evidence):
        yield ",\n      " if index else "\n      "
        yield _exchange(exchange, shared)
    yield "\n    ]}"


def write_json(report: RunReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    # A lone surrogate (a hostile body, read back from a report's "\\ud800") cannot be UTF-8: written as the JSON
    # escape it came from (only strings can hold one), so the file stays valid UTF-8 and reads back the same.
    with tmp.open("wb") as out:
        for piece in pieces(report.to_json()):
            out.write(piece.encode("utf-8", "backslashreplace"))
        out.write(b"\n")
    tmp.replace(path)  # a reader never sees half a report


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def read_report(path: Path) -> RunReport:
    """report.json read back and checked against the shipped schema. Raises OSError, ValueError (not JSON) or
    :class:`conformance.report.model.InvalidReport` (not a report)."""
    from conformance.report.model import RunReport

    return RunReport.from_json(read_json(path))
