"""Redaction markers in recorded exchanges, and the variable that stands for each: the HTML's curl reproducers
write ``"${NAME}"`` where a marker was, and ``conformance replay`` fills a marker from the variable of that name."""

from __future__ import annotations

import re

REDACTION = re.compile(r"\[REDACTED[^\]\s]*\]")
CRAFTED = "[REDACTED:crafted]"  # conformance.host.CRAFTED: a credential the run crafted for a case


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
        found = re.search(r"([A-Za-z_][A-Za-z0-9_.-]*)\"?\s*[=:]\s*\"?$", context)
        name = found.group(1) if found else "secret"
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() or "SECRET"
