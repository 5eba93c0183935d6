"""The stored profile changed behind the tool's back, through a reference or vendor hook (the reference stack has
both): PROF-13 (a blank stored id) and PROF-15 (a new email, name and nickname keep the id).

The subject changed is a fresh one from the harness's test issuer when the target trusts it, so that no real test
account is touched; otherwise test account 2 (or 1): its blanked id stays broken on that target (PROF-13), its
display fields are put back afterwards (PROF-15; a field it did not show before stays as the hook set it).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

import pytest

from conformance import Blocked, NeedsUnmet, alone, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host import LimitReached
from conformance.host.fields import json_get
from conformance.host.http import HostHTTP
from conformance.suites._linking import LinkedAccount
from conformance.suites._tool_access import fresh_token, load_issuer, oauth_scopes, unverified_claims
from conformance.suites.profile.client import AccountProfile, ProfileCaller

HOOK_OPTION = "CONFORMANCE_REFERENCE_ADMIN_URL and CONFORMANCE_REFERENCE_ADMIN_KEY"


# With a test issuer the checks mint a subject of their own: they touch no account other checks read.
OWN_SUBJECT = ("test_issuer", "test_issuer_key_file")


def _subject_token(
    settings: Settings,
    http: HostHTTP,
    caller: ProfileCaller,
    request: pytest.FixtureRequest,
    linked: LinkedAccount,
    *,
    rule_id: str,
    stays: str,
    claims: Mapping[str, str] | None = None,
) -> tuple[str, str, str, bool]:
    """(token, subject, how, fresh): a token whose stored profile the hook may change; ``fresh``: the subject is the
    test issuer's own (no real account is touched; its token has the scopes and resource of ``linked``'s). Without
    a test issuer, test account 2's or 1's (the check runs alone: it sets their fixtures up from its body).
    ``claims``: display claims of a fresh subject's token."""
    issuer = load_issuer(settings, http)
    if issuer is not None:
        subject = f"{settings.get('run_id')}-{rule_id.lower().replace('-', '')}"
        scopes = list(dict.fromkeys([*linked.scopes, *oauth_scopes(caller.tool)]))
        token = issuer.valid(linked.resource, scopes, subject=subject, **dict(claims or {}))
        return token, subject, "a fresh subject of the harness's test issuer", True
    for account in ("linked_account_2", "linked_account"):
        try:
            linked = request.getfixturevalue(account)
        except (NeedsUnmet, Blocked, LimitReached):  # no second account: fall back to the first
            continue
        token = fresh_token(linked)
        claimed = unverified_claims(token).get("sub")
        if isinstance(claimed, str) and claimed:
            return token, claimed, f"test account {linked.account} ({stays})", False
    needs("the subject of a token whose stored profile the hook may change (a JWT access token or a test issuer)")


def _require_hook(settings: Settings, need: str) -> None:
    """The reference's (or a vendor's) admin hook is configured, or the rule is skipped naming it."""
    if not settings.get("reference_admin_url") or not settings.get("reference_admin_key"):
        needs(need, HOOK_OPTION)


def _hook(http: HostHTTP, settings: Settings, action: str, body: dict[str, Any], need: str) -> int:
    """Call the reference or vendor hook ``action``; skipped with ``need`` unless it reports a changed profile."""
    _require_hook(settings, need)
    url, key = settings.get("reference_admin_url"), settings.get("reference_admin_key")
    answer = http.post(
        f"{str(url).rstrip('/')}/{action}", json=body, headers={"X-Reference-Admin-Key": str(key)}, retry=None
    )
    try:
        changed = answer.json().get("changed") if answer.status_code == 200 else None
    except (ValueError, AttributeError):  # not a JSON object: not the hook this check knows
        changed = None
    if not isinstance(changed, int) or changed < 1:
        needs(f"{need} (it answered {answer.status_code}, changed {changed!r})", HOOK_OPTION)
    return changed


@alone("writes the stored profile of a test account other checks read", unless=OWN_SUBJECT)
@rule("PROF-13")
def test_blank_stored_id_is_an_error(
    conformance_settings: Settings,
    host_http: HostHTTP,
    profile_caller: ProfileCaller,
    profile_1: AccountProfile,
    linked_account: LinkedAccount,
    request: pytest.FixtureRequest,
) -> None:
    s = conformance_settings
    need = "a reference or vendor hook that blanks the stored profile id"
    _require_hook(s, need)
    token, subject, how, _ = _subject_token(
        s,
        host_http,
        profile_caller,
        request,
        linked_account,
        rule_id="PROF-13",
        stays="its stored id stays blank on this target",
    )
    before = profile_caller.result(token, how)
    first_id = json_get(before, "structuredContent", "id")
    _hook(host_http, s, "blank-profile-id", {"subject": subject}, need)
    outcome = profile_caller.call(token)
    if outcome.refused_http or outcome.auth_error_result:
        raise Blocked("AUTH-TOK-01", f"the token was refused after blanking: {outcome.describe()}")
    result = outcome.result
    if result is None:
        fail(f"no tool result once the stored id is blank: {outcome.describe()}")
    structured = result.get("structuredContent")
    pid = structured.get("id") if isinstance(structured, dict) else None
    if result.get("isError") is not True:
        fail(f"a blank stored id still gave a profile (isError {result.get('isError')!r}, id {pid!r})")
    others = {p for p in (first_id, profile_1.id) if isinstance(p, str) and p}
    leaked = [p for p in others if p in json.dumps(result)]
    expect(pid is None and not leaked, f"the error result carries an id ({pid!r}) or another profile's id {leaked}")
    observe(f"blanked {how}: isError true, no id")


DISPLAY = ("email", "name", "nickname")


def _display_of(result: Mapping[str, Any]) -> dict[str, str]:
    record = result.get("structuredContent")
    fields = record if isinstance(record, dict) else {}
    return {k: v for k, v in fields.items() if k in DISPLAY and isinstance(v, str)}


@alone("writes the stored profile of a test account other checks read", unless=OWN_SUBJECT)
@rule("PROF-15")
def test_id_survives_display_changes(
    conformance_settings: Settings,
    host_http: HostHTTP,
    profile_caller: ProfileCaller,
    linked_account: LinkedAccount,
    request: pytest.FixtureRequest,
) -> None:
    s = conformance_settings
    need = "a reference or vendor hook that changes the account's e-mail and name"
    _require_hook(s, need)
    tag = secrets.token_hex(4)
    first = {"email": f"prof15-{tag}@conformance.invalid", "name": f"Conformance Before {tag}", "nickname": "before"}
    token, subject, how, fresh = _subject_token(
        s,
        host_http,
        profile_caller,
        request,
        linked_account,
        rule_id="PROF-15",
        stays="its display fields are put back",
        claims=first,
    )
    before = profile_caller.result(token, how)
    first_id = json_get(before, "structuredContent", "id")
    if not isinstance(first_id, str) or not first_id.strip():
        raise Blocked("PROF-07", f"the profile of {how} has no string id: {first_id!r}")
    old = _display_of(before)
    new = {"email": f"prof15-{tag}-new@conformance.invalid", "name": f"Conformance After {tag}", "nickname": "after"}
    if not fresh and "nickname" not in old:
        del new["nickname"]  # a real account keeps no label it lacked (the hook sets fields, it cannot remove one)
    _hook(host_http, s, "set-profile-display", {"subject": subject, **new}, need)
    try:
        after = profile_caller.result(token, f"{how}, after the change")
    finally:
        if not fresh and old:  # a real test account: its display fields as they were
            _hook(host_http, s, "set-profile-display", {"subject": subject, **old}, need)
    shown = _display_of(after)
    if shown and not any(shown.get(k) == v for k, v in new.items()):
        needs(f"{need}: the profile does not show the change (before {old}, after {shown})", HOOK_OPTION)
    after_id = json_get(after, "structuredContent", "id")
    expect(
        after_id == first_id,
        f"the profile id changed from {first_id!r} to {after_id!r} when {', '.join(new)} changed ({old} → {shown})",
    )
    seen = f"now {shown}" if shown else "the profile shows no display field; the hook reported the change"
    observe(f"{how}: {', '.join(new)} changed ({seen}); the id stayed {first_id!r}")
