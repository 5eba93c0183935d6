"""The profile tool (PROF-01 … PROF-07, PROF-10, PROF-12, PROF-14): find it, judge its declaration and its result.

Every function returns a list of messages (empty = conforming) and never raises on hostile input, so that a check
can report all defects at once. PROF-05's "equivalent to the profile record schema" is decided semantically: the
declared outputSchema is compiled and must accept and reject the same probe records as the record schema shipped in
``conformance/schemas/profile-record.schema.json`` (whatever the spelling: ``$defs``, ``allOf``, ``[^\\s]``, ...).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing.exceptions import Unresolvable

from conformance.core._values import is_number
from conformance.host import _json as target_json
from conformance.judges._core import Verdict, judged, skipped
from conformance.judges.declarations import (
    DEFAULT_VENDOR,
    MARKER_TRUE,
    SchemaChecker,
    SharedMemo,
    json_key,
    profile_marker,
    security_scheme_problems,
    security_schemes_of,
    short_json,
)

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "profile-record.schema.json"
OPTIONAL_FIELDS = ("name", "email", "nickname")
RECORD_FIELDS = ("id", *OPTIONAL_FIELDS)
# Values that stand for "unknown" rather than a real display value (PROF-14; compared stripped of whitespace and
# of the brackets around them, case-insensitively). No real name among them ("Na" and "Nil" are names).
PLACEHOLDERS = frozenset(
    {
        "unknown",
        "n/a",
        "n.a.",
        "none",
        "null",
        "undefined",
        "-",
        "--",
        "\u2013",
        "\u2014",
        "?",
        "??",
        "not available",
        "not provided",
        "not set",
        "no name",
        "no email",
        "no nickname",
        "tbd",
        "placeholder",
    }
)
# Whole-value phrases (compared as PLACEHOLDERS are); "Unknown Artist", "Na", "Nil", "Nan" and the like stay names.
PLACEHOLDER_PHRASES = frozenset(
    {
        "not applicable",
        "not specified",
        "unspecified",
        "unavailable",
        "no value",
        "empty",
        "missing",
        "unknown user",
        "unknown name",
        "no display name",
        "no-name",
        "noname",
        "no email address",
        "not-available",
        "n\\a",
        "#n/a",
        "(null)",
        "tba",
        "todo",
        "changeme",
        "your name",
        "first last",
        "firstname lastname",
        "john doe",
        "jane doe",
    }
)
# Shorter needles (an email local part "a", a name "Al") would flag ordinary ids by coincidence.
MIN_ENCODED_CHARS = 3


@cache
def record_schema() -> dict[str, Any]:
    """The profile record schema shipped with the harness."""
    document: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return document


@cache
def _record_validator() -> Draft202012Validator:
    return Draft202012Validator(record_schema())


# ----------------------------------------------------------------------------------------------- PROF-01


@dataclass
class ProfileToolSearch:
    """Which tools carry ``_meta["<vendor>/profile"]: true``."""

    marked: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def tool(self) -> Mapping[str, Any] | None:
        """The profile tool when exactly one is designated."""
        return self.marked[0] if len(self.marked) == 1 else None

    @property
    def names(self) -> list[str]:
        return [str(t.get("name")) for t in self.marked]

    def problems(self) -> list[str]:
        """PROF-01: at most one. (None at all is not a problem: report it as INFO.)"""
        if len(self.marked) > 1:
            return [f"{len(self.marked)} tools carry the profile marker, at most one may: {self.names}"]
        return []


def find_profile_tool(tools: Sequence[Any], vendor: str = DEFAULT_VENDOR) -> ProfileToolSearch:
    """The tools marked as the profile tool: exactly boolean true (a string "true" marks nothing, AUTH-TOOL-06)."""
    return ProfileToolSearch([t for t in tools if isinstance(t, Mapping) and profile_marker(t, vendor) == MARKER_TRUE])


# ----------------------------------------------------------------------------------------- declaration


def input_schema_problems(tool: Mapping[str, Any]) -> list[str]:
    """PROF-02: inputSchema is an object schema with no properties and ``additionalProperties: false``."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping):
        return [f"inputSchema must be a JSON Schema object, got {short_json(schema)}"]
    found = [f"inputSchema {m}" for m in SchemaChecker().problems(schema)]
    properties = schema.get("properties")
    if properties not in (None, {}):
        found.append(f"inputSchema must declare no properties, got {short_json(properties)}")
    if schema.get("additionalProperties") is not False:
        found.append(
            f"inputSchema must set additionalProperties: false, got {short_json(schema.get('additionalProperties'))}"
        )
    for keyword in ("patternProperties", "required"):
        if schema.get(keyword) not in (None, {}, []):
            found.append(f"inputSchema must not declare {keyword}, got {short_json(schema[keyword])}")
    return found


def annotation_problems(tool: Mapping[str, Any]) -> list[str]:
    """PROF-03: readOnlyHint true, destructiveHint false, openWorldHint false (absent hints default otherwise)."""
    annotations = tool.get("annotations")
    if not isinstance(annotations, Mapping):
        return [f"annotations must be an object with the three hints, got {short_json(annotations)}"]
    wanted = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
    return [
        f"annotations.{hint} must be {str(value).lower()}, got {short_json(annotations.get(hint, '<absent>'))}"
        for hint, value in wanted.items()
        if annotations.get(hint) is not value
    ]


def security_problems(tool: Mapping[str, Any]) -> list[str]:
    """PROF-04: securitySchemes declares oauth2 (and, the tool being authenticated, not noauth)."""
    declared = security_schemes_of(tool)
    if declared is None:
        return ["securitySchemes is missing; the profile tool must declare oauth2"]
    schemes, location = declared
    shape = security_scheme_problems(schemes)
    if shape:
        return [f"{location}{m}" for m in shape]
    kinds = [s.get("type") for s in schemes]
    found = []
    if "oauth2" not in kinds:
        found.append(f"{location} must declare oauth2, got {kinds}")
    if "noauth" in kinds:
        found.append(f"{location} declares noauth: the profile tool is authenticated, never anonymous")
    return found


def _equivalence_probes() -> tuple[list[tuple[Any, str]], list[tuple[Any, str]]]:
    accept: list[tuple[Any, str]] = [
        ({"id": "a"}, "a one-character id"),
        ({"id": "42"}, "a numeric id serialized as a string"),
        ({"id": " a "}, "an id with surrounding spaces"),
        ({"id": "usr 01\tx"}, "an id with inner whitespace"),
        ({"id": "ü-✓"}, "a non-ASCII id"),
        ({"id": "x" * 300}, "a long id"),
        ({"id": "u1", "name": "Ada", "email": "ada@example.com", "nickname": "work"}, "all four fields"),
        ({"id": "u1", "name": ""}, "an empty name (a string)"),
        ({"id": "u1", "email": ""}, "an empty email (a string)"),
        ({"id": "u1", "nickname": ""}, "an empty nickname (a string)"),
        ({"id": "u1", "email": "not an email"}, "any string as email"),
        ({"id": "u1", "nickname": "n" * 500}, "a long nickname"),
    ]
    reject: list[tuple[Any, str]] = [
        ({}, "a record without id"),
        ({"name": "Ada"}, "a record without id"),
        ({"id": ""}, "an empty id"),
        ({"id": " "}, "a whitespace-only id"),
        ({"id": "\t\n "}, "a whitespace-only id"),
        ({"id": 42}, "a numeric id"),
        ({"id": None}, "a null id"),
        ({"id": ["a"]}, "an array id"),
        ({"id": "u1", "extra": "x"}, "an additional property"),
        ({"id": "u1", "profile": {"id": "u1"}}, "an additional property"),
        ({"id": "u1", "name": 1}, "a non-string name"),
        ({"id": "u1", "email": None}, "a null email"),
        ({"id": "u1", "nickname": True}, "a non-string nickname"),
        (["u1"], "a non-object record"),
        ("u1", "a non-object record"),
    ]
    return accept, reject


# PROF-05's verdicts by the declared outputSchema's JSON: every account, era and named target of a run declares the
# same profile tool as often as not, and the verdict depends on the schema alone.
_OUTPUT_SCHEMA_VERDICTS = SharedMemo(1_000_000)


def output_schema_problems(tool: Mapping[str, Any]) -> list[str]:
    """PROF-05: outputSchema is equivalent to the profile record schema (decided by probe records)."""
    schema = tool.get("outputSchema")
    if schema is None:
        return ["outputSchema is missing; it must be the profile record schema"]
    key = json_key(schema)
    known: tuple[str, ...] | None = _OUTPUT_SCHEMA_VERDICTS.get(key) if key is not None else None
    if known is not None:
        return list(known)
    found = _output_schema_problems(schema)
    if key is not None:
        _OUTPUT_SCHEMA_VERDICTS.put(key, tuple(found), len(key))
    return found


def _output_schema_problems(schema: Any) -> list[str]:
    checker = SchemaChecker()
    invalid = checker.problems(schema)
    if invalid:
        return [f"outputSchema {m}" for m in invalid]
    validator = checker.compile(schema)
    accept, reject = _equivalence_probes()
    found: list[str] = []
    told: set[str] = set()  # one message per kind of difference
    try:
        for record, what in accept:
            if what not in told and not validator.is_valid(record):
                found.append(f"outputSchema rejects {what} {short_json(record)} that the record schema allows")
                told.add(what)
        for record, what in reject:
            if what not in told and validator.is_valid(record):
                found.append(f"outputSchema accepts {what} {short_json(record)} that the record schema forbids")
                told.add(what)
    except (Unresolvable, RecursionError) as exc:
        return [f"outputSchema cannot be evaluated: {type(exc).__name__}: {exc}"[:300]]
    return found


def declaration_problems(tool: Mapping[str, Any]) -> dict[str, list[str]]:
    """PROF-02 … PROF-05 by rule ID."""
    return {
        "PROF-02": input_schema_problems(tool),
        "PROF-03": annotation_problems(tool),
        "PROF-04": security_problems(tool),
        "PROF-05": output_schema_problems(tool),
    }


# ---------------------------------------------------------------------------------------------- result


def json_equal(a: Any, b: Any) -> bool:
    """JSON value equality: unlike Python's ``==``, true is not 1 and 1.0 is 1 only as numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _strict_loads(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return target_json.loads(text, parse_constant=refuse)


def result_problems(result: Any) -> list[str]:
    """PROF-06: isError false, the profile in structuredContent (fields at the top level), and exactly one text
    content item whose JSON equals structuredContent. An absent isError is false, as in MCP.
    """
    if not isinstance(result, Mapping):
        return [f"the result must be an object, got {short_json(result)}"]
    found: list[str] = []
    if result.get("isError", False) is not False:
        found.append(f"isError must be false, got {short_json(result.get('isError'))}")
    structured = result.get("structuredContent")
    if not isinstance(structured, dict):
        found.append(f"structuredContent must hold the profile object, got {short_json(structured)}")
    elif "id" not in structured:
        nested = [k for k, v in structured.items() if isinstance(v, Mapping) and "id" in v]
        if nested:
            found.append(f"profile fields are nested under {nested[0]!r}; they must sit at the top level")
    content = result.get("content")
    texts = (
        [item for item in content if isinstance(item, Mapping) and item.get("type") == "text"]
        if isinstance(content, list)
        else []
    )
    if len(texts) != 1:
        found.append(f"content must hold exactly one text item with the profile JSON, found {len(texts)}")
        return found
    text = texts[0].get("text")
    if not isinstance(text, str):
        found.append(f"the text item's text must be a string, got {short_json(text)}")
        return found
    try:
        parsed = _strict_loads(text)
    except (ValueError, RecursionError):
        found.append(f"the text item is not JSON: {text[:80]!r}")
        return found
    if isinstance(structured, dict) and not json_equal(parsed, structured):
        found.append(
            f"the text item's JSON {short_json(parsed)} differs from structuredContent {short_json(structured)}"
        )
    return found


def id_problems(record: Any) -> list[str]:
    """PROF-07: ``id`` is a string with a non-whitespace character (numeric ids must be serialized as strings)."""
    if not isinstance(record, Mapping) or "id" not in record:
        return ["the profile has no id"]
    pid = record["id"]
    if not isinstance(pid, str):
        hint = " (serialize numeric provider ids as strings)" if is_number(pid) else ""
        return [f"id must be a string, got {short_json(pid)}{hint}"]
    if not pid.strip():
        return [f"id must contain a non-whitespace character, got {pid!r}"]
    return []


def validate_profile_record(record: Any) -> list[str]:
    """The record against the shipped schema (every error, by path), plus PROF-07 in Python terms."""
    try:
        errors = sorted(_record_validator().iter_errors(record), key=lambda e: list(map(str, e.absolute_path)))
    except RecursionError:
        return ["the profile is nested too deeply to validate"]
    found = [f"at {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:200]}" for e in errors]
    if isinstance(record, Mapping) and isinstance(record.get("id"), str) and record["id"] and not record["id"].strip():
        found.append("id must contain a non-whitespace character")  # Python's isspace is wider than ECMA's \s
    return found


def _alnum(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


MIN_DERIVED_CHARS = 12  # of a digest or encoding found in an id: 48+ bits, never a coincidence


def _variants(value: str) -> list[str]:
    """The spellings a careless vendor feeds to an encoder: as given, trimmed, lower-cased, upper-cased."""
    stripped = value.strip()
    return list(dict.fromkeys([value, stripped, stripped.lower(), stripped.upper()]))


def _digests(value: str) -> list[bytes]:
    return [
        hashlib.new(name, v.encode()).digest() for v in _variants(value) for name in ("md5", "sha1", "sha256", "sha512")
    ]


def _b64_forms(data: bytes) -> list[str]:
    return [base64.b64encode(data).decode().rstrip("="), base64.urlsafe_b64encode(data).decode().rstrip("=")]


def _shares_window(pid: str, encoded: str, casefold: bool) -> bool:
    """True when MIN_DERIVED_CHARS consecutive characters of ``encoded`` appear in the id (a truncated or prefixed
    digest or encoding is still that digest or encoding)."""
    haystack, needle = (pid.casefold(), encoded.casefold()) if casefold else (pid, encoded)
    return any(needle[i : i + MIN_DERIVED_CHARS] in haystack for i in range(len(needle) - MIN_DERIVED_CHARS + 1))


def _windows(text: str) -> frozenset[str]:
    """Every run of MIN_DERIVED_CHARS consecutive characters of ``text``."""
    return frozenset(text[i : i + MIN_DERIVED_CHARS] for i in range(len(text) - MIN_DERIVED_CHARS + 1))


def _carries(pid: str, windows: frozenset[str]) -> bool:
    """True when the id holds one of ``windows`` (what :func:`_shares_window` decides for each of their sources)."""
    if len(pid) <= _CACHED_CHARS:
        return not windows.isdisjoint(_windows(pid))
    return any(window in pid for window in windows)


@dataclass(frozen=True)
class _Derived:
    """What a fact value's digests and name-based UUIDs put in an id, computed once per value: the windows of the
    digests' hex (case-folded) and base64 forms, and the UUIDs' hex."""

    digest_hex: frozenset[str]
    digest_b64: frozenset[str]
    uuids: tuple[str, ...]


_UUID_NAMESPACES = (uuid.NAMESPACE_DNS, uuid.NAMESPACE_URL, uuid.NAMESPACE_OID, uuid.NAMESPACE_X500)
_CACHED_CHARS = 4096  # longer values and ids are judged without the per-value cache (bounded memory)


def _derive(value: str) -> _Derived:
    digests = _digests(value)
    return _Derived(
        digest_hex=frozenset().union(*(_windows(d.hex().casefold()) for d in digests)),
        digest_b64=frozenset().union(*(_windows(enc) for d in digests for enc in _b64_forms(d))),
        uuids=tuple(
            make(ns, x).hex for x in _variants(value) for ns in _UUID_NAMESPACES for make in (uuid.uuid3, uuid.uuid5)
        ),
    )


_derive_cached = lru_cache(maxsize=64)(_derive)  # a run judges the same accounts' facts for every id it reads


def _holds_any(text: str, parts: tuple[str, ...]) -> bool:
    return any(part in text for part in parts)


def _derived(value: str) -> _Derived:
    return _derive_cached(value) if len(value) <= _CACHED_CHARS else _derive(value)


# PROF-10's derivation families: each takes (id, fact value) and says whether the id carries the value that way.
# The check's attack table (conformance/suites/profile/test_result.py) cites them one by one.
ID_DERIVATIONS: dict[str, Any] = {
    "the value itself, any case": lambda pid, v: v.strip().casefold() in pid.casefold(),
    "the value with separators dropped": lambda pid, v: (
        len(_alnum(v)) >= MIN_ENCODED_CHARS and _alnum(v) in _alnum(pid)
    ),
    "base64 or base64url of the value": lambda pid, v: any(
        len(enc) >= MIN_DERIVED_CHARS and _shares_window(pid, enc, False)
        for x in _variants(v)
        for enc in _b64_forms(x.encode())
    ),
    "hex of the value": lambda pid, v: any(
        _shares_window(pid, x.encode().hex(), True) for x in _variants(v) if len(x) * 2 >= MIN_DERIVED_CHARS
    ),
    "an MD5/SHA-1/SHA-256/SHA-512 digest of the value (hex, whole or truncated)": lambda pid, v: _carries(
        pid.casefold(), _derived(v).digest_hex
    ),
    "a digest of the value in base64 or base64url": lambda pid, v: _carries(pid, _derived(v).digest_b64),
    "a name-based UUID (v3/v5) of the value": lambda pid, v: _holds_any(_alnum(pid), _derived(v).uuids),
}


def _id_findings(record: Any, known: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """(what, message) for every identity fact the id carries, in the first derivation that finds it."""
    if not isinstance(record, Mapping) or not isinstance(record.get("id"), str):
        return []
    pid = record["id"]
    facts: list[tuple[str, str]] = []
    for source in (record, known or {}):
        for key in ("email", "name", "organization"):
            value = source.get(key)
            if isinstance(value, str):
                facts.append((key, value))
                if key == "email" and "@" in value:
                    facts.append((LOCAL_PART, value.rsplit("@", 1)[0]))
    found: list[tuple[str, str]] = []
    reported: set[str] = set()
    for what, value in facts:
        needle = value.strip()
        if len(needle) < MIN_ENCODED_CHARS or what in reported:
            continue
        for how, derived in ID_DERIVATIONS.items():
            if derived(pid, needle):
                found.append((what, f"id {pid!r} encodes the {what} {needle!r} ({how})"))
                reported.add(what)
                break
    return found


LOCAL_PART = "email local part"


def id_encoding_problems(record: Any, *, known: Mapping[str, str] | None = None) -> list[str]:
    """PROF-10: the id is not, and does not contain, the email, the display name or an organization, in any of the
    derivations of :data:`ID_DERIVATIONS` (as is, separators dropped, base64, hex, digests, name-based UUIDs).
    ``known`` adds identity facts the harness has from elsewhere (the test account's email, name, organization).
    The email's local part alone is reported, not judged (:func:`id_local_part_notes`): a short handle may be part
    of an opaque id by coincidence.
    """
    return [message for what, message in _id_findings(record, known) if what != LOCAL_PART]


def id_local_part_notes(record: Any, *, known: Mapping[str, str] | None = None) -> list[str]:
    """PROF-10's reported part: the id carries the email's local part (while not the whole email)."""
    findings = _id_findings(record, known)
    if any(what == "email" for what, _ in findings):
        return []  # the whole email is judged already
    return [message for what, message in findings if what == LOCAL_PART]


# PROF-12's cases: the forms of "no value" that are blank (the rule names null, empty and whitespace-only).
BLANK_NULL = "null"
BLANK_EMPTY = "an empty string"
BLANK_WHITESPACE = "whitespace only"
BLANK_UNICODE = "Unicode whitespace only (no-break, ideographic or other spaces)"
BLANK_INVISIBLE = "invisible characters only (zero-width space or joiner, byte order mark)"
BLANK_FORMS = (BLANK_NULL, BLANK_EMPTY, BLANK_WHITESPACE, BLANK_UNICODE, BLANK_INVISIBLE)


def _is_invisible(char: str) -> bool:
    """A character that renders as nothing: whitespace, or a format character (U+200B, U+2060, U+FEFF, ...)."""
    return char.isspace() or unicodedata.category(char) == "Cf"


def blank_form(value: Any) -> str | None:
    """Which of PROF-12's blank forms ``value`` is (None: a value with something to show)."""
    if value is None:
        return BLANK_NULL
    if not isinstance(value, str):
        return None
    if not value:
        return BLANK_EMPTY
    if all(c in " \t\n\r\f\v" for c in value):
        return BLANK_WHITESPACE
    if not value.strip():
        return BLANK_UNICODE
    if all(_is_invisible(c) for c in value):
        return BLANK_INVISIBLE
    return None


def invented_field_findings(record: Any) -> list[tuple[str, str]]:
    """PROF-12 as ``(case, message)``: optional display fields present as null, empty, blank or invisible."""
    if not isinstance(record, Mapping):
        return []
    found: list[tuple[str, str]] = []
    for key in OPTIONAL_FIELDS:
        if key not in record or (form := blank_form(record[key])) is None:
            continue
        shown = "null" if record[key] is None else repr(record[key])
        found.append((form, f"{key} is {shown} ({form}); omit an unavailable field instead"))
    return found


def invented_field_problems(record: Any) -> list[str]:
    """PROF-12: optional display fields that are present are not null, empty, whitespace-only or invisible."""
    return [message for _, message in invented_field_findings(record)]


def _placeholder_key(value: str) -> str:
    return value.strip().strip("()[]<>{}").strip().casefold()


# PROF-14's cases: the forms real services use for "no value" (contract A Profile id rule 8: omit, do not invent).
PH_NAMED = "a word the rule names (unknown, N/A, none, -), in any case"
PH_WORDS = "another word or phrase for no value (null, undefined, not available, TBD, unknown user ...)"
PH_DASHES = "dashes, dots, underscores or question marks only (--, \u2013, \u2014, ..., ?)"
PH_ZERO = "a zero-like value (0, 0.0, -1, false, [], {})"
PH_EMAIL = "a placeholder e-mail address (noreply@..., user@example.com)"
PH_URL = "a placeholder URL (about:blank, a bare scheme, an example.com address)"
PLACEHOLDER_FORMS = (PH_NAMED, PH_WORDS, PH_DASHES, PH_ZERO, PH_EMAIL, PH_URL)

NAMED_PLACEHOLDERS = frozenset({"unknown", "n/a", "none", "-"})
PLACEHOLDER_DASHES = re.compile(r"^[-\u2010-\u2015\u2212\u30fc_.?*~/\\|#]+$")
ZERO_LIKE = frozenset({"0", "00", "000", "0.0", "0.00", "-1", "false", "[]", "{}", "0x0"})
# Local parts that stand for nobody, at any domain; others only at a domain reserved for examples (RFC 2606).
NOBODY_LOCAL_PARTS = frozenset(
    {
        "noreply",
        "no-reply",
        "no_reply",
        "donotreply",
        "do-not-reply",
        "do_not_reply",
        "nobody",
        "unknown",
        "none",
        "null",
        "undefined",
        "placeholder",
        "n/a",
        "na",
        "invalid",
        "anonymous",
    }
)
EXAMPLE_LOCAL_PARTS = frozenset({"user", "email", "test", "example", "name", "someone", "john.doe", "jane.doe"})
EXAMPLE_DOMAINS = frozenset({"example.com", "example.net", "example.org", "email.com", "domain.com", "test.com"})
PLACEHOLDER_TLDS = (".example", ".invalid", ".localhost")
PLACEHOLDER_EMAIL = re.compile(r"^([^@\s]+)@([^@\s]+)$")
PLACEHOLDER_URL = re.compile(
    r"^(about:blank|https?://?|https?://(www\.)?(example\.(com|net|org)|localhost)(/.*)?"
    r"|https?://[^/\s]*\.(example|invalid|localhost)(/.*)?)$",
    re.IGNORECASE,
)


def _placeholder_email(value: str) -> bool:
    match = PLACEHOLDER_EMAIL.match(value.strip())
    if match is None:
        return False
    local, domain = match.group(1).casefold(), match.group(2).casefold().rstrip(".")
    reserved = domain in EXAMPLE_DOMAINS or domain.endswith(PLACEHOLDER_TLDS) or domain in {"invalid", "localhost"}
    return local in NOBODY_LOCAL_PARTS or (local in EXAMPLE_LOCAL_PARTS and reserved)


def placeholder_form(value: Any, *, real: frozenset[str] = frozenset()) -> str | None:
    """Which of PROF-14's placeholder forms ``value`` is (None: none). ``real`` holds values known to be the
    account's own (its e-mail from the ID token), never placeholders."""
    if not isinstance(value, str) or not value.strip() or value.strip().casefold() in real:
        return None
    key = _placeholder_key(value)
    if key in NAMED_PLACEHOLDERS:
        return PH_NAMED
    if PLACEHOLDER_DASHES.match(key):
        return PH_DASHES
    if key in PLACEHOLDERS or key in PLACEHOLDER_PHRASES:
        return PH_WORDS
    if key in ZERO_LIKE or value.strip() in ZERO_LIKE:
        return PH_ZERO
    if _placeholder_email(value):
        return PH_EMAIL
    if PLACEHOLDER_URL.match(value.strip()):
        return PH_URL
    return None


def placeholder_findings(record: Any, *, known: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """PROF-14 as ``(case, message)``: optional display fields holding a value that stands for "no value"."""
    if not isinstance(record, Mapping):
        return []
    real = frozenset(v.strip().casefold() for v in (known or {}).values() if isinstance(v, str))
    found: list[tuple[str, str]] = []
    for key in OPTIONAL_FIELDS:
        if (form := placeholder_form(record.get(key), real=real)) is not None:
            found.append(
                (form, f"{key} is the placeholder {record[key]!r} ({form}); omit an unavailable field instead")
            )
    return found


def placeholder_problems(record: Any, *, known: Mapping[str, str] | None = None) -> list[str]:
    """PROF-14: no optional display field holds a placeholder ("unknown", "N/A", "none", "-", a dash, a zero, a
    placeholder e-mail address or URL ...) standing for a value the service does not have."""
    return [message for _, message in placeholder_findings(record, known=known)]


@dataclass
class ProfileVerdicts:
    """Every result rule over one profile-tool result, keyed by rule ID (empty list = passed)."""

    record: dict[str, Any] | None
    problems: dict[str, list[str]]


def judge_result(result: Any, *, known: Mapping[str, str] | None = None) -> ProfileVerdicts:
    """PROF-06, 07, 10, 12, 14 over one result; the record is ``structuredContent`` when it is an object."""
    structured = result.get("structuredContent") if isinstance(result, Mapping) else None
    record = structured if isinstance(structured, dict) else None
    return ProfileVerdicts(
        record=record,
        problems={
            "PROF-06": result_problems(result),
            "PROF-07": id_problems(record),
            "PROF-10": id_encoding_problems(record, known=known),
            "PROF-12": invented_field_problems(record),
            "PROF-14": placeholder_problems(record),
        },
    )


# ------------------------------------------------------------------------------------ as document judges

DECLARATION_RULES = ("PROF-02", "PROF-03", "PROF-04", "PROF-05")


def declaration(tools: Sequence[Any], *, vendor: str = "openai") -> list[Verdict]:
    """PROF-01 over a listing, and PROF-02 … 05 over the one tool marked ``_meta["<vendor>/profile"]: true``."""
    search = find_profile_tool(tools, vendor)
    verdicts = [judged("PROF-01", search.problems())]
    if search.tool is None:
        why = "several tools carry the profile marker" if search.marked else "no tool is marked as the profile tool"
        return verdicts + [skipped(rule, why) for rule in DECLARATION_RULES]
    problems = declaration_problems(search.tool)
    name = search.tool.get("name")
    return verdicts + [
        judged(rule, [f"{name!r}: " + "; ".join(problems[rule])] if problems[rule] else [])
        for rule in DECLARATION_RULES
    ]


def profile_result(document: Any, *, known: Mapping[str, str] | None = None) -> list[Verdict]:
    """A tools/call result of the profile tool. ``known``: the account's email and display name, when known
    (``{"email": ..., "name": ...}``), for PROF-10."""
    verdicts = judge_result(document, known=known)
    return [judged(rule, problems) for rule, problems in verdicts.problems.items()]


def profile_record(document: Any, *, known: Mapping[str, str] | None = None) -> list[Verdict]:
    """A bare profile record (``structuredContent`` of the result): PROF-07, 10, 12, 14."""
    return [
        judged("PROF-07", id_problems(document)),
        judged("PROF-10", id_encoding_problems(document, known=known)),
        judged("PROF-12", invented_field_problems(document)),
        judged("PROF-14", placeholder_problems(document)),
    ]
