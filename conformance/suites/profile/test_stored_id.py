"""A missing or blank stored profile id: PROF-13 (needs a hook that blanks it; the reference stack has one).

The subject whose id is blanked is a fresh one from the harness's test issuer when the target trusts it, so that
no real test account loses its profile; otherwise test account 2 (or 1), which stays broken on that target.
"""

from __future__ import annotations

import json

import pytest

from conformance import Blocked, NeedsUnmet, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host import TargetThrottled
from conformance.host.fields import json_get
from conformance.host.http import HostHTTP
from conformance.suites._linking import LinkedAccount
from conformance.suites._tool_access import fresh_token, load_issuer, oauth_scopes, unverified_claims
from conformance.suites.profile.client import AccountProfile, ProfileCaller

HOOK_OPTION = "CONFORMANCE_REFERENCE_ADMIN_URL and CONFORMANCE_REFERENCE_ADMIN_KEY"


def _subject_token(
    settings: Settings, http: HostHTTP, caller: ProfileCaller, request: pytest.FixtureRequest
) -> tuple[str, str, str]:
    """(token, subject, how): a token whose profile may be blanked."""
    issuer = load_issuer(settings, http)
    if issuer is not None:
        subject = f"{settings.get('run_id')}-prof13"
        linked: LinkedAccount = request.getfixturevalue("linked_account")
        scopes = list(dict.fromkeys([*linked.scopes, *oauth_scopes(caller.tool)]))
        token = issuer.valid(linked.resource, scopes, subject=subject)
        return token, subject, "a fresh subject of the harness's test issuer"
    for account in ("linked_account_2", "linked_account"):
        try:
            linked = request.getfixturevalue(account)
        except (NeedsUnmet, Blocked, TargetThrottled):  # no second account: fall back to the first
            continue
        token = fresh_token(linked)
        claimed = unverified_claims(token).get("sub")
        if isinstance(claimed, str) and claimed:
            return token, claimed, f"test account {linked.account} (its stored id stays blank on this target)"
    needs("the subject of a token whose profile may be blanked (a JWT access token or a test issuer)")


@rule("PROF-13")
def test_blank_stored_id_is_an_error(
    conformance_settings: Settings,
    host_http: HostHTTP,
    profile_caller: ProfileCaller,
    profile_1: AccountProfile,
    request: pytest.FixtureRequest,
) -> None:
    s = conformance_settings
    url, key = s.get("reference_admin_url"), s.get("reference_admin_key")
    if not url or not key:
        needs("a reference or vendor hook that blanks the stored profile id", HOOK_OPTION)
    token, subject, how = _subject_token(s, host_http, profile_caller, request)
    before = profile_caller.result(token, how)
    first_id = json_get(before, "structuredContent", "id")
    hook = host_http.post(
        f"{str(url).rstrip('/')}/blank-profile-id",
        json={"subject": subject},
        headers={"X-Reference-Admin-Key": str(key)},
        retry=None,
    )
    try:
        changed = hook.json().get("changed") if hook.status_code == 200 else None
    except (ValueError, AttributeError):  # not a JSON object: not the hook this check knows
        changed = None
    if not isinstance(changed, int) or changed < 1:
        needs(f"a hook that blanks the stored id (it answered {hook.status_code}, changed {changed!r})", HOOK_OPTION)
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
