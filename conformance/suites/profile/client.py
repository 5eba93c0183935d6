"""The profile suite's client: calls of the designated profile tool (always with ``{}``, PROF-02, each in a new MCP
session) and what the harness knows about each test account. Fixtures: conftest.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance import Blocked
from conformance.config import Settings
from conformance.core import _context
from conformance.host.http import HostHTTP
from conformance.suites._linking import LinkedAccount
from conformance.suites._tool_access import CallOutcome, call, fresh_token, unverified_claims


@dataclass
class ProfileCaller:
    http: HostHTTP
    url: str
    tool: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.tool.get("name"))

    def call(self, token: str | None = None, **kwargs: Any) -> CallOutcome:
        return call(self.http, self.url, self.tool, token=token, arguments={}, **kwargs)

    def result(self, token: str, who: str) -> dict[str, Any]:
        """The profile result for a valid token; Blocked by AUTH-TOK-01 when the token is refused."""
        outcome = self.call(token)
        if outcome.refused_http or outcome.auth_error_result:
            raise Blocked("AUTH-TOK-01", f"the token of {who} was refused by {self.name!r}: {outcome.describe()}")
        if outcome.result is None:
            raise Blocked("PROF-06", f"{self.name!r} for {who} returned no tool result: {outcome.describe()}")
        return outcome.result


@dataclass
class AccountProfile:
    """One account's profile result and what the harness knows about the account (for PROF-10)."""

    account: LinkedAccount
    result: dict[str, Any]
    known: dict[str, str]
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # the profile call: the evidence

    @property
    def record(self) -> dict[str, Any] | None:
        structured = self.result.get("structuredContent")
        return structured if isinstance(structured, dict) else None

    @property
    def id(self) -> Any:
        return self.record.get("id") if self.record else None


def known_facts(account: LinkedAccount, login: str | None = None) -> dict[str, str]:
    """Identity facts of the account from its ID token (and access token) claims, and the login the harness typed
    when it is an email address (it is the account's email then)."""
    facts: dict[str, str] = {}
    for token in (account.id_token, account.access_token):
        for key in ("email", "name", "organization"):
            value = unverified_claims(token).get(key)
            if isinstance(value, str) and key not in facts:
                facts[key] = value
    if login and "@" in login and "email" not in facts:
        facts["email"] = login
    return facts


def login_of(settings: Settings, account: int) -> str | None:
    value = settings.get("test_user" if account == 1 else "test_user_2")
    return str(value) if value else None


def account_profile(caller: ProfileCaller, account: LinkedAccount, settings: Settings, number: int) -> AccountProfile:
    """Test account ``number``'s profile result, with what the harness knows about the account."""
    position = _context.mark()
    result = caller.result(fresh_token(account), f"test account {number}")
    calls = [e for e in _context.since(position) if "tools/call" in str(e.get("request_body") or "")]
    return AccountProfile(account, result, known_facts(account, login_of(settings, number)), calls)
