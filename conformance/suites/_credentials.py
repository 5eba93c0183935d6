"""The absent/empty credentials family: every way an anonymous host's credentials can be missing or empty.

One home for the cases AUTH-TOOL-03/04 (a tool call) and PROF-11 (the profile tool) both attack; each rule picks the
cases it sends and puts its own contract citation in front of the RFC sections kept here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.suites._cases import Attack

# base64("conformance:probe"): a well-formed credential of another scheme
BASIC_PROBE = "Basic Y29uZm9ybWFuY2U6cHJvYmU="


@dataclass(frozen=True)
class EmptyCredential:
    """One case: its name, the RFC text that makes it an attack, and the ``safe_call`` keywords that send it."""

    case: str
    cites: str
    send: dict[str, Any] = field(default_factory=dict)  # empty: no Authorization header at all
    named: bool = False

    @property
    def headers(self) -> dict[str, str] | None:
        """The headers it sends (None: no Authorization header)."""
        headers: dict[str, str] | None = self.send.get("headers")
        return headers


EMPTY_CREDENTIALS_FAMILY: tuple[EmptyCredential, ...] = (
    EmptyCredential("no Authorization header", "RFC 6750 §3.1", named=True),
    EmptyCredential("an empty Authorization header", "RFC 6750 §2.1", {"headers": {"Authorization": ""}}),
    EmptyCredential(
        "'Bearer' without a token",
        "RFC 6750 §2.1 (b64token is not empty; a header value cannot end in spaces: RFC 9110 §5.5)",
        {"headers": {"Authorization": "Bearer"}},
    ),
    EmptyCredential("a Basic header", "RFC 6750 §2.1 (the Bearer scheme)", {"headers": {"Authorization": BASIC_PROBE}}),
    EmptyCredential(
        "an empty access_token query parameter",
        "RFC 6750 §2.3; OAuth 2.1 §5.1 (header only)",
        {"query": {"access_token": ""}},
    ),
)
BY_CASE = {c.case: c for c in EMPTY_CREDENTIALS_FAMILY}


def absent_credentials(*cases: str) -> tuple[EmptyCredential, ...]:
    """The named cases of the family, in the order given (all of them when none is named)."""
    return tuple(BY_CASE[c] for c in cases) if cases else EMPTY_CREDENTIALS_FAMILY


def empty_credential_attacks(
    contract: str, credentials: tuple[EmptyCredential, ...], also: dict[str, str] | None = None
) -> tuple[Attack, ...]:
    """The family's cases as attack-table rows cited ``"{contract}; {RFC text}"``; ``also`` appends a rule's own
    further source to a case (``"; {also}"``)."""
    also = also or {}
    return tuple(
        Attack(c.case, f"{contract}; {c.cites}" + (f"; {also[c.case]}" if c.case in also else ""), named=c.named)
        for c in credentials
    )
