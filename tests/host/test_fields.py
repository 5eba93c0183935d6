"""Reading target JSON: a missing or mistyped field is an InvalidResponse naming it (and, for a prerequisite, the
rule it blocks on), never a KeyError."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from conformance.host import InvalidResponse
from conformance.host.fields import JsonMember, as_int, as_str, as_strings, json_field, json_get

DOC = {"data": [{"id": "cmp_1", "n": 3, "flag": True, "x": 1.5}], "object": "list"}


def test_present_fields_of_the_right_type_are_returned() -> None:
    assert json_field(DOC, "data", 0, "id", type=str) == "cmp_1"
    assert json_field(DOC, "data", -1, "n", type=int) == 3
    assert json_field(DOC, "data", 0, "x", type=float) == 1.5
    assert json_field(DOC, "data", 0, "n", type=float) == 3  # an integer is a JSON number
    assert json_field(DOC, type=dict) is DOC


@pytest.mark.parametrize(
    ("doc", "path", "kind", "words"),
    [
        ({}, ("id",), str, "'id' is missing"),
        ([], ("id",), str, "the body is [], expected an object"),
        ("ok", ("data", 0), None, "expected an object"),
        ({"data": {}}, ("data", 0), None, "'data' is {}, expected an array"),
        ({"data": []}, ("data", 0, "id"), str, "has no item 0"),
        ({"id": 7}, ("id",), str, "'id' is 7, expected a string"),
        ({"id": None}, ("id",), str, "'id' is null, expected a string"),
        ({"n": True}, ("n",), int, "'n' is True, expected an integer"),
        (None, (), dict, "the body is null, expected an object"),
    ],
)
def test_missing_or_mistyped_fields_fail_with_their_path(
    doc: Any, path: tuple[Any, ...], kind: Any, words: str
) -> None:
    with pytest.raises(InvalidResponse, match=r"^the campaign: ") as caught:
        json_field(doc, *path, type=kind, what="the campaign")
    assert words in caught.value.message
    assert json_get(doc, *path, type=kind, default="fallback") == "fallback"


def test_a_prerequisite_field_blocks_instead() -> None:
    with pytest.raises(InvalidResponse) as caught:
        json_field({}, "resource", type=str, blocked_by="AUTH-PRM-01")
    assert caught.value.blocked_by == "AUTH-PRM-01" and "'resource' is missing" in caught.value.message


def test_an_empty_value_can_be_refused() -> None:
    with pytest.raises(InvalidResponse, match="'id' is empty"):
        json_field({"id": ""}, "id", type=str, empty=False)


def test_a_response_is_parsed_and_named() -> None:
    request = httpx.Request("POST", "https://p.example/v1/campaigns")
    with pytest.raises(InvalidResponse, match=r"^POST /v1/campaigns → 200: 'id' is missing"):
        json_field(httpx.Response(200, json={}, request=request), "id", type=str)
    with pytest.raises(InvalidResponse, match="the body is not JSON"):
        json_field(httpx.Response(200, content=b"{oops", request=request), "id")
    assert json_field(httpx.Response(201, json={"id": "a"}, request=request), "id", type=str) == "a"


def test_a_json_member_reads_one_typed_member_or_none() -> None:
    @dataclass
    class Doc:
        body: Any
        name = JsonMember(as_str, source="body")
        methods = JsonMember(as_strings, "methods_supported", source="body")
        seconds = JsonMember(as_int, "expires_in", source="body")

    doc = Doc({"name": "n", "methods_supported": ["a", "b"], "expires_in": 3.9})
    assert (doc.name, doc.methods, doc.seconds) == ("n", ["a", "b"], 3)
    wrong = Doc({"name": 1, "methods_supported": ["a", 2], "expires_in": True})
    assert (wrong.name, wrong.methods, wrong.seconds) == (None, None, None)
    assert Doc(None).name is None and Doc(["name"]).name is None  # no object at all
    assert isinstance(Doc.name, JsonMember)
    with pytest.raises(AttributeError, match="read from body"):
        doc.name = "other"
