"""Pinned verdict tables of the third-party targets: rule → expected status, with the reason for every non-pass.

Every rule of the auth and profile suites is pinned (``table`` fills in ``passed``); a changed verdict fails the
tests in tests/thirdparty/. Reasons quote the contract (``shared/spec/000_…``: "contract, <section>") or the RFC.
``known_wrong`` marks a verdict that issue 12 says the harness gets wrong, naming the class still to be fixed (its
fix will change the verdict, and the table with it).
"""

from __future__ import annotations

from tests.thirdparty._support import Verdict, table


def ids(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# -- issue 12 classes not fixed on this branch yet ------------------------------------------------------------------
LOCAL_MODE = "local mode: transport-only rules skipped on a loopback run, the rest decided (PASSED LOCALLY)"
ENDPOINT_WIDE = "endpoint-wide protection gets the full token attack suite"
SUMMARY = "a summary rule cannot fail where its parts were skipped (AUTH-CHAL-02)"
JUDGES_ONLY = "a rule judges only what it names (AUTH-DCR-02)"
IDENTITY = "client identity friction (DCR auth method defaults to what the AS lists first; skip hints)"
VACUOUS = "no vacuous passes"

# -- reasons shared by several targets -----------------------------------------------------------------------------
NO_SCOPE_IN_CHALLENGE = Verdict(
    "warning",
    "SHOULD: the 401 challenge has no scope=. Contract, Errors: 401 with `WWW-Authenticate: Bearer "
    'resource_metadata="<metadata_url>"` and optionally `scope="<scope_list>"`; MCP authorization spec: servers '
    "SHOULD include a scope parameter in the WWW-Authenticate header (RFC 6750 §3).",
)
NO_ISS_PARAMETER = Verdict(
    "warning",
    "SHOULD: no authorization_response_iss_parameter_supported. Contract, Authentication 8: 'Issuer identification "
    "(RFC 9207): set authorization_response_iss_parameter_supported true'.",
)
NO_MTLS = Verdict(
    "skipped",
    "AUTH-MTLS-01 'needs: --mtls'; the stack has no mTLS listener (contract, Authentication 5 is the host's "
    "certificate at a listener that asks for one).",
)
NO_WORKSPACE = Verdict(
    "skipped",
    "AUTH-WS-01 'needs: --workspace-domain'; the stack has no workspace domain restriction (contract, "
    "Authentication 9: optional).",
)
ISS_NOT_ADVERTISED = Verdict(
    "skipped",
    "AUTH-ISS-01 'needs: ASM-08 true'; the metadata does not advertise authorization_response_iss_parameter_supported.",
)
ISS_ERRORS_NOT_ADVERTISED = Verdict(
    "skipped",
    "AUTH-ISS-02 'needs: ASM-08 true' and ISS-03 judges iss only 'while advertised' (contract, Errors: '`iss` "
    "missing or mismatched while advertised'); not advertised here, and there is no consent page to decline.",
    known_wrong=f"{IDENTITY}: the skip hint names --login-steps, which cannot help",
)
DCR_ONLY = Verdict(
    "skipped",
    "No client_id_metadata_document_supported in the metadata: the host identifies itself by DCR (contract, "
    "Roles: CIMD, DCR or predefined clients), so the CIMD rules have nothing to judge.",
)
TOKEN_CHECKS_PENDING = Verdict(
    "skipped",
    "Today the harness presents tokens only to tools declared securitySchemes oauth2; these tools declare none and "
    "inherit the server default (contract, Authentication 6: 'If the array is omitted the tool inherits the server "
    "default. The server still verifies token, scopes and audience on every call.').",
    known_wrong=ENDPOINT_WIDE,
)
NO_DECLARED_TOOL = Verdict(
    "skipped",
    "AUTH-TOOL-03 judges tools declared noauth only or oauth2 only; no tool declares securitySchemes (contract, "
    "Authentication 6: omitted = the server default).",
)
NO_IN_CALL_FAILURE = Verdict(
    "skipped",
    "AUTH-CHAL-01 judges 'an auth failure inside a tool call'; this server refuses anonymous requests at the HTTP "
    "level (401 with a Bearer challenge, contract, Errors, first row), so no tool call fails inside.",
)
SUMMARY_PENDING = Verdict(
    "skipped",
    "Summary over PRM-01, TOOL-02, CHAL-01 (contract, Authentication 7); CHAL-01 has nothing to judge here.",
    known_wrong=SUMMARY,
)
NO_PROFILE_TOOL = Verdict(
    "skipped",
    "No tool carries _meta['<vendor>/profile']: true (contract, Profile tool rules 7: 'Without one, accounts can "
    "still connect'); the profile rules have nothing to judge.",
    known_wrong=f"{IDENTITY}: the skip hint names --vendor-prefix, which cannot help",
)
NO_BLANKING_HOOK = Verdict(
    "skipped",
    "PROF-13 'needs: a reference or vendor hook that blanks the stored profile id'; the stack has none.",
)
PKCE_OPTIONAL = Verdict(
    "warning",
    "SHOULD: an authorization request without code_challenge was answered with a code (AUTH-FLOW-04: 'An "
    "authorization request without code_challenge, or with method plain, is refused'; OAuth 2.1 §4.1.1: clients "
    "MUST use code_challenge). node-oidc-provider requires PKCE only for public clients by default.",
)

# -- 1. TypeScript SDK example (simpleStreamableHttp.js --oauth / --oauth-strict), plain HTTP on loopback ----------
_TS_BLOCKED = Verdict(
    "blocked",
    "Blocked by AUTH-ASM-04 (plain-HTTP endpoints on a loopback run).",
    known_wrong=f"{LOCAL_MODE}; once decided, AUTH-FLOW-06 fails on a 500 for a replayed code (h12-findings F1)",
)
_TS_PASSES = ids("AUTH-PRM-03 AUTH-PRM-04 AUTH-PRM-05 AUTH-ASM-01 AUTH-ASM-02 AUTH-ASM-03 AUTH-ASM-05 AUTH-ASM-06")
_TS_NOT_HTTPS = "Contract: 'resource … Canonical HTTPS identifier'; the example serves http://localhost only."
TS_SDK_OAUTH = table(
    {
        "AUTH-PRM-01": Verdict("failed", _TS_NOT_HTTPS, known_wrong=LOCAL_MODE),
        "AUTH-PRM-02": Verdict("failed", _TS_NOT_HTTPS, known_wrong=LOCAL_MODE),
        "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
        "AUTH-ASM-04": Verdict(
            "failed", "AUTH-ASM-04: 'absolute HTTPS URLs'; the demo AS is http://localhost.", known_wrong=LOCAL_MODE
        ),
        "AUTH-ASM-08": NO_ISS_PARAMETER,
        "AUTH-MTLS-01": NO_MTLS,
    },
    rest=_TS_BLOCKED,
    passes=_TS_PASSES,
)
# --oauth-strict changes what the AS and the tool server accept for another resource (AUTH-TOK-06), which the
# harness does not reach yet: the same table until local mode and endpoint-wide token checks land.
TS_SDK_OAUTH_STRICT = dict(TS_SDK_OAUTH)

# -- 2. Python SDK vendor server (pysdk_server.py): DCR only, own sign-in page, introspection -------------------------
_PYSDK_BASIC = Verdict(
    "failed",
    "The SDK's token endpoint refuses client_secret_basic without client_id in the body ('Missing client_id'), "
    "though its metadata lists client_secret_basic: contract, Authentication 4 'The authorization server accepts "
    "any method in the intersection'; RFC 6749 §4.1.3 requires client_id in the body only 'if the client is not "
    "authenticating with the authorization server as described in Section 3.2.1'.",
    known_wrong=f"{IDENTITY}: a real violation, but the harness picks basic although the AS lists "
    "client_secret_post first; with that default this rule passes and the flow goes on",
)
_PYSDK_BLOCKED = Verdict("blocked", "Blocked by AUTH-FLOW-02 (no token: see AUTH-FLOW-02).", known_wrong=IDENTITY)
_PYSDK = {
    "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
    "AUTH-ASM-08": NO_ISS_PARAMETER,
    **dict.fromkeys(["AUTH-CIMD-01", "AUTH-CIMD-02", "AUTH-CIMD-03", "AUTH-CIMD-04", "AUTH-CIMD-05"], DCR_ONLY),
    "AUTH-CIMD-06": DCR_ONLY,
    "AUTH-DCR-02": Verdict(
        "failed",
        "Reported for the first-use refusal that AUTH-FLOW-02 already fails (AUTH-DCR-02 is about the client staying "
        "valid: 'a second authorization and a refresh on the same client succeed').",
        known_wrong=JUDGES_ONLY,
    ),
    "AUTH-FLOW-02": _PYSDK_BASIC,
    "AUTH-ISS-01": ISS_NOT_ADVERTISED,
    "AUTH-ISS-02": ISS_ERRORS_NOT_ADVERTISED,
    "AUTH-ISS-03": ISS_ERRORS_NOT_ADVERTISED,
    "AUTH-MTLS-01": NO_MTLS,
}
_PYSDK_PASSES = ids(
    "AUTH-PRM-01 AUTH-PRM-02 AUTH-PRM-03 AUTH-PRM-04 AUTH-PRM-05 AUTH-ASM-01 AUTH-ASM-02 AUTH-ASM-03 AUTH-ASM-04"
    " AUTH-ASM-05 AUTH-ASM-06 AUTH-ASM-07 AUTH-DCR-01 AUTH-FLOW-01"
)
PYSDK_AUDIENCE = table(_PYSDK, rest=_PYSDK_BLOCKED, passes=_PYSDK_PASSES)
PYSDK_DEFAULT = table(_PYSDK, rest=_PYSDK_BLOCKED, passes=_PYSDK_PASSES)

# -- 3. FastMCP JWTVerifier + RemoteAuthProvider over stock node-oidc-provider ----------------------------------------
_FASTMCP = {
    "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
    "AUTH-CIMD-05": Verdict(
        "failed",
        "node-oidc-provider honours only the CIMD document's legacy singular token_endpoint_auth_method "
        "(private_key_jwt) and refuses `none`, which the document's token_endpoint_auth_methods_supported lists: "
        "contract, Authentication 4 'The authorization server accepts any method in the intersection unless local "
        "policy forbids it'; Versioning 1 (SEP-3149: the plural list).",
    ),
    "AUTH-FLOW-04": PKCE_OPTIONAL,
    **dict.fromkeys([f"AUTH-TOK-0{i}" for i in range(1, 10)], TOKEN_CHECKS_PENDING),
    "AUTH-TOOL-03": NO_DECLARED_TOOL,
    "AUTH-CHAL-01": NO_IN_CALL_FAILURE,
    "AUTH-CHAL-02": SUMMARY_PENDING,
    "AUTH-MTLS-01": NO_MTLS,
    "AUTH-WS-01": NO_WORKSPACE,
    "PROF-02": Verdict(
        "failed",
        "FastMCP's generated inputSchema for whoami() has no additionalProperties: false: contract, Profile tool "
        "rules 1 'Takes an empty argument object (inputSchema has no properties and no additional properties)'.",
    ),
    "PROF-04": Verdict(
        "failed",
        "The profile tool declares no securitySchemes (FastMCP has no way to declare them): contract, Profile tool "
        "rules 3 'Declaration: … securitySchemes oauth2'.",
    ),
    "PROF-13": NO_BLANKING_HOOK,
    # Passes that exercised less than the rule names (issue 12: no vacuous passes).
    "AUTH-DCR-02": Verdict(
        "passed",
        "'no refresh token was issued: only a second authorization was tried'; the rule names 'a second "
        "authorization and a refresh on the same client'.",
        known_wrong=VACUOUS,
    ),
    "AUTH-REAUTH-01": Verdict(
        "passed",
        "'first openid mcp:tools, then mcp:tools openid': the same scopes twice; the rule is 'Reauthorization "
        "requesting more scopes succeeds' (contract, Authentication 10).",
        known_wrong=VACUOUS,
    ),
    "PROF-08": Verdict(
        "passed",
        "Only the new-connection case ran (no refresh token, no scope upgrade); the rule names 'token refresh, a new "
        "connection …, and a scope upgrade'.",
        known_wrong=VACUOUS,
    ),
    "PROF-10": Verdict(
        "passed",
        "'compared with [] of 2 account(s)': nothing compared, while the id is the account's email login "
        "(devInteractions uses the login as sub); contract, Profile record rule 7 'Names, emails or organization "
        "relations are not encoded in the id'.",
        known_wrong=f"{VACUOUS} (h12-findings F2)",
    ),
}
FASTMCP_AUDIENCE = table(_FASTMCP)
# Without the audience check the tool server accepts a token issued for another resource: AUTH-TOK-06 must fail
# ('A token for another audience → 401'; contract, Authentication 2) once the token checks reach the endpoint.
FASTMCP_NO_AUDIENCE = table(_FASTMCP)
_PATHLESS_PASSES = ids(
    "AUTH-PRM-01 AUTH-PRM-02 AUTH-PRM-04 AUTH-PRM-05 AUTH-ASM-01 AUTH-ASM-03 AUTH-ASM-04 AUTH-ASM-05 AUTH-ASM-06"
)
FASTMCP_PATHLESS = table(
    {
        "AUTH-PRM-03": Verdict(
            "failed",
            "FastMCP (pydantic AnyHttpUrl) lists 'https://127.0.0.1:PORT/' for node-oidc-provider's issuer "
            "'https://127.0.0.1:PORT': contract, Protected resource metadata 'Each must equal the issuer of the "
            "matching authorization server metadata exactly'.",
        ),
        "AUTH-ASM-02": Verdict(
            "failed",
            "Same mismatch seen from the AS side: contract, AS metadata 'issuer … Exact string match is used (no "
            "normalizing of slash, path, port or case)'.",
        ),
        "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
        "AUTH-ASM-08": Verdict(
            "passed",
            "Its own observation says 'issuer identification not met: metadata issuer differs from the "
            "authorization_servers entry' (contract, Authentication 8: 'use the identical issuer string').",
            known_wrong=f"{VACUOUS} (AUTH-ASM-08 passes while issuer identification is not met)",
        ),
        "AUTH-MTLS-01": NO_MTLS,
    },
    rest=Verdict(
        "blocked", "Blocked by AUTH-ASM-02: a host rejects an issuer that differs (contract, Authentication 8)."
    ),
    passes=_PATHLESS_PASSES,
)
