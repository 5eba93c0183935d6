"""report.json's encoder (conformance.report.json_writer.dumps_indented): json.dumps(indent=2) to the character."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.report.json_writer import dumps_indented

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: json writes NaN, Infinity, -Infinity
    | st.text()  # lone surrogates included
)
_KEYS = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=150)
@given(_VALUES)
def test_the_text_is_json_dumps_indent_2(value: Any) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_report_like_document_and_the_edge_values() -> None:
    document = {
        "results": [{"rule": "R-1", "evidence": [], "notes": {}, "s": 'é\u2028\ud800"\\\n'}],
        1: True,
        2.5: None,
        None: [math.nan, math.inf, -math.inf, -0.0, 10**30, 1e-7],
        False: ((), [[]], {"": {}}),
    }
    assert dumps_indented(document) == json.dumps(document, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", [{"a": object()}, [b"bytes"], {(1, 2): 1}, {1j: 2}])
def test_what_json_refuses_it_refuses(value: Any) -> None:
    with pytest.raises(TypeError) as json_error:
        json.dumps(value, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError) as ours:
        dumps_indented(value)
    assert str(ours.value) == str(json_error.value)
