"""Profile id stability and uniqueness: PROF-08 (refresh, new connection, scope upgrade), PROF-09 (two accounts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from conformance import Blocked, expect, observe, rule
from conformance.suites._cases import Cases
from conformance.suites._linking import LinkedAccount, Linker
from conformance.suites._tool_access import oauth_scopes
from conformance.suites.profile.client import AccountProfile, ProfileCaller


def _id_of(caller: ProfileCaller, account: LinkedAccount, who: str) -> Any:
    record = caller.result(account.access_token, who).get("structuredContent")
    if not isinstance(record, dict) or "id" not in record:
        raise Blocked("PROF-06", f"{caller.name!r} for {who}: no profile id in structuredContent")
    return record["id"]


@rule("PROF-08")
def test_id_is_stable(
    profile_1: AccountProfile,
    profile_caller: ProfileCaller,
    profile_tool: Mapping[str, Any],
    linker: Linker,
    link_account: Callable[..., LinkedAccount],
) -> None:
    base = profile_1.id
    if base is None:
        raise Blocked("PROF-06", "account 1's profile has no id")
    full = list(linker.host.scopes.scopes)
    needed = set(oauth_scopes(profile_tool))
    # Fewer scopes for the scope upgrade: drop the resource scopes the profile tool does not need.
    fewer = [s for s in full if s in needed or s in ("openid", "email", "profile", "offline_access")]
    if not needed:
        fewer = full  # the tool names no scopes: which ones it needs is unknown, so no downscoped authorization
    cases = Cases("PROF-08 (token refresh, a new connection, a scope upgrade)")
    seen: dict[str, Any] = {}
    first = link_account(scopes=fewer if fewer != full else None)
    seen["a new connection with a new authorization"] = _id_of(profile_caller, first, "a new authorization")
    cases.exercised("a new connection")
    if first.refresh_token:
        refreshed = first.refresh()
        if refreshed.ok:
            seen["after a token refresh"] = _id_of(profile_caller, first, "a refreshed token")
            cases.exercised("a token refresh")
        else:
            cases.unexercised("a token refresh", f"the refresh failed: {refreshed.describe()}")
    else:
        cases.unexercised("a token refresh", "no refresh token was issued")
    # The upgrade: from the downscoped link to every requested scope, or, when the profile tool needs all of them,
    # from those to them plus a scope the authorization server advertises beyond them (as AUTH-REAUTH-01 asks).
    before, after = fewer, full
    if fewer == full:
        beyond = [s for s in linker.host.as_metadata.scopes_supported or [] if s not in full]
        after = full + beyond[:1]
    if after != before:
        upgraded = link_account(scopes=after)
        seen[f"after a scope upgrade ({' '.join(before)} → {' '.join(after)})"] = _id_of(
            profile_caller, upgraded, "an upgraded authorization"
        )
        cases.exercised("a scope upgrade")
    else:
        cases.unexercised(
            "a scope upgrade",
            f"the profile tool needs every requested scope ({' '.join(full)}) and the authorization server "
            "advertises none beyond them: no scope to add",
        )
    changed = [f"{what}: {value!r}" for what, value in seen.items() if value != base]
    expect(not changed, f"the profile id {base!r} of account 1 changed: " + "; ".join(changed))
    observe(f"same id {base!r}: " + "; ".join(seen))
    cases.conclude()


@rule("PROF-09")
def test_two_accounts_two_ids(profile_1: AccountProfile, profile_2: AccountProfile) -> None:
    if profile_1.id is None or profile_2.id is None:
        raise Blocked("PROF-07", "a profile without id")
    expect(profile_1.id != profile_2.id, f"both test accounts got the profile id {profile_1.id!r}")
