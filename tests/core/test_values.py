"""JSON value kinds as the contracts mean them, defined once for the reference services, the host and the judges."""

from __future__ import annotations

import re
from pathlib import Path

import conformance
from conformance.core._values import is_int, is_number

PACKAGE = Path(conformance.__file__).parent


def test_a_bool_is_no_json_integer_or_number() -> None:
    assert is_int(0) and is_int(-3) and not is_int(True) and not is_int(1.0) and not is_int("1")
    assert is_number(1.5) and is_number(2) and not is_number(False) and not is_number(None)


def test_the_integer_test_and_the_go_duration_parser_are_each_defined_once() -> None:
    sources = {path: path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")}
    integer_tests = [p for p, text in sources.items() if re.search(r"^def _?is_int\(", text, re.MULTILINE)]
    duration_parsers = [p for p, text in sources.items() if re.search(r"(?:h\|m\|s\|ms\|us\|µs)", text)]
    assert [p.relative_to(PACKAGE).as_posix() for p in integer_tests] == ["core/_values.py"]
    assert [p.relative_to(PACKAGE).as_posix() for p in duration_parsers] == ["host/_pace.py"]
