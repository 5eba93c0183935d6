"""Judging tool declarations and tool results (AUTH-TOOL-01/02/05/06, AUTH-CHAL-01/02).

Every check returns a list of :class:`Problem` (empty = conforming) instead of raising, so that a check can report
all defects of a target at once and say exactly where each one is. Inputs are untrusted JSON from the target:
nothing here may crash on a hostile shape (wrong types, huge nesting, invalid schemas, unparseable challenges).

Schemas are never fetched: ``$ref`` resolves only within the schema itself and the bundled metaschemas, so a
declaration cannot make the host reach the network.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

from conformance.host.challenge import Challenge, ChallengeParseError, parse_www_authenticate
from conformance.judges._core import Problem as Problem  # re-exported: the checks' and tests' name for it
from conformance.judges._core import describe as describe

DEFAULT_VENDOR = "openai"
CHALLENGE_META_KEY = "mcp/www_authenticate"
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
SCHEME_TYPES = ("noauth", "oauth2")
_EMPTY_REGISTRY: Registry[Any] = Registry()
_MESSAGE_CHARS = 300


def short_json(value: Any) -> str:
    """A value as compact JSON for a problem text, cut to 80 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def tool_label(tool: Any, index: int | None = None) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    at = f"tools[{index}]" if index is not None else "tool"
    return f"tool {name!r} ({at})" if isinstance(name, str) else at


# ----------------------------------------------------------------------------------------------- JSON Schema


# Keywords whose values are (maps or arrays of) subschemas, across drafts 4 to 2020-12.
_SCHEMA_KEYWORDS = frozenset(
    {
        "additionalItems", "additionalProperties", "contains", "else", "if", "items", "not", "propertyNames",
        "then", "unevaluatedItems", "unevaluatedProperties",
    }
)  # fmt: skip
_SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAP_KEYWORDS = frozenset(
    {"$defs", "definitions", "dependentSchemas", "dependencies", "patternProperties", "properties"}
)


# Parts of a node that the metaschemas constrain only by type (string annotations, map keys with no
# propertyNames rule, arrays of unique strings). Blanking them leaves the verdict unchanged and lets nodes that
# differ only in names and prose share one metaschema check.
_ANNOTATION_STRINGS = frozenset({"title", "description", "$comment"})
_FREE_KEY_MAPS = frozenset({"properties", "$defs", "definitions", "dependentSchemas"})


def _canonical(node: dict[str, Any]) -> dict[str, Any]:
    canonical = dict(node)
    for keyword, value in node.items():
        if keyword in _ANNOTATION_STRINGS and isinstance(value, str):
            canonical[keyword] = ""
        elif keyword in _FREE_KEY_MAPS and isinstance(value, Mapping) and all(v == {} for v in value.values()):
            canonical[keyword] = {str(i): {} for i in range(len(value))}
        elif (
            keyword == "required"
            and isinstance(value, list)
            and all(isinstance(v, str) for v in value)
            and len(set(value)) == len(value)
        ):
            canonical[keyword] = [str(i) for i in range(len(value))]
    return canonical


# The metaschema verdicts of nodes, shared by every checker of the process: a run judges the same listing once per
# account, MCP era and named target, and a node's verdict depends on its dialect and content only. Bounded by the
# characters of its keys; past that, each checker's own memo still spares its listing a second check of a node.
_SHARED_VERDICTS: dict[tuple[type[Validator], str], str | None] = {}
_SHARED_CHARS = 2_000_000
_shared_chars = 0
_METASCHEMAS: dict[type[Validator], Validator] = {}  # a dialect's metaschema validator, built once


def _share(cls: type[Validator], key: str, verdict: str | None) -> None:
    global _shared_chars
    if _shared_chars + len(key) <= _SHARED_CHARS:  # (racing threads may add a key twice: the bound stays near)
        _shared_chars += len(key)
        _SHARED_VERDICTS[(cls, key)] = verdict


class SharedMemo:
    """A process-wide memo of pure judgements keyed by a document's JSON text, bounded by the characters of its
    keys: past the bound nothing more is kept and every further document is judged afresh (to the same verdict).

    Each named target of a fleet lists, declares and answers alike what the others do as often as not; a key is
    the document's JSON in its own key order (``json_key``), so documents that differ only in that order, which
    can change which error is reported first, never share an entry.
    """

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.used = 0
        self.entries: dict[Any, Any] = {}

    def get(self, key: Any, default: Any = None) -> Any:
        return self.entries.get(key, default)

    def put(self, key: Any, value: Any, size: int) -> None:
        if self.used + size <= self.chars:  # (racing threads may add a key twice: the bound stays near)
            self.used += size
            self.entries[key] = value


def json_key(document: Any) -> str | None:
    """``document`` as compact JSON in its own key order, the key of a :class:`SharedMemo`; None when it has no
    JSON text (nested too deeply, or not JSON)."""
    try:
        return json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


# The instance validators of output schemas, shared by every checker of the process (a compiled validator holds no
# state of its own between calls: each validation evolves it into new validators).
_SHARED_VALIDATORS = SharedMemo(2_000_000)


class SchemaChecker:
    """Validity of JSON Schema documents, honouring ``$schema`` (Draft 2020-12 when absent).

    Checking a whole schema against the 2020-12 metaschema is slow (``$dynamicRef`` across vocabularies), and a
    target may declare thousands of tools whose schemas share most of their parts. So a schema is checked node by
    node: each object node is validated *shallowly* (its subschemas replaced by ``{}``, which every draft accepts
    as a schema) and the verdict is memoized by the node's canonical JSON (for the whole process); then each
    subschema is checked the same way. Metaschema keywords constrain a node and the shape of its containers, never
    the content of a subschema from outside, so the verdict equals a whole-document check (the tests compare both).
    """

    def __init__(self, default: type[Validator] = Draft202012Validator) -> None:
        self.default = default
        self._meta = _METASCHEMAS
        self._verdicts: dict[tuple[type[Validator], str], str | None] = {}

    def dialect(self, schema: Mapping[str, Any]) -> type[Validator] | str:
        """The validator class for ``schema``, or a message when ``$schema`` names no known dialect."""
        uri = schema.get("$schema")
        if uri is None:
            return self.default
        if not isinstance(uri, str):
            return f"`$schema` must be a string, got {short_json(uri)}"
        cls = validator_for({"$schema": uri}, default=None)
        if cls is None:
            return f"`$schema` {uri!r} names no JSON Schema dialect the host knows"
        return cls

    def _metaschema(self, cls: type[Validator]) -> Validator:
        meta = self._meta.get(cls)
        if meta is None:
            meta_cls = validator_for(cls.META_SCHEMA, default=cls)
            meta = meta_cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
            self._meta[cls] = meta
        return meta

    def _node_error(self, cls: type[Validator], node: Any) -> str | None:
        """The first metaschema error of one node (subschemas stubbed out), memoized; None when valid."""
        try:
            key: str | None = json.dumps(node, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):
            key = None
        if key is not None:
            for memo in (self._verdicts, _SHARED_VERDICTS):
                if (cls, key) in memo:
                    return memo[(cls, key)]
        error = best_match(self._metaschema(cls).iter_errors(node))
        verdict = None
        if error is not None:
            at = "/".join(str(p) for p in error.absolute_path)
            verdict = f"{at}\0{error.message[:_MESSAGE_CHARS]}"
        if key is not None:
            self._verdicts[(cls, key)] = verdict
            _share(cls, key, verdict)
        return verdict

    def _first_error(self, cls: type[Validator], node: Any, path: str) -> str | None:
        if not isinstance(node, Mapping):
            found = self._node_error(cls, node)
            return None if found is None else self._at(path, found)
        shallow: dict[str, Any] = dict(node)
        children: list[tuple[str, Any]] = []
        for keyword, value in node.items():
            if keyword in _SCHEMA_KEYWORDS and isinstance(value, Mapping):
                shallow[keyword] = {}
                children.append((keyword, value))
            elif keyword in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                shallow[keyword] = [{} if isinstance(v, Mapping) else v for v in value]
                children += [(f"{keyword}/{i}", v) for i, v in enumerate(value) if isinstance(v, Mapping)]
            elif keyword in _SCHEMA_MAP_KEYWORDS and isinstance(value, Mapping):
                shallow[keyword] = {k: {} if isinstance(v, Mapping) else v for k, v in value.items()}
                children += [(f"{keyword}/{k}", v) for k, v in value.items() if isinstance(v, Mapping)]
        found = self._node_error(cls, _canonical(shallow))
        if found is not None:
            return self._at(path, found)
        for where, child in children:
            found = self._first_error(cls, child, f"{path}/{where}" if path else where)
            if found is not None:
                return found
        return None

    @staticmethod
    def _at(path: str, found: str) -> str:
        inner, message = found.split("\0", 1)
        at = "/".join(p for p in (path, inner) if p)
        return f"is not a valid JSON Schema{f' at {at}' if at else ''}: {message}"

    def problems(self, schema: Any, *, require_object_type: bool = True) -> list[str]:
        """Messages saying why ``schema`` is not a valid JSON Schema object (empty when it is)."""
        if not isinstance(schema, Mapping):
            return [f"must be a JSON Schema object, got {short_json(schema)}"]
        cls = self.dialect(schema)
        if isinstance(cls, str):
            return [cls]
        found: list[str] = []
        try:
            error = self._first_error(cls, schema, "")
        except RecursionError:
            return ["is nested too deeply to check"]
        except Unresolvable as exc:  # pragma: no cover - the metaschemas are bundled
            return [f"cannot be checked: {exc}"]
        if error is not None:
            found.append(error)
        if require_object_type:
            kind = schema.get("type")
            if kind != "object" and not (isinstance(kind, list) and kind == ["object"]):
                found.append(f'must declare "type": "object" at its root (MCP), got {short_json(kind)}')
        return found

    def compile(self, schema: Mapping[str, Any]) -> Validator:
        """A validator for instances of ``schema`` (assumed valid), with no remote ``$ref`` resolution."""
        cls = self.dialect(schema)
        if isinstance(cls, str):
            cls = self.default
        return cls(schema, registry=_EMPTY_REGISTRY)


# ------------------------------------------------------------------------------------ declarations: pieces


def security_schemes_of(tool: Mapping[str, Any]) -> tuple[Any, str] | None:
    """The declared ``securitySchemes`` and where they were found.

    The contract puts them at the tool's top level; servers whose MCP serializer drops unknown fields put them
    in ``_meta["securitySchemes"]`` (the Apps SDK location). Top level wins when both exist.
    """
    if "securitySchemes" in tool:
        return tool["securitySchemes"], "securitySchemes"
    meta = tool.get("_meta")
    if isinstance(meta, Mapping) and "securitySchemes" in meta:
        return meta["securitySchemes"], '_meta["securitySchemes"]'
    return None


def security_scheme_problems(schemes: Any) -> list[str]:
    """AUTH-TOOL-02: an array of ``{type: noauth}`` or ``{type: oauth2, scopes: [string]}``.

    ``noauth`` may carry an empty ``scopes`` array (it carries no scope); unknown extra keys are tolerated.
    """
    if not isinstance(schemes, list):
        return [f"must be an array, got {short_json(schemes)}"]
    found: list[str] = []
    for i, scheme in enumerate(schemes):
        at = f"[{i}]"
        if not isinstance(scheme, Mapping):
            found.append(f"{at} must be an object, got {short_json(scheme)}")
            continue
        kind = scheme.get("type")
        if kind not in SCHEME_TYPES:
            found.append(f"{at}.type must be 'noauth' or 'oauth2', got {short_json(kind)}")
            continue
        scopes = scheme.get("scopes")
        if kind == "noauth":
            if "scopes" in scheme and scopes != []:
                found.append(f"{at} is noauth but carries scopes {short_json(scopes)}")
        elif not isinstance(scopes, list):
            found.append(f"{at} is oauth2 and needs a scopes array, got {short_json(scopes)}")
        else:
            bad = [s for s in scopes if not isinstance(s, str)]
            if bad:
                found.append(f"{at}.scopes must hold strings only, got {short_json(bad)}")
    return found


def annotation_problems(annotations: Any) -> list[str]:
    """AUTH-TOOL-01: ``annotations`` is an object whose hints, when present, are booleans."""
    if not isinstance(annotations, Mapping):
        return [f"must be an object, got {short_json(annotations)}"]
    found = [
        f"{hint} must be a boolean, got {short_json(annotations[hint])}"
        for hint in HINTS
        if hint in annotations and not isinstance(annotations[hint], bool)
    ]
    if "title" in annotations and not isinstance(annotations["title"], str):
        found.append(f"title must be a string, got {short_json(annotations['title'])}")
    return found


MARKER_ABSENT = "absent"
MARKER_TRUE = "true"
MARKER_FALSE = "false"
MARKER_INVALID = "invalid"


def profile_marker(tool: Any, vendor: str = DEFAULT_VENDOR) -> str:
    """State of ``_meta["<vendor>/profile"]``: absent, true, false or invalid (string, number, null, ...)."""
    meta = tool.get("_meta") if isinstance(tool, Mapping) else None
    key = f"{vendor}/profile"
    if not isinstance(meta, Mapping) or key not in meta:
        return MARKER_ABSENT
    value = meta[key]
    if value is True:
        return MARKER_TRUE
    if value is False:
        return MARKER_FALSE
    return MARKER_INVALID


# ------------------------------------------------------------------------------------ declarations: checker


@dataclass
class ToolIndex:
    """The tools of a listing by name, with their compiled output validators (built once, reused per result)."""

    tools: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    validators: dict[str, Validator] = field(default_factory=dict)


class DeclarationChecker:
    """AUTH-TOOL-01, 02, 05, 06 over a tools/list answer; structuredContent validation with cached validators."""

    def __init__(self, *, vendor: str = DEFAULT_VENDOR, default_dialect: type[Validator] = Draft202012Validator):
        self.vendor = vendor
        self.schemas = SchemaChecker(default_dialect)
        # Keyed by the schema's canonical JSON: equal schemas (common across tools) compile once.
        self._compiled: dict[str, Validator | None] = {}
        self.index = ToolIndex()

    # -- one tool

    def check_tool(self, tool: Any, index: int | None = None) -> list[Problem]:
        where = tool_label(tool, index)
        if not isinstance(tool, Mapping):
            return [Problem("AUTH-TOOL-01", where, f"a tool must be an object, got {short_json(tool)}")]
        found: list[Problem] = []

        def add(rule: str, part: str, messages: Iterable[str]) -> None:
            found.extend(Problem(rule, f"{where}{part}", m) for m in messages)

        name = tool.get("name")
        if not isinstance(name, str) or not name:
            add("AUTH-TOOL-01", ".name", [f"must be a non-empty string, got {short_json(name)}"])
        if "description" in tool and not isinstance(tool["description"], str):  # a missing one is reported
            add("AUTH-TOOL-01", ".description", [f"must be a string, got {short_json(tool['description'])}"])
        if "inputSchema" not in tool:
            add("AUTH-TOOL-01", ".inputSchema", ["is missing"])
        else:
            add("AUTH-TOOL-01", ".inputSchema", self.schemas.problems(tool["inputSchema"]))
        output_ok = False
        if "outputSchema" in tool:
            output_problems = self.schemas.problems(tool["outputSchema"])
            add("AUTH-TOOL-01", ".outputSchema", output_problems)
            output_ok = not output_problems
        if "annotations" in tool:
            add("AUTH-TOOL-01", ".annotations", annotation_problems(tool["annotations"]))
        meta = tool.get("_meta")
        if "_meta" in tool and not isinstance(meta, Mapping):
            add("AUTH-TOOL-01", "._meta", [f"must be an object, got {short_json(meta)}"])
        declared = security_schemes_of(tool)
        if declared is not None:
            schemes, location = declared
            add("AUTH-TOOL-02", f".{location}", security_scheme_problems(schemes))
        if profile_marker(tool, self.vendor) == MARKER_INVALID:
            value = meta[f"{self.vendor}/profile"]  # type: ignore[index]
            add(
                "AUTH-TOOL-06",
                f'._meta["{self.vendor}/profile"]',
                [f"must be a boolean (true marks the profile tool), got {short_json(value)}"],
            )
        if isinstance(name, str) and name:
            self.index.tools[name] = tool
            validator = self._validator(tool["outputSchema"]) if output_ok else None
            if validator is not None:
                self.index.validators[name] = validator
            else:
                self.index.validators.pop(name, None)
        return found

    def _validator(self, schema: Mapping[str, Any]) -> Validator | None:
        try:
            key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return None
        if key not in self._compiled:
            shared = json_key(schema)
            compiled = _SHARED_VALIDATORS.get((self.schemas.default, shared)) if shared is not None else None
            if compiled is None:
                compiled = self.schemas.compile(schema)
                if shared is not None:
                    _SHARED_VALIDATORS.put((self.schemas.default, shared), compiled, len(shared))
            self._compiled[key] = compiled
        return self._compiled[key]

    # -- a listing

    def check_tools(self, tools: Any) -> list[Problem]:
        """Every tool of a (merged, all pages) tools/list answer; also flags duplicate names."""
        if not isinstance(tools, list):
            return [Problem("AUTH-TOOL-01", "tools", f"must be an array, got {short_json(tools)}")]
        self.index = ToolIndex()
        found: list[Problem] = []
        seen: dict[str, int] = {}
        for i, tool in enumerate(tools):
            found.extend(self.check_tool(tool, i))
            name = tool.get("name") if isinstance(tool, Mapping) else None
            if isinstance(name, str) and name:
                if name in seen:
                    found.append(
                        Problem("AUTH-TOOL-01", tool_label(tool, i), f"duplicates the name of tools[{seen[name]}]")
                    )
                else:
                    seen[name] = i
        return found

    def profile_marker_problems(self, tools: Sequence[Any]) -> list[Problem]:
        """AUTH-TOOL-06 alone (a check deciding only that rule)."""
        return [p for i, t in enumerate(tools) for p in self.check_tool(t, i) if p.rule == "AUTH-TOOL-06"]

    # -- results

    def check_result(self, tool_name: str, result: Any) -> list[Problem]:
        """AUTH-TOOL-05: the result's ``structuredContent`` validates against the tool's ``outputSchema``.

        Also the result shape of the contract (content items ``{type: text, text: string}``, boolean isError)
        as AUTH-TOOL-05 problems, since a result that is not a result cannot be validated. Error results
        (``isError: true``) are exempt from the output schema, as in MCP.
        """
        where = f"result of {tool_name!r}"
        shape = result_shape_problems(result)
        found = [Problem("AUTH-TOOL-05", where, m) for m in shape]
        if not isinstance(result, Mapping) or result.get("isError") is True:
            return found
        validator = self.index.validators.get(tool_name)
        if validator is None:
            return found
        if "structuredContent" not in result:
            missing = "the tool declares an outputSchema but returned no structuredContent"
            return [*found, Problem("AUTH-TOOL-05", where, missing)]
        structured = result["structuredContent"]
        try:
            error = best_match(validator.iter_errors(structured))
        except Unresolvable as exc:
            return [*found, Problem("AUTH-TOOL-05", where, f"outputSchema has a $ref that does not resolve: {exc}")]
        except RecursionError:
            return [*found, Problem("AUTH-TOOL-05", where, "structuredContent is nested too deeply to validate")]
        if error is not None:
            at = "/".join(str(p) for p in error.absolute_path) or "(root)"
            found.append(
                Problem("AUTH-TOOL-05", f"{where}.structuredContent", f"at {at}: {error.message[:_MESSAGE_CHARS]}")
            )
        return found


def result_shape_problems(result: Any) -> list[str]:
    """The contract's tool result shape: content array of text items, object structuredContent, boolean isError."""
    if not isinstance(result, Mapping):
        return [f"a tool result must be an object, got {short_json(result)}"]
    found: list[str] = []
    content = result.get("content")
    if not isinstance(content, list):
        found.append(f"content must be an array, got {short_json(content)}")
    else:
        for i, item in enumerate(content):
            if not isinstance(item, Mapping):
                found.append(f"content[{i}] must be an object, got {short_json(item)}")
            elif item.get("type") == "text" and not isinstance(item.get("text"), str):
                found.append(f"content[{i}] is a text item whose text is not a string: {short_json(item.get('text'))}")
    if "structuredContent" in result and not isinstance(result["structuredContent"], Mapping):
        found.append(f"structuredContent must be an object, got {short_json(result['structuredContent'])}")
    if "isError" in result and not isinstance(result["isError"], bool):
        found.append(f"isError must be a boolean, got {short_json(result['isError'])}")
    return found


# ------------------------------------------------------------------------------------------ challenges


@dataclass
class ChallengeCheck:
    """AUTH-CHAL-01 verdict over one tool result, with the Bearer challenges that parsed."""

    problems: list[Problem]
    challenges: list[Challenge]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def has_error_and_description(self) -> bool:
        """What the linking UI needs (AUTH-CHAL-02): some Bearer challenge with both parameters non-empty."""
        return any(_filled(c.get("error")) and _filled(c.get("error_description")) for c in self.challenges)

    def first(self, name: str) -> str | None:
        """A parameter of the first Bearer challenge carrying it (e.g. ``error``, ``scope``)."""
        for challenge in self.challenges:
            value = challenge.get(name)
            if value is not None:
                return value
        return None


REQUIRED_CHALLENGE_PARAMS = ("resource_metadata", "error", "error_description")


def _filled(value: str | None) -> bool:
    return value is not None and value.strip() != ""


def check_challenge_result(result: Any, *, rule: str = "AUTH-CHAL-01") -> ChallengeCheck:
    """An auth failure inside a tool call: ``isError`` true, a text content item, and
    ``_meta["mcp/www_authenticate"]``: a non-empty array of strings, each exactly one Bearer challenge with
    non-empty ``resource_metadata``, ``error`` and ``error_description``.
    """
    where = "auth error result"
    found: list[Problem] = []
    challenges: list[Challenge] = []

    def add(part: str, message: str) -> None:
        found.append(Problem(rule, where + part, message))

    if not isinstance(result, Mapping):
        add("", f"must be a tool result object, got {short_json(result)}")
        return ChallengeCheck(found, challenges)
    if result.get("isError") is not True:
        add(".isError", f"must be true, got {short_json(result.get('isError'))}")
    content = result.get("content")
    texts = (
        [item for item in content if isinstance(item, Mapping) and item.get("type") == "text"]
        if isinstance(content, list)
        else []
    )
    if not any(isinstance(item.get("text"), str) for item in texts):
        add(".content", "has no text item ({type: text, text: string})")
    meta = result.get("_meta")
    if not isinstance(meta, Mapping) or CHALLENGE_META_KEY not in meta:
        add(f'._meta["{CHALLENGE_META_KEY}"]', "is missing")
        return ChallengeCheck(found, challenges)
    values = meta[CHALLENGE_META_KEY]
    part = f'._meta["{CHALLENGE_META_KEY}"]'
    if not isinstance(values, list) or not values:
        add(part, f"must be a non-empty array of strings, got {short_json(values)}")
        return ChallengeCheck(found, challenges)
    for i, value in enumerate(values):
        at = f"{part}[{i}]"
        if not isinstance(value, str):
            add(at, f"must be a string, got {short_json(value)}")
            continue
        try:
            parsed = parse_www_authenticate(value)
        except ChallengeParseError as exc:
            add(at, f"is not a parseable challenge ({exc}): {value[:120]!r}")
            continue
        if len(parsed) != 1 or parsed[0].scheme.lower() != "bearer":
            schemes = [c.scheme for c in parsed]
            add(at, f"must be exactly one Bearer challenge, got schemes {schemes}")
            continue
        challenge = parsed[0]
        challenges.append(challenge)
        missing = [name for name in REQUIRED_CHALLENGE_PARAMS if not _filled(challenge.get(name))]
        if missing:
            add(at, f"Bearer challenge lacks {', '.join(missing)}")
    return ChallengeCheck(found, challenges)


@dataclass
class LinkingSummary:
    """AUTH-CHAL-02: whether the host would show the account-linking UI, and which condition is missing."""

    missing: list[str]

    @property
    def ok(self) -> bool:
        return not self.missing


def linking_ui_summary(
    *,
    metadata_published: bool,
    tool: Mapping[str, Any] | None,
    challenge: ChallengeCheck | None,
) -> LinkingSummary:
    """All three must hold (contract, Authentication 7): protected-resource metadata published (PRM-01); the tool
    declares well-formed ``securitySchemes`` (TOOL-02); the runtime error result's challenge carries ``error`` and
    ``error_description`` (CHAL-01; an HTTP 401's challenge is not a runtime error result)."""
    missing: list[str] = []
    if not metadata_published:
        missing.append("the protected resource metadata is not published (AUTH-PRM-01)")
    declared = security_schemes_of(tool) if isinstance(tool, Mapping) else None
    if declared is None:
        missing.append("the tool declares no securitySchemes")
    elif security_scheme_problems(declared[0]):
        missing.append("the tool's securitySchemes are malformed (AUTH-TOOL-02)")
    if challenge is None:
        missing.append("no auth error result was obtained")
    elif not challenge.has_error_and_description:
        missing.append(
            f'the result\'s _meta["{CHALLENGE_META_KEY}"] has no Bearer challenge with both error and error_description'
        )
    return LinkingSummary(missing)
