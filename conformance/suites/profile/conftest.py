"""Fixtures of the profile suite: the designated profile tool and its results for the linked test accounts.

Linking and the tool listing are shared fixtures (``suites/fixtures.py``: ``linked_account``, ``linked_account_2``,
``link_account``, ``listing``); the calls are in ``client.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from conformance import Blocked, NeedsUnmet, needs, observe
from conformance.config import Settings, Target
from conformance.core._early import asks
from conformance.host import LimitReached
from conformance.host.http import HostHTTP
from conformance.judges.declarations import MARKER_INVALID, profile_marker
from conformance.judges.profile import ProfileToolSearch, find_profile_tool
from conformance.suites._linking import LinkedAccount
from conformance.suites._order import TOOL_SERVER_JUDGED_LAST, TOOL_SERVER_SUITES, alone_after_the_rest
from conformance.suites._tool_access import Listing, vendor_of
from conformance.suites.fixtures import value_or_need
from conformance.suites.profile.client import AccountProfile, ProfileCaller, account_profile


@pytest.fixture(scope="session")
def profile_search(listing: Listing, conformance_settings: Settings) -> ProfileToolSearch:
    return find_profile_tool(listing.tools, vendor_of(conformance_settings))


@pytest.fixture(scope="session")
def profile_tool(
    profile_search: ProfileToolSearch, listing: Listing, conformance_settings: Settings
) -> Mapping[str, Any]:
    vendor = vendor_of(conformance_settings)
    if len(profile_search.marked) > 1:
        raise Blocked("PROF-01", f"several tools carry the profile marker: {profile_search.names}")
    if profile_search.tool is None:
        invalid = [str(t.get("name")) for t in listing.named() if profile_marker(t, vendor) == MARKER_INVALID]
        if invalid:
            raise Blocked("AUTH-TOOL-06", f"the profile marker of {invalid} is not boolean true: no profile tool")
        others = sorted(
            {
                key.rsplit("/", 1)[0]
                for t in listing.named()
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
    return account_profile(profile_caller, linked_account, conformance_settings, 1)


@pytest.fixture(scope="session")
def profile_2(
    profile_caller: ProfileCaller, linked_account_2: LinkedAccount, conformance_settings: Settings
) -> AccountProfile:
    return account_profile(profile_caller, linked_account_2, conformance_settings, 2)


@pytest.fixture(scope="session")
@asks("profile_2")
def profile_2_or_need(request: pytest.FixtureRequest) -> AccountProfile | NeedsUnmet:
    """Account 2's profile, or what it needs (a check with other cases tries those without it)."""
    found: AccountProfile | NeedsUnmet = value_or_need(request, "profile_2")
    return found


@pytest.fixture(scope="session")
def profiles(profile_1: AccountProfile, request: pytest.FixtureRequest) -> list[AccountProfile]:
    """Account 1's profile, and account 2's when a second account is configured (more fields get judged)."""
    try:
        return [profile_1, request.getfixturevalue("profile_2")]
    except (NeedsUnmet, Blocked, LimitReached) as exc:  # account 1 alone still decides these rules
        observe(f"account 2 not judged: {exc}")
        return [profile_1]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tool server's checks in their order (``suites/_order.py``), also when the profile suite runs alone."""
    alone_after_the_rest(items, TOOL_SERVER_SUITES, TOOL_SERVER_JUDGED_LAST)
