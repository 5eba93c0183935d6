"""Fixtures of the profile suite: the designated profile tool and its results for the linked test accounts.

Linking comes from ``suites/_linking.py`` (``linked_account``, ``linked_account_2``, ``link_account``). The
profile tool is always called with ``{}`` (PROF-02), each call in a new MCP session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from conformance import Blocked, NeedsUnmet, needs, observe
from conformance.config import Settings, Target
from conformance.host import TargetThrottled
from conformance.host.declarations import MARKER_INVALID, profile_marker
from conformance.host.http import HostHTTP
from conformance.host.profile import ProfileToolSearch, find_profile_tool
from conformance.suites._linking import LinkedAccount
from conformance.suites._tool_access import (
    CallOutcome,
    Listing,
    call,
    fresh_token,
    suite_listing,
    unverified_claims,
    vendor_of,
)


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


@pytest.fixture(scope="session")
def profile_listing(
    host_http: HostHTTP, tool_server_target: Target, conformance_settings: Settings, request: pytest.FixtureRequest
) -> Listing:
    def token() -> str:
        return fresh_token(request.getfixturevalue("linked_account"))

    return suite_listing(host_http, tool_server_target.base_url, vendor_of(conformance_settings), token)


@pytest.fixture(scope="session")
def profile_search(profile_listing: Listing, conformance_settings: Settings) -> ProfileToolSearch:
    return find_profile_tool(profile_listing.tools, vendor_of(conformance_settings))


@pytest.fixture(scope="session")
def profile_tool(
    profile_search: ProfileToolSearch, profile_listing: Listing, conformance_settings: Settings
) -> Mapping[str, Any]:
    vendor = vendor_of(conformance_settings)
    if len(profile_search.marked) > 1:
        raise Blocked("PROF-01", f"several tools carry the profile marker: {profile_search.names}")
    if profile_search.tool is None:
        invalid = [str(t.get("name")) for t in profile_listing.named() if profile_marker(t, vendor) == MARKER_INVALID]
        if invalid:
            raise Blocked("AUTH-TOOL-06", f"the profile marker of {invalid} is not boolean true: no profile tool")
        others = sorted(
            {
                key.rsplit("/", 1)[0]
                for t in profile_listing.named()
                for key in (t["_meta"] if isinstance(t.get("_meta"), Mapping) else {})
                if isinstance(key, str) and key.endswith("/profile") and key != f"{vendor}/profile"
            }
        )
        # --vendor-prefix helps only when a tool carries another vendor's marker; else a profile tool is optional
        # (contract, Profile tool rules 7) and nothing in the harness's options can supply one.
        needs(
            f'a profile tool (no tool carries _meta["{vendor}/profile"]: true)',
            f"--vendor-prefix {others[0]}" if others else "a tool declaring the profile marker (optional)",
        )
    return profile_search.tool


@pytest.fixture(scope="session")
def profile_caller(host_http: HostHTTP, tool_server_target: Target, profile_tool: Mapping[str, Any]) -> ProfileCaller:
    return ProfileCaller(host_http, tool_server_target.base_url, profile_tool)


@pytest.fixture(scope="session")
def profile_1(
    profile_caller: ProfileCaller, linked_account: LinkedAccount, conformance_settings: Settings
) -> AccountProfile:
    result = profile_caller.result(fresh_token(linked_account), "test account 1")
    return AccountProfile(linked_account, result, known_facts(linked_account, login_of(conformance_settings, 1)))


@pytest.fixture(scope="session")
def profile_2(
    profile_caller: ProfileCaller, linked_account_2: LinkedAccount, conformance_settings: Settings
) -> AccountProfile:
    result = profile_caller.result(fresh_token(linked_account_2), "test account 2")
    return AccountProfile(linked_account_2, result, known_facts(linked_account_2, login_of(conformance_settings, 2)))


@pytest.fixture(scope="session")
def profiles(profile_1: AccountProfile, request: pytest.FixtureRequest) -> list[AccountProfile]:
    """Account 1's profile, and account 2's when a second account is configured (more fields get judged)."""
    try:
        return [profile_1, request.getfixturevalue("profile_2")]
    except (NeedsUnmet, Blocked, TargetThrottled) as exc:  # account 1 alone still decides these rules
        observe(f"account 2 not judged: {exc}")
        return [profile_1]
