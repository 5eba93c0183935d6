"""Target JSON: hostile nesting is bad JSON, never a RecursionError (conformance/host/_json.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.host import _json as target_json
from conformance.host._redact import Redactor
from conformance.report.html import render_html
from conformance.report.model import RuleResult, RunReport, RunVerdict, Status


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_up_to_the_limit_parses() -> None:
    assert target_json.loads(_nested(target_json.MAX_DEPTH)) is not None


@pytest.mark.parametrize("depth", [target_json.MAX_DEPTH + 1, 5_000, 200_000])
def test_deeper_nesting_is_a_value_error(depth: int) -> None:
    with pytest.raises(ValueError, match="nested"):
        target_json.loads(_nested(depth).encode())


def test_objects_count_as_levels_too() -> None:
    text = '{"a": ' * (target_json.MAX_DEPTH + 1) + "1" + "}" * (target_json.MAX_DEPTH + 1)
    with pytest.raises(target_json.NestedTooDeep):
        target_json.loads(text)


@given(st.recursive(st.none() | st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)))
def test_ordinary_documents_parse_as_json_does(value: object) -> None:
    text = json.dumps(value)
    assert target_json.loads(text) == json.loads(text)


def test_recorder_and_report_survive_a_deeply_nested_body() -> None:
    body = _nested(100_000).encode()
    excerpt = Redactor().body(body, "application/json", 2048)
    assert excerpt is not None and excerpt.startswith("[[[")
    exchange = {
        "method": "GET",
        "url": "https://127.0.0.1:9/x",
        "status": 200,
        "request_headers": {},
        "response_headers": {"content-type": "application/json"},
        "response_body": _nested(5_000),
        "elapsed_s": 0.1,
    }
    result = RuleResult.for_rule("TOK-01", Status.FAILED, evidence=(exchange,))
    document = render_html(RunReport(RunVerdict("NOT ACCEPTED", "TOK-01 failed"), (result,)))
    assert "[[[[" in document


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@given(
    st.recursive(st.none() | st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)),
    st.integers(min_value=0, max_value=6),
)
def test_the_depth_walk_counts_levels_as_a_recursive_one_does(value: object, limit: int) -> None:
    assert target_json.nested_deeper_than(value, limit) == (_depth(value) > limit)


def test_brackets_inside_strings_do_not_make_a_shallow_document_deep() -> None:
    text = json.dumps({"a": "[" * 1000, "b": ["{" * 1000]})  # more brackets than levels allowed: the walk decides
    assert target_json.loads(text) == json.loads(text)
