"""The variable named for a redaction marker in a reproducer: the field name just before the marker, as the
pattern that defines it finds it from the start of the text, whatever the text (a body of kilobytes included)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from conformance.report.placeholders import CRAFTED, placeholder

# The definition: the name that ends the text, searched for from its start.
_DEFINITION = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)\"?\s*[=:]\s*\"?$")

# What field names, separators and the words around them are made of, and what breaks them.
_PIECES = st.sampled_from(
    ["a", "Z", "_", "9", ".", "-", '"', " ", "\n", "\t", "\u2003", "=", ":", "&", "%3A", "{", ",", "é", "x1"]
)


def _expected(context: str) -> str:
    found = _DEFINITION.search(context)
    name = found.group(1) if found else "secret"
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() or "SECRET"


@given(st.lists(_PIECES, max_size=40).map("".join))
def test_the_name_before_a_marker_is_the_one_the_definition_finds(context: str) -> None:
    assert placeholder(context, None) == _expected(context)
    assert placeholder(context, None, CRAFTED) == "CRAFTED_" + _expected(context)


def test_names_from_forms_json_and_urls() -> None:
    assert placeholder("grant_type=authorization_code&code=", None) == "CODE"
    assert placeholder('{"client_id": "abc", "access_token": "', None) == "ACCESS_TOKEN"
    assert placeholder("https://as.example/logout?id_token_hint=", None) == "ID_TOKEN_HINT"
    assert placeholder("refresh_token:\n", None) == "REFRESH_TOKEN"  # $ before a final line feed
    assert placeholder("no field here ", None) == "SECRET"
    assert placeholder("Authorization: Bearer ", "Authorization") == "ACCESS_TOKEN"
    assert placeholder("x-api-key: ", "X-Api-Key") == "X_API_KEY"


def test_the_name_ending_a_long_body() -> None:
    # Long words of field-name characters before it: the run of such characters ending the text starts late.
    body = ("abcdefghij" * 40 + " ") * 200 + '"token": "'
    assert placeholder(body, None) == "TOKEN" == _expected(body)
