"""Workspace domain restriction: OIDC discovery, openid + email, UserInfo with a verified email: AUTH-WS-01."""

from __future__ import annotations

import json

from conformance import Blocked, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host.asmeta import OIDC_WELL_KNOWN, AsMetadata
from conformance.host.discovery import json_object
from conformance.host.http import HostHTTP
from conformance.suites._linking import LinkedAccount, Linker


@rule("AUTH-WS-01")
def test_userinfo_returns_verified_email(
    host_http: HostHTTP,
    conformance_settings: Settings,
    as_metadata: AsMetadata,
    linker: Linker,
    linked_account: LinkedAccount,
) -> None:
    domain = conformance_settings.get("workspace_domain")
    if not domain:
        needs("a workspace domain to certify", "--workspace-domain")
    issuer = as_metadata.expected_issuer
    oidc = json_object(host_http.get(issuer.rstrip("/") + OIDC_WELL_KNOWN, metadata_driven=True), "OIDC discovery")
    scopes = oidc.get("scopes_supported")
    missing = [s for s in ("openid", "email") if not (isinstance(scopes, list) and s in scopes)]
    if missing:
        fail(f"OIDC discovery does not advertise {missing} in scopes_supported {scopes!r}")
    userinfo = oidc.get("userinfo_endpoint")
    if not isinstance(userinfo, str) or not userinfo:
        fail("OIDC discovery advertises no userinfo_endpoint")
    # A token for UserInfo: no resource indicator (one for the tool server need not be valid at UserInfo).
    attempt = linker.attempt(request=linker.request(scopes=("openid", "email"), resource=None))
    if not attempt.ok or attempt.token is None or attempt.token.access_token is None:
        raise Blocked(attempt.rule or "AUTH-FLOW-02", attempt.problem or "no token for UserInfo")
    headers = {"Authorization": f"Bearer {attempt.token.access_token}", "Accept": "application/json"}
    claims = json_object(host_http.get(userinfo, headers=headers, metadata_driven=True), "UserInfo")
    email, verified = claims.get("email"), claims.get("email_verified")
    if not isinstance(email, str) or not email:
        fail(f"UserInfo returns no email (claims: {sorted(claims)})")
    expect(verified is True, f"UserInfo returns email_verified {json.dumps(verified)}, not true")
    observe(f"OIDC discovery advertises openid and email; UserInfo {userinfo} returns email and email_verified true")
    if not email.lower().endswith("@" + str(domain).lower().lstrip("@")):
        observe(f"the test account's email is not in {domain} (the workspace checks its own domain)")
