"""Profile id stability and uniqueness: PROF-08 (refresh, new connection, scope upgrade), PROF-09 (two accounts, and
the same subject under another trusted issuer)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from conformance import Blocked, expect, observe, rule
from conformance.config import Settings
from conformance.core._exceptions import TargetUnreachable
from conformance.host import fanout
from conformance.host.http import HostHTTP
from conformance.suites._cases import Attack, AttackRun, Cases, attack_table
from conformance.suites._linking import LinkedAccount, Linker
from conformance.suites._tool_access import HARNESS_OPTION, distinct, load_issuer, oauth_scopes, unverified_claims
from conformance.suites.profile.client import AccountProfile, ProfileCaller
from conformance.verdict._verdicts import NeedsUnmet

NEW_CONNECTION = "a new connection with a new authorization"
REFRESH = "after a token refresh"


@dataclass(frozen=True)
class Unexercised:
    why: str


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
    # The upgrade: from the downscoped link to every requested scope, or, when the profile tool needs all of them,
    # from those to them plus a scope the authorization server advertises beyond them (as AUTH-REAUTH-01 asks).
    before, after = fewer, full
    if fewer == full:
        beyond = [s for s in linker.host.as_metadata.scopes_supported or [] if s not in full]
        after = full + beyond[:1]
    upgrade = f"after a scope upgrade ({' '.join(before)} → {' '.join(after)})"

    def new_connection() -> dict[str, Any]:
        """The ids of a new authorization, then of its refreshed token (a refresh that failed: its reason)."""
        first = link_account(scopes=fewer if fewer != full else None)
        found = {NEW_CONNECTION: _id_of(profile_caller, first, "a new authorization")}
        if not first.refresh_token:
            return {**found, REFRESH: Unexercised("no refresh token was issued")}
        refreshed = first.refresh()
        if not refreshed.ok:
            return {**found, REFRESH: Unexercised(f"the refresh failed: {refreshed.describe()}")}
        return {**found, REFRESH: _id_of(profile_caller, first, "a refreshed token")}

    def scope_upgrade() -> dict[str, Any]:
        # The host's upgrade from the narrower grant, the one AUTH-REAUTH-01 judges when it asks for the same scopes.
        return {upgrade: _id_of(profile_caller, linker.upgraded(before, after), "an upgraded authorization")}

    # The new connection and the upgrade each start from a grant of their own: they go at once.
    pieces = [new_connection, scope_upgrade] if after != before else [new_connection]
    found: dict[str, Any] = {}
    for ids in fanout.each(pieces, lambda piece: piece(), limit=linker.concurrency):
        found.update(ids)
    seen = {NEW_CONNECTION: found[NEW_CONNECTION]}
    cases.exercised("a new connection")
    if isinstance(found[REFRESH], Unexercised):
        cases.unexercised("a token refresh", found[REFRESH].why)
    else:
        seen[REFRESH] = found[REFRESH]
        cases.exercised("a token refresh")
    if after != before:
        seen[upgrade] = found[upgrade]
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


TWO_ACCOUNTS = "two test accounts"
OTHER_ISSUER = "account 1's subject under another trusted issuer (the test issuer)"
PROF09 = attack_table(
    "PROF-09",
    Attack(TWO_ACCOUNTS, "contract A Profile id rule 3", named=True, expected="two different ids"),
    # A subject is unique only at its issuer (RFC 7519 §4.1.2; OpenID Connect Core §5.7: iss and sub together):
    # the same sub vouched for by another trusted issuer is another account, hence another profile.
    Attack(
        OTHER_ISSUER,
        "contract A Profile id rules 3, 6; RFC 7519 §4.1.2 (sub unique in the context of its issuer)",
        expected="an id other than account 1's",
    ),
)


@rule("PROF-09")
def test_distinct_profiles_distinct_ids(
    profile_1: AccountProfile,
    profile_caller: ProfileCaller,
    profile_tool: Mapping[str, Any],
    conformance_settings: Settings,
    host_http: HostHTTP,
    profile_2_or_need: AccountProfile | NeedsUnmet,
) -> None:
    if profile_1.id is None:
        raise Blocked("PROF-07", "account 1's profile has no id")
    run = AttackRun.of("PROF-09")
    option: str | None = None
    if isinstance(profile_2_or_need, NeedsUnmet):
        run.not_tried(TWO_ACCOUNTS, profile_2_or_need.need)
        option = profile_2_or_need.option
    else:
        profile_2 = profile_2_or_need
        if profile_2.id is None:
            raise Blocked("PROF-07", "account 2's profile has no id")
        with run.attempt(TWO_ACCOUNTS):
            expect(profile_1.id != profile_2.id, f"both test accounts got the profile id {profile_1.id!r}")
            observe(f"two accounts, two ids: {profile_1.id!r} and {profile_2.id!r}")
    same_subject_elsewhere(run, profile_1, profile_caller, profile_tool, conformance_settings, host_http)
    run.conclude(option)


def same_subject_elsewhere(
    run: AttackRun,
    profile_1: AccountProfile,
    caller: ProfileCaller,
    tool: Mapping[str, Any],
    settings: Settings,
    http: HostHTTP,
) -> None:
    """The profile tool called with a harness-issued token naming account 1's subject under the test issuer: a
    server that keys profiles by sub alone answers with account 1's id (and profile)."""
    account = profile_1.account
    subject = next(
        (s for s in (unverified_claims(t).get("sub") for t in (account.access_token, account.id_token)) if s), None
    )
    issuer = load_issuer(settings, http)
    if issuer is None:
        run.not_tried(OTHER_ISSUER, f"needs harness-issued tokens ({HARNESS_OPTION})")
        return
    if not isinstance(subject, str):
        run.not_tried(OTHER_ISSUER, "account 1's subject is unknown (an opaque access token and no ID token)")
        return
    scopes = distinct([*account.scopes, *oauth_scopes(tool)])
    try:
        outcome = caller.call(issuer.valid(account.resource, scopes, subject=subject))
    except TargetUnreachable as exc:
        run.unreached(OTHER_ISSUER, str(exc))
        return
    if outcome.refused_http or outcome.auth_error_result:
        run.not_tried(OTHER_ISSUER, f"the target refused the test issuer's token: {outcome.describe()}")
        return
    record = (outcome.result or {}).get("structuredContent")
    other = record.get("id") if isinstance(record, dict) else None
    if other is None:
        run.inapplicable(OTHER_ISSUER, f"no profile for that account at the target: {outcome.describe()}")
        return
    with run.attempt(OTHER_ISSUER):
        expect(
            other != profile_1.id,
            f"subject {subject!r} under the test issuer {issuer.issuer} got account 1's profile id {other!r}",
        )
        observe(f"subject {subject!r} under the test issuer: another id ({other!r})")
