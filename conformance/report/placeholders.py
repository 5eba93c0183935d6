"""Redaction markers in recorded exchanges, and the variable that stands for each: the HTML's curl reproducers
write ``"${NAME}"`` where a marker was, and ``conformance replay`` fills a marker from the variable of that name."""

from __future__ import annotations

import re

REDACTION = re.compile(r"\[REDACTED[^\]\s]*\]")
CRAFTED = "[REDACTED:crafted]"  # conformance.host.CRAFTED: a credential the run crafted for a case
# The field name just before a marker ("code=", '"token": "'), and the characters a match of it is made of.
_FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)\"?\s*[=:]\s*\"?$")
_FIELD_CHARS = re.compile(r'[A-Za-z0-9_.\-"=:\s]*')
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def placeholder(context: str, header: str | None, marker: str = "") -> str:
    """A shell variable name for a redacted secret, from the header or the field name just before it; a crafted
    credential's name says so (``CRAFTED_ACCESS_TOKEN``): it is not the credential a reader has."""
    name = _name(context, header)
    return f"CRAFTED_{name}" if marker == CRAFTED else name


def _name(context: str, header: str | None) -> str:
    if header:
        lowered = header.lower()
        if lowered in {"authorization", "proxy-authorization"}:
            value = context.partition(":")[2].strip()  # context is "name: Scheme " up to the marker
            scheme = value.split(" ")[0].lower() if value else ""
            return {"bearer": "ACCESS_TOKEN", "basic": "BASIC_CREDENTIALS"}.get(scheme, "AUTHORIZATION")
        name = lowered
    else:
        # A match ends the context and is made of _FIELD_CHARS only: searched for from where the run of them that
        # ends the context starts (from the start of a body, each try is linear in the rest of the word: quadratic).
        run = _FIELD_CHARS.match(context[::-1])  # (always: it may be empty)
        found = _FIELD.search(context, len(context) - (run.end() if run else 0))
        name = found.group(1) if found else "secret"
    return _NOT_WORD.sub("_", name).strip("_").upper() or "SECRET"
