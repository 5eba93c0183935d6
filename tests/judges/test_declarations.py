"""Declaration, result and challenge checks, driven by Hypothesis against independent oracles.

The oracles are (a) ground truth known by construction (a generator that injects a defect knows which rule it
breaks) and (b) plain re-statements of each rule written here, never calls into the code under test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from conformance.host.challenge import ChallengeParseError, parse_www_authenticate
from conformance.judges.declarations import (
    DeclarationChecker,
    Problem,
    SchemaChecker,
    check_challenge_result,
    describe,
    linking_ui_summary,
    profile_marker,
    security_scheme_problems,
    tool_label,
)

MISSING: Any = object()
HYPOTHESIS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------------------------------ generators

DIALECTS = [
    None,
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-04/schema#",
]
leaf_schemas: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.builds(
        lambda n, d: {"type": "string", "minLength": n, "description": d}, st.integers(0, 5), st.text(max_size=9)
    ),
    st.builds(
        lambda v: {"type": "array", "items": {"enum": v}, "title": "t"},
        st.lists(st.integers(), min_size=1, unique=True),
    ),
    st.builds(lambda n: {"type": "integer", "minimum": n}, st.integers(-5, 5)),
    st.builds(lambda v: {"enum": v}, st.lists(st.text(max_size=3), min_size=1, max_size=3, unique=True)),
    st.just({"type": "boolean"}),
    st.just({"type": "array", "items": {"type": "string"}}),
    st.just({"type": "string", "pattern": "^[a-z]+$"}),
)


@st.composite
def object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(st.text(min_size=1, max_size=6), leaf_schemas, max_size=4))
    schema: dict[str, Any] = {"type": "object", "properties": props}
    with_required: bool = draw(st.booleans())
    if props and with_required:
        schema["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True, min_size=1))
    if draw(st.booleans()):
        schema["additionalProperties"] = draw(st.booleans())
    dialect = draw(st.sampled_from(DIALECTS))
    if dialect is not None:
        schema["$schema"] = dialect
    return schema


# Each defect makes a schema invalid as an MCP tool schema (metaschema failure, unknown dialect or non-object).
SCHEMA_DEFECTS: list[tuple[str, Any]] = [
    ("type", 5),
    ("type", "objekt"),
    ("type", "string"),  # a valid JSON Schema, but MCP wants an object schema
    ("required", "x"),
    ("properties", []),
    ("minProperties", -1),
    ("pattern", "("),
    ("$schema", "urn:not-a-dialect"),
    ("$schema", 7),
    ("additionalProperties", "no"),
    ("description", 5),
    ("title", ["x"]),
]
NON_OBJECTS = [None, True, "schema", 3, ["type", "object"]]


@st.composite
def schemas_with_truth(draw: st.DrawFn) -> tuple[Any, bool]:
    schema = draw(object_schemas())
    kind = draw(st.sampled_from(["good", "defect", "non-object"]))
    if kind == "good":
        return schema, True
    if kind == "non-object":
        return draw(st.sampled_from(NON_OBJECTS)), False
    key, value = draw(st.sampled_from(SCHEMA_DEFECTS))
    if key in ("type", "$schema") or not schema["properties"] or draw(st.booleans()):
        return {**schema, key: value}, False
    # The same defect deep inside: a property's subschema (the checker validates node by node).
    name = draw(st.sampled_from(sorted(schema["properties"])))
    inner = {**schema["properties"][name], key: value}
    if key == "required":
        inner = {**inner, "type": "object"}
    return {
        **schema,
        "properties": {**schema["properties"], name: {"items": inner} if draw(st.booleans()) else inner},
    }, False


good_scopes = st.lists(st.text(max_size=8), max_size=3)
good_scheme = st.one_of(
    st.just({"type": "noauth"}),
    st.just({"type": "noauth", "scopes": []}),
    st.builds(lambda s: {"type": "oauth2", "scopes": s}, good_scopes),
)
bad_scheme = st.sampled_from(
    [
        {"type": "noauth", "scopes": ["read"]},
        {"type": "oauth2"},
        {"type": "oauth2", "scopes": "read"},
        {"type": "oauth2", "scopes": ["read", 3]},
        {"type": "apikey"},
        {"scopes": ["read"]},
        "oauth2",
        None,
    ]
)
any_scheme = st.one_of(good_scheme, bad_scheme)
hostile_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


def oracle_schemes_ok(schemes: Any) -> bool:
    """AUTH-TOOL-02 restated: a list; noauth has no (non-empty) scopes; oauth2 has a list of strings."""
    if type(schemes) is not list:
        return False
    for entry in schemes:
        if type(entry) is not dict:
            return False
        if entry.get("type") == "noauth":
            if "scopes" in entry and not (type(entry["scopes"]) is list and len(entry["scopes"]) == 0):
                return False
        elif entry.get("type") == "oauth2":
            scopes = entry.get("scopes")
            if type(scopes) is not list or not all(type(s) is str for s in scopes):
                return False
        else:
            return False
    return True


def oracle_schema_ok(schema: Any) -> bool:
    """Schema validity restated with jsonschema's one-shot API, plus MCP's object root."""
    if type(schema) is not dict:
        return False
    dialect = schema.get("$schema")
    if dialect is not None and (type(dialect) is not str or validator_for(schema, default=None) is None):
        return False
    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return False
    return schema.get("type") == "object"


@st.composite
def tools_with_truth(draw: st.DrawFn) -> tuple[Any, set[str]]:
    """A tool and the parts (as named in Problem.where) that must be reported."""
    tool: dict[str, Any] = {}
    bad: set[str] = set()
    name = draw(st.one_of(st.text(min_size=1, max_size=8), st.sampled_from([MISSING, "", None, 5, ["x"]])))
    if name is not MISSING:
        tool["name"] = name
    if not (isinstance(name, str) and name):
        bad.add(".name")
    description = draw(st.one_of(st.text(max_size=10), st.sampled_from([MISSING, None, 1, {"t": "x"}])))
    if description is not MISSING:
        tool["description"] = description
    if description is not MISSING and not isinstance(description, str):
        bad.add(".description")
    input_schema, input_ok = draw(st.one_of(schemas_with_truth(), st.just((MISSING, False))))
    if input_schema is not MISSING:
        tool["inputSchema"] = input_schema
    if not input_ok:
        bad.add(".inputSchema")
    if draw(st.booleans()):
        output_schema, output_ok = draw(schemas_with_truth())
        tool["outputSchema"] = output_schema
        if not output_ok:
            bad.add(".outputSchema")
    if draw(st.booleans()):
        hints = draw(
            st.dictionaries(
                st.sampled_from(["readOnlyHint", "destructiveHint", "openWorldHint", "idempotentHint", "title"]),
                st.one_of(st.booleans(), st.sampled_from([1, "true", None])),
            )
        )
        annotations: Any = draw(st.one_of(st.just(hints), st.sampled_from([[], "ro", None])))
        tool["annotations"] = annotations
        if type(annotations) is not dict or any(
            (k == "title" and type(v) is not str) or (k != "title" and type(v) is not bool) for k, v in hints.items()
        ):
            bad.add(".annotations")
    schemes = draw(st.one_of(st.just(MISSING), st.lists(any_scheme, max_size=3), st.sampled_from(["oauth2", {}])))
    in_meta = draw(st.booleans())
    meta_kind = draw(st.sampled_from(["absent", "object", "broken"]))
    meta: Any = MISSING
    if meta_kind == "broken":
        meta = draw(st.sampled_from([[], "meta", 0, None]))
        bad.add("._meta")
    elif meta_kind == "object":
        meta = {}
        marker: Any = draw(st.one_of(st.just(MISSING), st.booleans(), st.sampled_from(["true", 1, 0, None, 1.5, []])))
        if marker is not MISSING:
            meta["openai/profile"] = marker
            if type(marker) is not bool:
                bad.add('._meta["openai/profile"]')
        if draw(st.booleans()):
            meta["other/key"] = draw(hostile_json)
    if schemes is not MISSING:
        if in_meta and isinstance(meta, dict):
            meta["securitySchemes"] = schemes
            if not oracle_schemes_ok(schemes):
                bad.add('._meta["securitySchemes"]')
        else:
            tool["securitySchemes"] = schemes
            if not oracle_schemes_ok(schemes):
                bad.add(".securitySchemes")
    if meta is not MISSING:
        tool["_meta"] = meta
    return tool, bad


def parts(problems: list[Problem], tool: Any) -> set[str]:
    label = tool_label(tool, 0)
    assert all(p.where.startswith(label) for p in problems)
    return {p.where[len(label) :] for p in problems}


# --------------------------------------------------------------------------------------- declarations


@HYPOTHESIS
@given(tools_with_truth())
def test_tool_verdicts_match_ground_truth(case: tuple[Any, set[str]]) -> None:
    tool, expected = case
    problems = DeclarationChecker().check_tool(tool, 0)
    assert parts(problems, tool) == expected
    rules = {p.rule for p in problems}
    assert ("AUTH-TOOL-06" in rules) == ('._meta["openai/profile"]' in expected)
    assert ("AUTH-TOOL-02" in rules) == bool(expected & {".securitySchemes", '._meta["securitySchemes"]'})


@HYPOTHESIS
@given(schemas_with_truth())
def test_schema_checker_matches_the_one_shot_oracle(case: tuple[Any, bool]) -> None:
    schema, truth = case
    found = SchemaChecker().problems(schema)
    assert (not found) == truth == oracle_schema_ok(schema)


@HYPOTHESIS
@given(hostile_json)
def test_hostile_tools_never_crash(value: Any) -> None:
    checker = DeclarationChecker()
    problems = checker.check_tools([value, {"name": "t", "description": "d", "inputSchema": value}])
    assert all(isinstance(p, Problem) and p.message for p in problems)
    assert isinstance(checker.check_result("t", value), list)
    assert isinstance(check_challenge_result(value).problems, list)


@HYPOTHESIS
@given(st.one_of(st.lists(any_scheme, max_size=4), hostile_json))
def test_security_schemes_match_the_restated_rule(schemes: Any) -> None:
    assert (not security_scheme_problems(schemes)) == oracle_schemes_ok(schemes)


@pytest.mark.parametrize(
    ("meta", "state"),
    [
        (None, "absent"),
        ({}, "absent"),
        ({"openai/profile": True}, "true"),
        ({"openai/profile": False}, "false"),
        ({"openai/profile": "true"}, "invalid"),
        ({"openai/profile": 1}, "invalid"),
        ({"openai/profile": None}, "invalid"),
        ({"acme/profile": True}, "absent"),
    ],
)
def test_profile_marker_states(meta: Any, state: str) -> None:
    tool = {"name": "p"} if meta is None else {"name": "p", "_meta": meta}
    assert profile_marker(tool) == state


def test_vendor_prefix_is_configurable() -> None:
    tool = {"name": "p", "description": "", "inputSchema": {"type": "object"}, "_meta": {"acme/profile": "yes"}}
    assert DeclarationChecker(vendor="openai").check_tool(tool) == []
    (problem,) = DeclarationChecker(vendor="acme").check_tool(tool)
    assert problem.rule == "AUTH-TOOL-06" and '"yes"' in problem.message


def test_duplicate_names_and_non_list_listing() -> None:
    tool = {"name": "a", "description": "", "inputSchema": {"type": "object"}}
    (problem,) = DeclarationChecker().check_tools([tool, dict(tool)])
    assert "duplicates the name of tools[0]" in problem.message
    assert DeclarationChecker().check_tools({"tools": []})[0].where == "tools"


def test_dialect_is_honoured() -> None:
    # `dependentRequired` is 2019-09+; under draft-07 it is an unknown keyword (allowed), with a bad value it is
    # still fine there but invalid under 2020-12.
    schema = {"type": "object", "dependentRequired": {"a": "b"}}
    assert SchemaChecker().problems(schema)
    assert SchemaChecker().problems({**schema, "$schema": "http://json-schema.org/draft-07/schema#"}) == []
    assert SchemaChecker(Draft7Validator).problems(schema) == []


def test_deep_nesting_is_reported_not_raised() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(3000):
        schema = {"type": "object", "properties": {"a": schema}}
    assert SchemaChecker().problems(schema) == ["is nested too deeply to check"]


# ----------------------------------------------------------------------------------- results (TOOL-05)


@HYPOTHESIS
@given(object_schemas(), hostile_json)
def test_structured_content_matches_the_one_shot_validator(schema: dict[str, Any], instance: Any) -> None:
    checker = DeclarationChecker()
    checker.check_tools([{"name": "t", "description": "", "inputSchema": {"type": "object"}, "outputSchema": schema}])
    result = {"content": [{"type": "text", "text": "x"}], "structuredContent": instance}
    expected_ok = type(instance) is dict and validator_for(schema)(schema).is_valid(instance)
    assert (not checker.check_result("t", result)) == expected_ok


def test_validators_are_compiled_once_per_distinct_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tools = [
        {"name": f"t{i}", "description": "", "inputSchema": {"type": "object"}, "outputSchema": dict(schema)}
        for i in range(1000)
    ]
    checker = DeclarationChecker()
    assert checker.check_tools(tools) == []
    assert len(checker._compiled) == 1 and len(checker.index.validators) == 1000
    good = {"content": [], "structuredContent": {"n": 1}}
    bad = {"content": [], "structuredContent": {"n": "1"}}
    assert checker.check_result("t999", good) == []
    (problem,) = checker.check_result("t3", bad)
    assert problem.rule == "AUTH-TOOL-05" and "at n:" in problem.message


def test_result_rules() -> None:
    checker = DeclarationChecker()
    checker.check_tools(
        [{"name": "t", "description": "", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
    )
    assert "returned no structuredContent" in str(checker.check_result("t", {"content": []})[0])
    assert checker.check_result("t", {"content": [], "isError": True}) == []  # error results are exempt
    assert checker.check_result("unknown", {"content": []}) == []
    shape = checker.check_result("t", {"content": "x", "structuredContent": [], "isError": "no"})
    assert len(shape) == 4


def test_unresolvable_ref_is_a_problem_not_a_fetch() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://schemas.invalid/x.json"}}}
    checker = DeclarationChecker()
    checker.check_tools([{"name": "t", "description": "", "inputSchema": {"type": "object"}, "outputSchema": schema}])
    (problem,) = checker.check_result("t", {"content": [], "structuredContent": {"a": 1}})
    assert "does not resolve" in problem.message


# ------------------------------------------------------------------------------------ challenges (CHAL)

param_values = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("éü✓"), max_size=20
)
TOKEN_CHARS = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def render(scheme: str, params: dict[str, str], quote_all: bool) -> str:
    rendered = []
    for name, value in params.items():
        if not quote_all and value and set(value) <= TOKEN_CHARS:
            rendered.append(f"{name}={value}")
        else:
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            rendered.append(f'{name}="{escaped}"')
    return f"{scheme} {', '.join(rendered)}" if rendered else scheme


@st.composite
def challenge_results(draw: st.DrawFn) -> tuple[dict[str, Any], bool, bool]:
    """A result, whether AUTH-CHAL-01 holds, and whether the linking UI's error+description condition holds."""
    ok = True
    result: dict[str, Any] = {}
    is_error = draw(st.sampled_from([True, True, True, False, "true", 1, MISSING]))
    if is_error is not MISSING:
        result["isError"] = is_error
    ok &= is_error is True
    content = draw(
        st.sampled_from(
            [
                [{"type": "text", "text": "Sign in"}],
                [{"type": "image", "data": ""}, {"type": "text", "text": ""}],
                [],
                [{"type": "text", "text": 5}],
                [{"type": "image", "data": ""}],
                "Sign in",
                MISSING,
            ]
        )
    )
    if content is not MISSING:
        result["content"] = content
    ok &= isinstance(content, list) and any(
        isinstance(i, dict) and i.get("type") == "text" and isinstance(i.get("text"), str) for i in content
    )
    linking = False
    entries: list[Any] = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["challenge", "challenge", "challenge", "basic", "two", "not-a-string"]))
        if kind == "not-a-string":
            entries.append(draw(st.sampled_from([None, 3, ["Bearer"], {"error": "x"}])))
            ok = False
            continue
        names = draw(
            st.lists(
                st.sampled_from(["resource_metadata", "error", "error_description", "scope"]), unique=True, max_size=4
            )
        )
        params = {n: draw(param_values) for n in names}
        complete = all(params.get(n, "").strip() for n in ("resource_metadata", "error", "error_description"))
        scheme = draw(st.sampled_from(["Bearer", "bearer", "BEARER"])) if kind != "basic" else "Basic"
        text = render(scheme, params, draw(st.booleans()))
        if kind == "two":
            text += ', Basic realm="x"'
        entries.append(text)
        ok &= kind == "challenge" and complete
        if kind == "challenge" and params.get("error", "").strip() and params.get("error_description", "").strip():
            linking = True
    shape = draw(st.sampled_from(["list", "list", "list", "string", "no-meta", "meta-not-object"]))
    if shape == "list":
        result["_meta"] = {"mcp/www_authenticate": entries}
        ok &= bool(entries)
    elif shape == "string":
        result["_meta"] = {"mcp/www_authenticate": "Bearer error=x"}
        ok, linking = False, False
    elif shape == "meta-not-object":
        result["_meta"] = ["mcp/www_authenticate"]
        ok, linking = False, False
    else:
        ok, linking = False, False
    return result, ok, linking


@HYPOTHESIS
@given(challenge_results())
def test_challenge_verdicts_match_ground_truth(case: tuple[dict[str, Any], bool, bool]) -> None:
    result, ok, linking = case
    verdict = check_challenge_result(result)
    assert verdict.ok == ok, verdict.problems
    assert verdict.has_error_and_description == linking
    assert all(p.rule == "AUTH-CHAL-01" for p in verdict.problems)


@HYPOTHESIS
@given(st.lists(st.text(max_size=60), min_size=1, max_size=3))
def test_arbitrary_challenge_strings_agree_with_the_parser(values: list[str]) -> None:
    result = {"isError": True, "content": [{"type": "text", "text": "x"}], "_meta": {"mcp/www_authenticate": values}}
    verdict = check_challenge_result(result)
    for value in values:
        try:
            parsed = parse_www_authenticate(value)
        except ChallengeParseError:
            assert not verdict.ok
            continue
        single_bearer = len(parsed) == 1 and parsed[0].scheme.lower() == "bearer"
        filled = single_bearer and all(
            (parsed[0].params.get(n) or "").strip() for n in ("resource_metadata", "error", "error_description")
        )
        if not filled:
            assert not verdict.ok


def test_challenge_problem_messages_are_precise() -> None:
    result = {
        "isError": True,
        "content": [{"type": "text", "text": "no"}],
        "_meta": {"mcp/www_authenticate": ['Bearer resource_metadata="https://r/x", error="insufficient_scope"']},
    }
    (problem,) = check_challenge_result(result).problems
    assert (
        str(problem) == 'auth error result._meta["mcp/www_authenticate"][0]: Bearer challenge lacks error_description'
    )


# -------------------------------------------------------------------------------- linking UI (CHAL-02)

GOOD_RESULT = {
    "isError": True,
    "content": [{"type": "text", "text": "Sign in"}],
    "_meta": {
        "mcp/www_authenticate": ['Bearer resource_metadata="https://r/m", error="invalid_token", error_description="d"']
    },
}


@given(
    st.booleans(),
    st.sampled_from([None, [{"type": "oauth2", "scopes": ["r"]}], [{"type": "noauth", "scopes": ["r"]}]]),
    st.booleans(),
    st.booleans(),
)
def test_linking_ui_needs_all_three(published: bool, schemes: Any, in_meta: bool, obtained: bool) -> None:
    tool: dict[str, Any] = {"name": "t"}
    if schemes is not None:
        if in_meta:
            tool["_meta"] = {"securitySchemes": schemes}
        else:
            tool["securitySchemes"] = schemes
    challenge = check_challenge_result(GOOD_RESULT) if obtained else None
    summary = linking_ui_summary(metadata_published=published, tool=tool, challenge=challenge)
    expected = published and schemes is not None and schemes[0]["type"] == "oauth2" and obtained
    assert summary.ok == expected
    assert len(summary.missing) == (not published) + (schemes is None or schemes[0]["type"] == "noauth") + (
        not obtained
    )


def test_linking_ui_without_description() -> None:
    result = json.loads(json.dumps(GOOD_RESULT))
    result["_meta"]["mcp/www_authenticate"] = ['Bearer resource_metadata="https://r/m", error="invalid_token"']
    tool = {"securitySchemes": [{"type": "oauth2", "scopes": []}]}
    summary = linking_ui_summary(metadata_published=True, tool=tool, challenge=check_challenge_result(result))
    assert summary.missing == [
        """the result's _meta["mcp/www_authenticate"] has no Bearer challenge with both error and error_description"""
    ]


def test_describe_cuts_long_lists() -> None:
    problems = [Problem("AUTH-TOOL-01", f"tools[{i}]", "bad") for i in range(25)]
    text = describe(problems, limit=2)
    assert text == "tools[0]: bad; tools[1]: bad; … and 23 more"


def _metaschema_checks(checker: SchemaChecker, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The nodes ``checker`` validates against a metaschema from now on (each one it did not find memoized)."""
    checked: list[Any] = []
    real = checker._metaschema

    class Counting:
        def __init__(self, cls: Any) -> None:
            self.meta = real(cls)

        def iter_errors(self, node: Any) -> Any:
            checked.append(node)
            return self.meta.iter_errors(node)

    monkeypatch.setattr(checker, "_metaschema", Counting)
    return checked


def test_checkers_share_node_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.judges.declarations as declarations

    monkeypatch.setattr(declarations, "_SHARED_VERDICTS", {})
    monkeypatch.setattr(declarations, "_shared_chars", 0)  # (however much the tests before shared)
    schema = {"type": "object", "properties": {"q": {"type": "strung"}, "n": {"type": "integer", "minimum": 0}}}
    first = SchemaChecker().problems(schema)
    second = SchemaChecker()
    checked = _metaschema_checks(second, monkeypatch)
    assert second.problems(schema) == first and first
    assert checked == []  # every node's verdict came from the first checker's work


def test_a_full_shared_memo_still_judges_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.judges.declarations as declarations

    monkeypatch.setattr(declarations, "_SHARED_VERDICTS", {})
    monkeypatch.setattr(declarations, "_SHARED_CHARS", 0)  # nothing more is shared
    schema = {"type": "object", "properties": {"a": {"enum": "not-a-list"}}}
    first = SchemaChecker().problems(schema)
    second = SchemaChecker()
    checked = _metaschema_checks(second, monkeypatch)
    assert second.problems(schema) == first and first
    assert checked  # judged again, to the same verdict


def test_checkers_share_compiled_validators(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second checker of the same listing compiles no output schema again and judges results alike; a schema
    spelt in another key order is compiled on its own."""
    from conformance.judges import declarations

    monkeypatch.setattr(declarations, "_SHARED_VALIDATORS", declarations.SharedMemo(10_000_000))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tools = [{"name": "t", "description": "", "inputSchema": {"type": "object"}, "outputSchema": schema}]
    bad = {"content": [], "structuredContent": {"n": "1"}}
    first = DeclarationChecker()
    assert first.check_tools(tools) == []
    compiled: list[Any] = []
    compile_schema = SchemaChecker.compile

    def counting(self: SchemaChecker, schema: Any) -> Any:
        compiled.append(schema)
        return compile_schema(self, schema)

    monkeypatch.setattr(SchemaChecker, "compile", counting)
    second = DeclarationChecker()
    assert second.check_tools(json.loads(json.dumps(tools))) == []
    assert compiled == [] and second.check_result("t", bad) == first.check_result("t", bad) != []
    reordered = {"required": ["n"], "properties": {"n": {"type": "integer"}}, "type": "object"}
    DeclarationChecker().check_tools([{**tools[0], "outputSchema": reordered}])
    assert compiled == [reordered]
