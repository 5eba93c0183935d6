"""The profile tool rules, driven by Hypothesis against oracles restated here (or known by construction)."""

from __future__ import annotations

import copy
import json
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from conformance.judges.profile import (
    BLANK_EMPTY,
    BLANK_INVISIBLE,
    BLANK_NULL,
    BLANK_UNICODE,
    BLANK_WHITESPACE,
    PH_DASHES,
    PH_EMAIL,
    PH_NAMED,
    PH_URL,
    PH_WORDS,
    PH_ZERO,
    SCHEMA_PATH,
    annotation_problems,
    blank_form,
    declaration_problems,
    find_profile_tool,
    id_encoding_problems,
    id_local_part_notes,
    id_problems,
    input_schema_problems,
    invented_field_problems,
    judge_result,
    output_schema_problems,
    placeholder_form,
    placeholder_problems,
    record_schema,
    result_problems,
    security_problems,
    validate_profile_record,
)

MISSING: Any = object()
HYPOTHESIS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ("id", "name", "email", "nickname")
PLACEHOLDER_WORDS = ["", " ", "unknown", "Unknown", "N/A", "n/a", "none", "NONE", "null", "undefined", "-", "(none)"]

CANONICAL = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "minLength": 1, "pattern": "\\S"},
        "name": {"type": "string"},
        "email": {"type": "string"},
        "nickname": {"type": "string"},
    },
    "required": ["id"],
    "additionalProperties": False,
}
PROFILE_TOOL = {
    "name": "whoami",
    "description": "Who is signed in.",
    "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    "outputSchema": CANONICAL,
    "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
    "securitySchemes": [{"type": "oauth2", "scopes": ["profile"]}],
    "_meta": {"openai/profile": True},
}

# ------------------------------------------------------------------------------------------- oracles


def has_visible_char(value: str) -> bool:
    return any(not ch.isspace() for ch in value)


def oracle_record_ok(record: Any) -> bool:
    if type(record) is not dict or "id" not in record or not set(record) <= set(FIELDS):
        return False
    if type(record["id"]) is not str or not has_visible_char(record["id"]):
        return False
    return all(type(record[k]) is str for k in FIELDS[1:] if k in record)


def oracle_invented(record: dict[str, Any]) -> set[str]:
    """PROF-12: null, empty, whitespace-only or invisible only (format characters such as U+200B)."""
    invisible = lambda c: c.isspace() or unicodedata.category(c) == "Cf"  # noqa: E731
    blank = {k for k in FIELDS[1:] if type(record.get(k)) is str and all(map(invisible, record[k]))}
    return blank | {k for k in FIELDS[1:] if k in record and record[k] is None}


def oracle_placeholder(record: dict[str, Any]) -> set[str]:
    """PROF-14: a word standing for a missing value, brackets around it and case aside."""
    words = {"unknown", "n/a", "n.a.", "none", "null", "undefined", "-", "--", "\u2013", "\u2014", "?", "??"}
    words |= {"not available", "not provided", "not set", "no name", "no email", "no nickname", "tbd", "placeholder"}
    return {
        k
        for k in FIELDS[1:]
        if type(record.get(k)) is str and record[k].strip().strip("()[]<>{}").strip().casefold() in words
    }


# ---------------------------------------------------------------------------------------- generators

ids = st.one_of(
    st.text(min_size=1, max_size=12),
    st.sampled_from(["", " ", "\t\n", "\u00a0", "usr_01", "42", " a "]),
    st.integers(),
    st.none(),
    st.just(MISSING),
)
display = st.one_of(
    st.text(max_size=12), st.sampled_from(PLACEHOLDER_WORDS), st.none(), st.integers(), st.just(MISSING)
)


@st.composite
def records(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([[], "u1", 1, None, [{"id": "u1"}]]))
    record: dict[str, Any] = {}
    for key, strategy in (("id", ids), ("name", display), ("email", display), ("nickname", display)):
        value = draw(strategy)
        if value is not MISSING:
            record[key] = value
    if draw(st.integers(0, 4)) == 0:
        record[draw(st.sampled_from(["extra", "profile", "Id", "sub"]))] = draw(st.text(max_size=3))
    return record


# --------------------------------------------------------------------------------------- record rules


def test_shipped_schema_is_a_valid_2020_12_schema() -> None:
    Draft202012Validator.check_schema(record_schema())
    assert json.loads(SCHEMA_PATH.read_text())["required"] == ["id"]


@HYPOTHESIS
@given(records())
def test_record_validator_matches_the_oracle(record: Any) -> None:
    assert (not validate_profile_record(record)) == oracle_record_ok(record)


@HYPOTHESIS
@given(records())
def test_id_rule_matches_the_oracle(record: Any) -> None:
    expected = type(record) is dict and type(record.get("id")) is str and has_visible_char(record["id"])
    assert (not id_problems(record)) == expected


@HYPOTHESIS
@given(records())
def test_invented_fields_match_the_oracle(record: Any) -> None:
    found = invented_field_problems(record)
    expected = oracle_invented(record) if type(record) is dict else set()
    assert {m.split(" ", 1)[0] for m in found} == expected


@HYPOTHESIS
@given(records())
def test_placeholders_match_the_oracle(record: Any) -> None:
    found = {m.split(" ", 1)[0] for m in placeholder_problems(record)}
    expected = oracle_placeholder(record) if type(record) is dict else set()
    assert found >= expected  # the named words at least; the wider forms have their own table below
    assert all(type(record[k]) is str and record[k].strip() for k in found)


@pytest.mark.parametrize(
    ("value", "form"),
    [
        ("N/A", PH_NAMED),
        ("UNKNOWN", PH_NAMED),
        ("[none]", PH_NAMED),
        ("Not Available", PH_WORDS),
        ("Unknown User", PH_WORDS),
        ("---", PH_DASHES),
        ("\u2014", PH_DASHES),
        ("...", PH_DASHES),
        ("0", PH_ZERO),
        ("-1", PH_ZERO),
        ("false", PH_ZERO),
        ("noreply@shop.example.org", PH_EMAIL),
        ("No-Reply@company.io", PH_EMAIL),
        ("user@example.com", PH_EMAIL),
        ("someone@mail.invalid", PH_EMAIL),
        ("nobody@conformance.invalid", PH_EMAIL),
        ("about:blank", PH_URL),
        ("https://example.com/avatar.png", PH_URL),
        ("https://", PH_URL),
    ],
)
def test_placeholder_forms(value: str, form: str) -> None:
    assert placeholder_form(value) == form


@pytest.mark.parametrize(
    "value",
    [
        *("Ada", "Na", "Nil", "Nan", "Unknown Artist", "bob@example.test", "user@company.io", "https://ada.dev"),
        *("007", "prof15-1a2b-new@conformance.invalid"),
    ],
)
def test_real_values_are_no_placeholders(value: str) -> None:
    assert placeholder_form(value) is None


def test_the_accounts_own_email_is_no_placeholder() -> None:
    record = {"id": "u1", "email": "user@example.com"}
    assert placeholder_problems(record) != []
    assert placeholder_problems(record, known={"email": "User@example.com"}) == []


@pytest.mark.parametrize(
    ("value", "form"),
    [
        (None, BLANK_NULL),
        ("", BLANK_EMPTY),
        (" \t", BLANK_WHITESPACE),
        ("\u00a0\u3000", BLANK_UNICODE),
        ("\u200b", BLANK_INVISIBLE),
        ("\ufeff \u2060", BLANK_INVISIBLE),
        ("a\u200b", None),
    ],
)
def test_blank_forms(value: Any, form: str | None) -> None:
    assert blank_form(value) == form


def test_real_short_names_are_no_placeholders() -> None:
    assert placeholder_problems({"id": "u1", "name": "Na", "nickname": "Nil"}) == []
    assert placeholder_problems({"id": "u1", "name": "Unknown Artist"}) == []
    assert placeholder_problems({"id": "u1", "nickname": "\u2014"}) != []


def test_numeric_id_hint() -> None:
    assert id_problems({"id": 1234}) == ["id must be a string, got 1234 (serialize numeric provider ids as strings)"]


# ------------------------------------------------------------------------------------------- PROF-10


@st.composite
def identity_cases(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    local = draw(st.text(alphabet="abcdefghij.", min_size=1, max_size=8))
    email = f"{local}@example.com"
    name = draw(st.sampled_from(["Ada Lovelace", "Al", "Grace Hopper", "Émile Zola"]))
    how = draw(st.sampled_from(["opaque", "email", "local", "name", "name-joined", "upper"]))
    pid = {
        "opaque": "usr_01HZX9K2M3",
        "email": email,
        "local": f"u-{local}-1",
        "name": f"{name}#7",
        "name-joined": "id_" + "".join(c for c in name.lower() if c.isalnum()),
        "upper": email.upper(),
    }[how]
    needles = {"email": email, "local": local, "name": name, "name-joined": name, "upper": email}
    # Too-short needles (under 3 visible characters) are ignored on purpose.
    alnum = "".join(c for c in needles.get(how, "").casefold() if c.isalnum())
    encoded = how != "opaque" and len(needles[how].strip()) >= 3 and len(alnum) >= 3
    if how == "local" and len(local.strip()) < 3:
        encoded = False
    return {"id": pid, "name": name, "email": email}, encoded


@HYPOTHESIS
@given(identity_cases())
def test_id_encoding_matches_construction(case: tuple[dict[str, Any], bool]) -> None:
    record, encoded = case
    found = id_encoding_problems(record) or id_local_part_notes(record)
    if encoded:
        assert found
    elif record["id"] == "usr_01HZX9K2M3":
        assert found == []


def test_local_part_is_reported_not_judged() -> None:
    record = {"id": "alice-7f3a9c", "email": "alice@example.test"}
    assert id_encoding_problems(record) == []
    assert id_local_part_notes(record) == [
        "id 'alice-7f3a9c' encodes the email local part 'alice' (the value itself, any case)"
    ]
    whole = {"id": "alice@example.test", "email": "alice@example.test"}
    assert id_encoding_problems(whole) and id_local_part_notes(whole) == []


def test_id_encoding_uses_known_identity_and_organization() -> None:
    record = {"id": "acme-corp-0042"}
    assert id_encoding_problems(record) == []
    assert id_encoding_problems(record, known={"organization": "ACME Corp"}) == [
        "id 'acme-corp-0042' encodes the organization 'ACME Corp' (the value with separators dropped)"
    ]
    assert id_encoding_problems({"id": "x", "email": 5}) == []


def _derived_ids(email: str) -> dict[str, str]:
    import base64
    import hashlib
    import uuid

    lower = email.lower().encode()
    return {
        "base64 or base64url of the value": "usr_" + base64.urlsafe_b64encode(email.encode()).decode().rstrip("="),
        "hex of the value": "u" + lower.hex(),
        "an MD5/SHA-1/SHA-256/SHA-512 digest of the value (hex, whole or truncated)": "usr_"
        + hashlib.sha256(lower).hexdigest()[:20],
        "a digest of the value in base64 or base64url": base64.urlsafe_b64encode(hashlib.md5(lower).digest())
        .decode()
        .rstrip("="),
        "a name-based UUID (v3/v5) of the value": str(uuid.uuid5(uuid.NAMESPACE_DNS, email)),
    }


def test_id_derivations_of_the_email_are_found() -> None:
    """PROF-10: every derivation family a careless vendor uses is caught, none by a substring match."""
    from conformance.judges.profile import ID_DERIVATIONS

    email = "Alice.Liddell@Example.test"
    derived = _derived_ids(email)
    assert set(derived) < set(ID_DERIVATIONS)
    for how, pid in derived.items():
        assert email.split("@")[0].casefold() not in pid.casefold()  # a substring check misses it
        problems = id_encoding_problems({"id": pid}, known={"email": email})
        assert problems[0] == f"id {pid!r} encodes the email {email!r} ({how})"


@given(st.binary(min_size=10, max_size=10))
def test_random_opaque_ids_encode_nothing(raw: bytes) -> None:
    record = {"id": "usr_" + raw.hex(), "email": "alice@example.test", "name": "Alice Liddell"}
    assert id_encoding_problems(record) == []


# ------------------------------------------------------------------------------------------- PROF-06


@st.composite
def results(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    record = {"id": "u1", "name": draw(st.text(max_size=6)), "score": draw(st.sampled_from([1, 1.0, True, None]))}
    result: dict[str, Any] = {"structuredContent": record}
    defect = draw(st.sampled_from(["none", "none", "is-error", "no-text", "two-texts", "different", "type-drift",
                                   "not-json", "nested", "nan", "missing-iserror"]))  # fmt: skip
    text = json.dumps(record)
    content: list[Any] = [{"type": "text", "text": text}]
    result["isError"] = False
    if defect == "is-error":
        result["isError"] = draw(st.sampled_from([True, "false", 0]))
    elif defect == "no-text":
        content = [{"type": "image", "data": ""}]
    elif defect == "two-texts":
        content = [*content, {"type": "text", "text": text}]
    elif defect == "different":
        content = [{"type": "text", "text": json.dumps({**record, "id": "u2"})}]
    elif defect == "type-drift":
        score = record["score"]
        # 1, 1.0 and True are one dict key in Python, so no lookup table here.
        swap = "1" if isinstance(score, float) else 1 if score is True else 0 if score is None else True
        drifted = {**record, "score": swap}
        content = [{"type": "text", "text": json.dumps(drifted)}]
        if json.dumps(drifted) == text:
            defect = "none"
    elif defect == "not-json":
        content = [{"type": "text", "text": "Profile: u1"}]
    elif defect == "nested":
        result["structuredContent"] = {"profile": record}
        content = [{"type": "text", "text": json.dumps({"profile": record})}]
    elif defect == "nan":
        content = [{"type": "text", "text": text.replace('"u1"', "NaN", 1)}]
    elif defect == "missing-iserror":
        del result["isError"]  # MCP's default is false
        defect = "none"
    if draw(st.booleans()):
        content = [{"type": "image", "data": ""}, *content]  # non-text items do not count
    result["content"] = content
    return result, defect == "none"


@HYPOTHESIS
@given(results())
def test_result_rule_matches_construction(case: tuple[dict[str, Any], bool]) -> None:
    result, ok = case
    assert (not result_problems(result)) == ok, result_problems(result)


def test_nested_fields_are_named() -> None:
    result = {"isError": False, "structuredContent": {"profile": {"id": "u"}}, "content": []}
    assert "nested under 'profile'" in result_problems(result)[0]


def test_judge_result_gathers_every_rule() -> None:
    record = {"id": "ada@example.com", "email": "ada@example.com", "name": "N/A"}
    result = {"isError": False, "structuredContent": record, "content": [{"type": "text", "text": json.dumps(record)}]}
    verdicts = judge_result(result)
    assert verdicts.record == record
    assert verdicts.problems["PROF-06"] == [] and verdicts.problems["PROF-07"] == []
    assert verdicts.problems["PROF-10"] and verdicts.problems["PROF-12"] == []
    assert verdicts.problems["PROF-14"] == [
        "name is the placeholder 'N/A' (" + PH_NAMED + "); omit an unavailable field instead"
    ]


@HYPOTHESIS
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda x: st.lists(x, max_size=3) | st.dictionaries(st.text(max_size=4), x, max_size=3),
    )
)
def test_hostile_results_never_crash(value: Any) -> None:
    verdicts = judge_result(value)
    assert all(isinstance(v, list) for v in verdicts.problems.values())
    assert isinstance(declaration_problems(value if isinstance(value, dict) else {}), dict)


# ---------------------------------------------------------------------------- PROF-01 … PROF-05


@HYPOTHESIS
@given(st.lists(st.sampled_from([True, False, "true", 1, None, MISSING]), max_size=5))
def test_profile_tool_search_counts_only_boolean_true(markers: list[Any]) -> None:
    tools = [{"name": f"t{i}", "_meta": {} if m is MISSING else {"openai/profile": m}} for i, m in enumerate(markers)]
    search = find_profile_tool(tools)
    marked = [i for i, m in enumerate(markers) if m is True]
    assert search.names == [f"t{i}" for i in marked]
    assert bool(search.problems()) == (len(marked) > 1)
    assert (search.tool is not None) == (len(marked) == 1)


def test_the_canonical_declaration_passes_every_rule() -> None:
    assert declaration_problems(PROFILE_TOOL) == {"PROF-02": [], "PROF-03": [], "PROF-04": [], "PROF-05": []}


def test_the_reference_tool_servers_schema_is_equivalent() -> None:
    from conformance.reference.toolserver.app import PROFILE_OUTPUT_SCHEMA

    assert output_schema_problems({"outputSchema": PROFILE_OUTPUT_SCHEMA}) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        {"type": "object", "additionalProperties": False, "properties": {}, "required": []},
    ],
)
def test_empty_input_schema_forms(schema: dict[str, Any]) -> None:
    problems = input_schema_problems({"inputSchema": schema})
    assert bool(problems) == ("additionalProperties" not in schema)


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        (
            {"type": "object", "properties": {"account": {"type": "string"}}, "additionalProperties": False},
            "properties",
        ),
        ({"type": "object", "additionalProperties": False, "patternProperties": {".": {}}}, "patternProperties"),
        ({"type": "object", "additionalProperties": False, "required": ["a"]}, "required"),
        ({"type": "array"}, "type"),
        (None, "JSON Schema object"),
    ],
)
def test_input_schema_defects(schema: Any, fragment: str) -> None:
    assert any(fragment in p for p in input_schema_problems({"inputSchema": schema}))


@pytest.mark.parametrize(
    ("annotations", "count"),
    [
        ({"readOnlyHint": True, "destructiveHint": False, "openWorldHint": True}, 1),
        ({"readOnlyHint": True}, 2),  # absent hints default to destructive and open-world in MCP
        ({"readOnlyHint": "true", "destructiveHint": 0, "openWorldHint": False}, 2),
        (None, 1),
    ],
)
def test_annotation_rule(annotations: Any, count: int) -> None:
    assert len(annotation_problems({"annotations": annotations})) == count


@pytest.mark.parametrize(
    ("tool", "ok"),
    [
        ({"securitySchemes": [{"type": "oauth2", "scopes": []}]}, True),
        ({"_meta": {"securitySchemes": [{"type": "oauth2", "scopes": ["p"]}]}}, True),
        ({"securitySchemes": [{"type": "noauth"}]}, False),
        ({"securitySchemes": [{"type": "noauth"}, {"type": "oauth2", "scopes": []}]}, False),
        ({"securitySchemes": [{"type": "oauth2"}]}, False),
        ({}, False),
    ],
)
def test_security_rule(tool: dict[str, Any], ok: bool) -> None:
    assert (not security_problems(tool)) == ok


def _mutated(path: list[Any], value: Any) -> dict[str, Any]:
    schema = copy.deepcopy(CANONICAL)
    target: Any = schema
    for key in path[:-1]:
        target = target[key]
    if value is MISSING:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return schema


EQUIVALENT = [
    _mutated(["properties", "id", "pattern"], "[^\\s]"),
    _mutated(["properties", "id", "minLength"], MISSING),  # the pattern alone implies a length of 1
    {**CANONICAL, "$schema": "http://json-schema.org/draft-07/schema#"},
    {
        "$defs": {"text": {"type": "string"}},
        "type": "object",
        "properties": {
            "id": {"allOf": [{"$ref": "#/$defs/text"}, {"pattern": "\\S"}]},
            "name": {"$ref": "#/$defs/text"},
            "email": {"$ref": "#/$defs/text"},
            "nickname": {"$ref": "#/$defs/text"},
        },
        "required": ["id"],
        "additionalProperties": False,
    },
]
NOT_EQUIVALENT = [
    _mutated(["required"], []),
    _mutated(["required"], ["id", "name"]),
    _mutated(["additionalProperties"], True),
    _mutated(["additionalProperties"], MISSING),
    _mutated(["properties", "id", "pattern"], MISSING),
    _mutated(["properties", "id", "minLength"], 5),
    _mutated(["properties", "id", "type"], ["string", "integer"]),
    _mutated(["properties", "name"], MISSING),
    _mutated(["properties", "email", "type"], ["string", "null"]),
    _mutated(["properties", "extra"], {"type": "string"}),
    _mutated(["properties", "nickname", "minLength"], 1),
    {"type": "object", "properties": {"profile": CANONICAL}, "required": ["profile"]},
]


@pytest.mark.parametrize("schema", EQUIVALENT)
def test_equivalent_spellings_pass(schema: dict[str, Any]) -> None:
    assert output_schema_problems({"outputSchema": schema}) == []


@pytest.mark.parametrize("schema", NOT_EQUIVALENT)
def test_non_equivalent_schemas_fail(schema: dict[str, Any]) -> None:
    assert output_schema_problems({"outputSchema": schema})


def test_equivalence_messages_say_which_record_differs() -> None:
    (problem,) = output_schema_problems({"outputSchema": _mutated(["properties", "id", "pattern"], MISSING)})
    assert problem == 'outputSchema accepts a whitespace-only id {"id": " "} that the record schema forbids'
    assert output_schema_problems({}) == ["outputSchema is missing; it must be the profile record schema"]


def test_output_schema_verdicts_are_judged_once_per_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """PROF-05's verdict is kept per schema text: a second declaration of the same schema is not compiled again and
    gets the verdict a fresh judgement gives; a full memo judges afresh, alike."""
    from conformance.judges import profile
    from conformance.judges.declarations import SchemaChecker, SharedMemo

    schemas = [*EQUIVALENT, *NOT_EQUIVALENT]
    monkeypatch.setattr(profile, "_OUTPUT_SCHEMA_VERDICTS", SharedMemo(10_000_000))
    fresh = [output_schema_problems({"outputSchema": s}) for s in schemas]

    def refuse(self: SchemaChecker, schema: Any) -> Any:
        raise AssertionError("compiled again")

    with monkeypatch.context() as patched:
        patched.setattr(SchemaChecker, "compile", refuse)
        assert [output_schema_problems({"outputSchema": copy.deepcopy(s)}) for s in schemas] == fresh
    monkeypatch.setattr(profile, "_OUTPUT_SCHEMA_VERDICTS", SharedMemo(0))
    assert [output_schema_problems({"outputSchema": s}) for s in schemas] == fresh
    assert any(fresh) and not all(fresh)


def _carries_by_scan(pid: str, encoded: str, casefold: bool) -> bool:
    """The oracle of PROF-10's windows: some MIN_DERIVED_CHARS consecutive characters of ``encoded`` in the id."""
    from conformance.judges.profile import MIN_DERIVED_CHARS

    haystack, needle = (pid.casefold(), encoded.casefold()) if casefold else (pid, encoded)
    return any(needle[i : i + MIN_DERIVED_CHARS] in haystack for i in range(len(needle) - MIN_DERIVED_CHARS + 1))


def _digest_and_uuid_oracles(value: str) -> dict[str, Any]:
    import base64
    import hashlib
    import uuid

    variants = list(dict.fromkeys([value, value.strip(), value.strip().lower(), value.strip().upper()]))
    digests = [hashlib.new(n, v.encode()).digest() for v in variants for n in ("md5", "sha1", "sha256", "sha512")]
    b64 = [f(d).decode().rstrip("=") for d in digests for f in (base64.b64encode, base64.urlsafe_b64encode)]
    namespaces = (uuid.NAMESPACE_DNS, uuid.NAMESPACE_URL, uuid.NAMESPACE_OID, uuid.NAMESPACE_X500)
    uuids = [make(ns, v).hex for v in variants for ns in namespaces for make in (uuid.uuid3, uuid.uuid5)]
    return {
        "an MD5/SHA-1/SHA-256/SHA-512 digest of the value (hex, whole or truncated)": lambda pid: any(
            _carries_by_scan(pid, d.hex(), True) for d in digests
        ),
        "a digest of the value in base64 or base64url": lambda pid: any(_carries_by_scan(pid, e, False) for e in b64),
        "a name-based UUID (v3/v5) of the value": lambda pid: any(
            u in "".join(c for c in pid.casefold() if c.isalnum()) for u in uuids
        ),
        "forms": [d.hex() for d in digests] + b64 + uuids,
    }


@settings(max_examples=150, deadline=None)
@given(
    value=st.sampled_from(["alice@example.test", " Alice Liddell ", "ÄÖü ß", "x" * 5000]),
    pick=st.integers(min_value=0),
    start=st.integers(min_value=0, max_value=130),
    length=st.integers(min_value=0, max_value=40),
    before=st.text(max_size=8),
    after=st.text(max_size=8),
    upper=st.booleans(),
    repeat=st.sampled_from([1, 1, 1, 400]),
)
def test_digest_and_uuid_derivations_match_a_plain_scan(
    value: str, pick: int, start: int, length: int, before: str, after: str, upper: bool, repeat: int
) -> None:
    """PROF-10's digest and UUID families (their forms computed once per value, compared as sets of windows)
    decide as scanning every window of every form does, for ids holding a piece of a form, short or long."""
    from conformance.judges.profile import ID_DERIVATIONS

    oracles = _digest_and_uuid_oracles(value)
    form = oracles["forms"][pick % len(oracles["forms"])]
    piece = form[start : start + length]
    pid = (before + (piece.upper() if upper else piece) + after) * repeat
    for how in list(oracles)[:3]:
        assert ID_DERIVATIONS[how](pid, value) == oracles[how](pid), how
