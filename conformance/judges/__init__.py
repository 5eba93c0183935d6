"""The judges: a document (and the context a live run learns elsewhere) in, each rule's verdict out, in the verdict
layer's words (the report's ``Status`` at the catalog's ``Level``), with the rule IDs and messages of a live run.

    >>> from conformance import judges
    >>> [str(v.status) for v in judges.tools_list({"tools": []})][:1]
    ['passed']

Each kind of document has a judge (``KINDS``): it takes the document (parsed JSON, header text, or bytes for
images) and keyword context, and returns one :class:`Verdict` per rule it judges. The pure ``*_problems`` functions
beside them (a document in, one rule's problems out) are what the live checks call, so an offline verdict and a
live one say the same thing. :func:`judge` dispatches on a kind name, :func:`sniff` guesses the kind of a document,
and ``RULE_JUDGES`` says which kinds judge each rule (every rule a document alone can show).
``conformance validate FILE`` (``conformance.cli.validate``) is the command-line form.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.judges._core import Problem, Verdict, exit_code, level_of

if TYPE_CHECKING:
    from conformance.judges.auth import (
        as_metadata,
        authorization_response,
        challenge,
        cimd,
        jwks,
        prm,
        tool_result,
        tools_list,
    )
    from conformance.judges.compression import image, image_output
    from conformance.judges.platform import campaign, campaign_list, platform_error, ratelimit_headers, token_count
    from conformance.judges.profile import profile_record, profile_result

    KINDS: dict[str, Callable[..., list[Verdict]]]  # built by __getattr__ on first use

# Each kind's judge, by module, and the rules it judges: imported on first use (PEP 562), so that a check importing
# one judge module (``conformance.judges.platform``) does not load every other's dependencies (jsonschema, PyJWT,
# cryptography, Pillow).
_JUDGES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "prm": ("auth", "prm", ("AUTH-PRM-02", "AUTH-PRM-03", "AUTH-PRM-04")),
    "as-metadata": (
        "auth",
        "as_metadata",
        ("AUTH-ASM-02", "AUTH-ASM-03", "AUTH-ASM-04", "AUTH-ASM-05", "AUTH-ASM-06", "AUTH-ASM-08"),
    ),
    "cimd": ("auth", "cimd", ("AUTH-CIMD-01", "AUTH-CIMD-02")),
    "jwks": ("auth", "jwks", ("AUTH-CIMD-02",)),
    "challenge": ("auth", "challenge", ("AUTH-PRM-05", "AUTH-PRM-06")),
    "authorization-response": ("auth", "authorization_response", ("AUTH-ISS-01", "AUTH-ISS-02")),
    "tools": (
        "auth",
        "tools_list",
        ("AUTH-TOOL-01", "AUTH-TOOL-02", "AUTH-TOOL-06", "PROF-01", "PROF-02", "PROF-03", "PROF-04", "PROF-05"),
    ),
    "tool-result": ("auth", "tool_result", ("AUTH-CHAL-01", "AUTH-TOOL-05")),
    "profile": ("profile", "profile_result", ("PROF-06", "PROF-07", "PROF-10", "PROF-12", "PROF-14")),
    "profile-record": ("profile", "profile_record", ("PROF-07", "PROF-10", "PROF-12", "PROF-14")),
    "token-count": ("platform", "token_count", ("TOK-01",)),
    "ratelimit-headers": ("platform", "ratelimit_headers", ("RL-01", "RL-05")),
    "platform-error": ("platform", "platform_error", ("CAMP-15",)),
    "campaign": ("platform", "campaign", ("CAMP-01", "CAMP-02", "CAMP-03", "CAMP-04", "CAMP-05", "CAMP-12")),
    "campaign-list": ("platform", "campaign_list", ("CAMP-07", "CAMP-01")),
    "image": ("compression", "image", ("IMG-SHRINK-03",)),
    "image-output": ("compression", "image_output", ("IMG-SHRINK-04", "IMG-PRS-01", "IMG-PRS-02")),
}
_KIND_FUNCTIONS: dict[str, tuple[str, str]] = {kind: (module, name) for kind, (module, name, _) in _JUDGES.items()}
# The rules each kind's judge says a verdict on, and the registry the catalog's "judged from a document alone" is
# checked against: rule ID -> the kinds of document that judge it.
KIND_RULES: dict[str, tuple[str, ...]] = {kind: rules for kind, (_, _, rules) in _JUDGES.items()}
RULE_JUDGES: dict[str, tuple[str, ...]] = {
    rule: tuple(kind for kind, rules in KIND_RULES.items() if rule in rules)
    for rule in dict.fromkeys(rule for rules in KIND_RULES.values() for rule in rules)
}
_FUNCTION_MODULES = {function: module for module, function in _KIND_FUNCTIONS.values()}


def _kinds() -> dict[str, Callable[..., list[Verdict]]]:
    """``KINDS``: every kind's function (importing every validator module)."""
    return {kind: _function(module, name) for kind, (module, name) in _KIND_FUNCTIONS.items()}


def _function(module: str, name: str) -> Callable[..., list[Verdict]]:
    function: Callable[..., list[Verdict]] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return function


def __getattr__(name: str) -> Any:
    if name == "KINDS":
        kinds = globals()["KINDS"] = _kinds()
        return kinds
    if name in _FUNCTION_MODULES:
        return _function(_FUNCTION_MODULES[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_RECORD_KEYS = frozenset({"id", "name", "email", "nickname"})
# What the bytes of an image start with: PNG, JPEG (the kinds the contract names), GIF and WebP (an upload a server
# should refuse, still an image to judge). Other bytes are no kind the command can tell.
_IMAGE_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"RIFF")
# A WWW-Authenticate value: an auth scheme the registry names (RFC 9110 §11.6.1), alone or with parameters.
_CHALLENGE = re.compile(
    r"(?i)(?:bearer|dpop|basic|digest|negotiate|hoba|mutual|scram-sha-\d+|vapid|"
    r"privatetoken|concealed|gnap|mac)(?:\s|,|$)"
)


class DocumentError(ValueError):
    """The file cannot be read as any kind of document, or its kind cannot be told."""


def _sniff_mapping(doc: Mapping[str, Any]) -> str | None:
    keys = set(doc)
    if {"resource", "authorization_servers"} & keys and "issuer" not in keys:
        return "prm"
    if "issuer" in keys and keys & {"authorization_endpoint", "token_endpoint", "code_challenge_methods_supported"}:
        return "as-metadata"
    if "client_id" in keys and "redirect_uris" in keys:
        return "cimd"
    if isinstance(doc.get("keys"), list):
        return "jwks"
    if isinstance(doc.get("tools"), list):
        return "tools"
    if doc.get("object") == "response.input_tokens" or "input_tokens" in keys:
        return "token-count"
    if doc.get("object") == "list":
        return "campaign-list"
    if doc.get("object") == "campaign" or {"budget", "bidding_type"} <= keys:
        return "campaign"
    if isinstance(doc.get("error"), Mapping) or keys == {"error"}:
        return "platform-error"
    if keys and all(k.lower().startswith(("x-ratelimit-", "retry-after")) for k in keys):
        return "ratelimit-headers"
    if {"input", "output"} <= keys:
        return "image-output"
    structured = doc.get("structuredContent")
    if isinstance(structured, Mapping) and "id" in structured and set(structured) <= _RECORD_KEYS:
        return "profile"  # a result carrying a profile record: the profile tool's
    if keys & {"content", "structuredContent", "isError"} or {"tool", "result"} <= keys:
        return "tool-result"
    if "id" in keys and keys <= _RECORD_KEYS:
        return "profile-record"
    return None


def sniff(document: Any) -> str | None:
    """The kind of a document, or None when it cannot be told (then pass ``--kind``)."""
    if isinstance(document, bytes):
        return "image" if document.startswith(_IMAGE_SIGNATURES) else None
    if isinstance(document, str):
        text = document.strip()
        if not text or "\n" in text:
            return None  # a WWW-Authenticate value and a redirect URL are one line
        if text.startswith(("https://", "http://")) and re.search(r"[?#&](code|error)=", text):
            return "authorization-response"
        return "challenge" if _CHALLENGE.match(text) else None
    if isinstance(document, list):
        return "tools" if all(isinstance(t, Mapping) and "inputSchema" in t for t in document) else None
    if isinstance(document, Mapping):
        return _sniff_mapping(document)
    return None


def load(path: Path) -> Any:
    """A file as a document: JSON when it parses, else text for header values, else bytes (images)."""
    data = path.read_bytes()
    if data[:8] == b"\x89PNG\r\n\x1a\n" or data[:3] == b"\xff\xd8\xff" or path.suffix in (".png", ".jpg", ".bin"):
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    try:
        return json.loads(text)
    except ValueError:
        return text.strip()


def judges_of(rule: str) -> tuple[Callable[..., list[Verdict]], ...]:
    """The document judges that say a verdict on ``rule`` (none: a live exchange alone can show it)."""
    return tuple(_function(*_KIND_FUNCTIONS[kind]) for kind in RULE_JUDGES.get(rule, ()))


def judge(kind: str, document: Any, **context: Any) -> list[Verdict]:
    """The verdicts of one document of ``kind``; ``context`` goes to that kind's function."""
    if kind not in _KIND_FUNCTIONS:
        raise DocumentError(f"unknown kind {kind!r}; known: {', '.join(_KIND_FUNCTIONS)}")
    return _function(*_KIND_FUNCTIONS[kind])(document, **context)


def problems(kind: str, document: Any, **context: Any) -> list[Problem]:
    """What a document of ``kind`` gets wrong: one :class:`Problem` per rule it breaks, carrying the rule ID."""
    return [problem for verdict in judge(kind, document, **context) if (problem := verdict.problem()) is not None]


def judge_file(path: Path, kind: str | None = None, **context: Any) -> tuple[str, list[Verdict]]:
    """Read, sniff (unless ``kind``) and judge a file; an image-output manifest's files are read beside it."""
    document = load(path)
    kind = kind or sniff(document)
    if kind is None:
        raise DocumentError(f"cannot tell what kind of document {path} is; pass --kind ({', '.join(_KIND_FUNCTIONS)})")
    if kind == "image-output" and isinstance(document, dict) and "files" not in context:
        names = [document.get(k) for k in ("input", "output")]
        context["files"] = {
            n: (path.parent / n).read_bytes() for n in names if isinstance(n, str) and (path.parent / n).is_file()
        }
    return kind, judge(kind, document, **context)


__all__ = [
    "KINDS",
    "KIND_RULES",
    "RULE_JUDGES",
    "DocumentError",
    "Problem",
    "Verdict",
    "as_metadata",
    "authorization_response",
    "campaign",
    "campaign_list",
    "challenge",
    "cimd",
    "exit_code",
    "image",
    "image_output",
    "judge",
    "judge_file",
    "judges_of",
    "jwks",
    "level_of",
    "load",
    "platform_error",
    "prm",
    "problems",
    "profile_record",
    "profile_result",
    "ratelimit_headers",
    "sniff",
    "token_count",
    "tool_result",
    "tools_list",
]
