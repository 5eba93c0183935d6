"""Pinned verdict tables of the third-party targets: rule → expected status, with the reason for every non-pass,
and the run's overall verdict.

Every rule of the auth and profile suites is pinned (``table`` fills in ``passed``); a changed verdict fails the
tests in tests/thirdparty/. Reasons quote the contract (``shared/spec/000_…``: "contract, <section>"), the rule
catalogue (``shared/requirements.md``) or the RFC. ``known_wrong`` marks a verdict that is the harness's mistake
today, naming the finding (``h12-findings.md``) or issue 12's class; its fix changes the verdict, and the table with
it. None is left after merging the h12-verdicts fixes; ``table`` still accepts such an entry.
"""

from __future__ import annotations

from tests.thirdparty._support import Pinned, Verdict, passed, table


def ids(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# -- verdicts shared by several targets ----------------------------------------------------------------------------
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
NO_MTLS = Verdict("skipped", "AUTH-MTLS-01 'needs: --mtls'; the stack has no mTLS listener.")
NO_WORKSPACE = Verdict(
    "skipped", "AUTH-WS-01 'needs: --workspace-domain' (contract, Authentication 9: optional); none configured."
)
NOT_CIMD = Verdict(
    "skipped",
    "The host identifies itself by DCR or a predefined client: the metadata has no client_id_metadata_document_"
    "supported (contract, Roles).",
)
ISS_NOT_ADVERTISED = Verdict(
    "skipped", "AUTH-ISS-01 'needs: ASM-08 true'; authorization_response_iss_parameter_supported is not advertised."
)
NO_ERROR_RESPONSE = Verdict(
    "skipped",
    "AUTH-ISS-02/03 need an error authorization response; this AS grants without a consent page the user could "
    "decline, and does not advertise iss (contract, Errors: 'iss missing or mismatched while advertised').",
)
LONG_TOKENS = Verdict(
    "skipped",
    "AUTH-TOK-05 'needs: token lifetime ≤ --max-expiry-wait, or harness-issued tokens'; access tokens live 3600 s.",
)
NO_TEST_ISSUER = Verdict("skipped", "AUTH-TOK-07 'needs: harness-issued tokens'; the server trusts only its AS.")
NO_SCOPED_TOOL = Verdict(
    "skipped",
    "AUTH-TOK-08 names 'a token lacking a tool's required scope'; no tool declares scopes and the endpoint's 401 "
    "challenge names none (contract, Errors: 'optionally scope=\"<scope_list>\"'), so no required scope is known.",
)
NO_SCOPE_REFUSAL = Verdict(
    "skipped",
    "AUTH-TOK-10 judges 'that refusal' of AUTH-TOK-08, which has no token lacking a known required scope to send "
    "(no tool declares scopes and the endpoint's 401 challenge names none).",
)
NO_MIXED_TOOL = Verdict(
    "skipped",
    "AUTH-TOOL-07 judges 'a tool declaring both noauth and oauth2'; no tool declares securitySchemes (contract, "
    "Authentication 6: 'Declaring both means anonymous use is allowed and linking unlocks more').",
)
NO_DECLARED_TOOL = Verdict(
    "skipped",
    "AUTH-TOOL-03 judges tools declared noauth only or oauth2 only; no tool declares securitySchemes (contract, "
    "Authentication 6: 'If the array is omitted the tool inherits the server default').",
)
NO_DECLARATION = Verdict(
    "skipped",
    "AUTH-TOOL-02 judges `securitySchemes` 'when present'; no tool declares it (contract, Authentication 6: 'If the "
    "array is omitted the tool inherits the server default').",
)
NO_WRITING_TOOL = Verdict(
    "skipped",
    "AUTH-TOOL-04 judges 'A tool declared as writing (readOnlyHint: false or destructiveHint: true)'; no tool here "
    "declares either (a tool without readOnlyHint is reported, not judged).",
)
NO_PROFILE_MARKER = Verdict(
    "skipped",
    "AUTH-TOOL-06 judges `_meta[\"<vendor>/profile\"]` 'when present'; no tool carries the marker.",
)
NO_IN_CALL_FAILURE = Verdict(
    "skipped",
    "AUTH-CHAL-01 judges 'an auth failure inside a tool call'; the server refuses anonymous requests at the HTTP "
    "level (contract, Errors, first row), so no tool call fails inside.",
)
NO_LINKING_TOOL = Verdict(
    "skipped",
    "AUTH-CHAL-02 summarises PRM-01, TOOL-02, CHAL-01 (contract, Authentication 7: 'the tool declares "
    "securitySchemes'); no tool declares oauth2, so there is no linking trigger to judge.",
)
ONE_SCOPE = Verdict(
    "skipped",
    "AUTH-REAUTH-01 'Reauthorization requesting more scopes'; the AS advertises no scope beyond what the host "
    "already requests.",
)
NO_BLANKING_HOOK = Verdict(
    "skipped", "PROF-13 'needs: a reference or vendor hook that blanks the stored profile id'; the stack has none."
)
NO_PROFILE_TOOL = Verdict(
    "skipped",
    "No tool carries _meta['<vendor>/profile']: true (contract, Profile tool rules 7: 'Without one, accounts can "
    "still connect'); the profile rules have nothing to judge.",
)
AUDIENCE_NOT_CHECKED = Verdict(
    "failed",
    "A token the AS issued for another resource (--alt-resource) was accepted: AUTH-TOK-06 'A token for another "
    "audience is refused'; contract, Authentication 2 'performs every check itself on each request: … audience or "
    "resource claim'; Errors: 'wrong audience … HTTP 401'.",
)
PROFILE_RULES = ids("PROF-02 PROF-03 PROF-04 PROF-05 PROF-06 PROF-07 PROF-08 PROF-09 PROF-10 PROF-11 PROF-12 PROF-13")
LINKED_SKIPS = {
    "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
    "AUTH-TOK-05": LONG_TOKENS,
    "AUTH-TOK-07": NO_TEST_ISSUER,
    "AUTH-TOK-08": NO_SCOPED_TOOL,
    "AUTH-TOK-10": NO_SCOPE_REFUSAL,
    "AUTH-TOOL-02": NO_DECLARATION,
    "AUTH-TOOL-04": NO_WRITING_TOOL,
    "AUTH-TOOL-07": NO_MIXED_TOOL,
    "AUTH-TOOL-03": NO_DECLARED_TOOL,
    "AUTH-CHAL-01": NO_IN_CALL_FAILURE,
    "AUTH-CHAL-02": NO_LINKING_TOOL,
    "AUTH-MTLS-01": NO_MTLS,
    "AUTH-WS-01": NO_WORKSPACE,
    "AUTH-REAUTH-01": ONE_SCOPE,
}
NO_CIMD = Verdict(
    "failed",
    "The authorization server offers DCR only: no client_id_metadata_document_supported. AUTH-ASM-09 'supports CIMD "
    "… (DCR or a predefined client may stand beside it, not instead of it)'; contract, Authentication 12: 'an "
    "established identity provider that supports discovery, CIMD (none or private_key_jwt), DCR when needed'.",
)
DCR_ONLY = {
    "AUTH-ASM-08": NO_ISS_PARAMETER,
    "AUTH-ASM-09": NO_CIMD,
    **dict.fromkeys(
        ids("AUTH-CIMD-01 AUTH-CIMD-02 AUTH-CIMD-03 AUTH-CIMD-04 AUTH-CIMD-05 AUTH-CIMD-06 AUTH-CIMD-07"), NOT_CIMD
    ),
    "AUTH-ISS-01": ISS_NOT_ADVERTISED,
    "AUTH-ISS-02": NO_ERROR_RESPONSE,
    "AUTH-ISS-03": NO_ERROR_RESPONSE,
}

LOOPBACK = Verdict(
    "skipped",
    "--allow-insecure-loopback: transport not judged on a loopback run (contract: 'Canonical HTTPS identifier', "
    "'(HTTPS)' endpoints); the server serves plain HTTP on loopback, as the SDKs' examples run.",
)

# -- 1. TypeScript SDK example (simpleStreamableHttp.js --oauth / --oauth-strict), plain HTTP on loopback ----------
_TS = {
    **LINKED_SKIPS,
    **DCR_ONLY,
    "AUTH-PRM-01": LOOPBACK,
    "AUTH-PRM-02": LOOPBACK,
    "AUTH-ASM-04": LOOPBACK,
    "AUTH-TOK-03": Verdict(
        "failed",
        "A token with one character changed gets HTTP 500, not 401: the example's introspecting verifier throws a "
        "plain Error, which the SDK's requireBearerAuth answers with 500. Contract, Errors: 'token invalid … HTTP "
        "401 with header WWW-Authenticate: Bearer resource_metadata=…'.",
    ),
    "AUTH-TOK-04": Verdict(
        "failed", "Forged tokens (unknown key, untrusted issuer, alg none) get HTTP 500, not 401: as AUTH-TOK-03."
    ),
    "AUTH-TOK-02": Verdict(
        "failed",
        "Malformed Bearer values (outside RFC 6750 §2.1's b64token syntax, two tokens, a JWT-shaped value of garbage) "
        "get HTTP 500, not 401: the same verifier error as AUTH-TOK-03 (issue 16's attack table for AUTH-TOK-02). "
        "AUTH-TOK-02: 'an empty or malformed Authorization header … → 401 or auth error result'.",
    ),
    "AUTH-TOOL-06": NO_PROFILE_MARKER,
    **dict.fromkeys(PROFILE_RULES, NO_PROFILE_TOOL),
}
TS_SDK_OAUTH = Pinned(table({**_TS, "AUTH-TOK-06": AUDIENCE_NOT_CHECKED}), "NOT ACCEPTED")
TS_SDK_OAUTH_STRICT = Pinned(
    table(
        {
            **_TS,
            "AUTH-TOK-06": Verdict(
                "skipped",
                "AUTH-TOK-06 'needs: a second resource'; with --oauth-strict the demo AS refuses to issue a token "
                "for any other resource (its token request answers 500), so no such token exists to present.",
            ),
        }
    ),
    "NOT ACCEPTED",
)

# -- 2. Python SDK vendor server (pysdk_server.py): DCR only, own sign-in page, introspection -------------------------
_PYSDK = {
    **LINKED_SKIPS,
    **DCR_ONLY,
    "AUTH-TOOL-06": NO_PROFILE_MARKER,
    **dict.fromkeys(PROFILE_RULES, NO_PROFILE_TOOL),
}
PYSDK_AUDIENCE = Pinned(table(_PYSDK), "NOT ACCEPTED")
PYSDK_PREDEFINED = Pinned(
    table(
        {
            **_PYSDK,
            "AUTH-DCR-01": Verdict(
                "skipped",
                "The vendor gave a predefined client (--client-registration predefined): the host registers nothing "
                "(contract, Roles: 'predefined OAuth clients'); AUTH-DCR-02 judges that configured client instead.",
            ),
        }
    ),
    "NOT ACCEPTED",
)
# 8-second access tokens: AUTH-TOK-05 is decided (and passes), nothing else changes.
PYSDK_SHORT_TOKENS = Pinned(table({r: v for r, v in _PYSDK.items() if r != "AUTH-TOK-05"}), "NOT ACCEPTED")
# Plain HTTP on loopback with --allow-insecure-loopback: the transport parts are not judged, the rest is as above.
PYSDK_LOCAL = Pinned(
    table({**_PYSDK, "AUTH-PRM-01": LOOPBACK, "AUTH-PRM-02": LOOPBACK, "AUTH-ASM-04": LOOPBACK}), "NOT ACCEPTED"
)
PYSDK_DEFAULT = Pinned(table({**_PYSDK, "AUTH-TOK-06": AUDIENCE_NOT_CHECKED}), "NOT ACCEPTED")

# -- 3. FastMCP JWTVerifier + RemoteAuthProvider over stock node-oidc-provider ----------------------------------------
_FASTMCP = {
    **LINKED_SKIPS,
    "AUTH-TOOL-04": NO_WRITING_TOOL,
    "AUTH-FLOW-04": Verdict(
        "warning",
        "SHOULD: an authorization request without code_challenge was answered with a code (AUTH-FLOW-04: 'An "
        "authorization request without code_challenge is refused'; OAuth 2.1 §4.1.1: clients MUST use "
        "code_challenge). node-oidc-provider requires PKCE only of public clients by default.",
    ),
    "PROF-02": Verdict(
        "failed",
        "FastMCP's generated inputSchema for whoami() has no additionalProperties: false: contract, Profile tool "
        "rules 1 'Takes an empty argument object (inputSchema has no properties and no additional properties)'.",
    ),
    "PROF-04": Verdict(
        "failed",
        "The profile tool declares no securitySchemes (FastMCP 2 has no way to declare them): contract, Profile "
        "tool rules 3 'Declaration: … securitySchemes oauth2'.",
    ),
    "PROF-08": Verdict(
        "skipped",
        "PROF-08 names 'token refresh, a new connection …, and a scope upgrade'; the stock provider issues no "
        "refresh token here and offers no other scope, so only the new-connection case could run.",
    ),
    "PROF-10": Verdict(
        "warning",
        "SHOULD: the profile id is the account's email (devInteractions uses the login as sub, and the vendor's "
        "whoami returns sub): contract, Profile record, rules for id 7 'Names, emails or organization relations are "
        "not encoded in the id'.",
    ),
    "PROF-13": NO_BLANKING_HOOK,
}
FASTMCP_AUDIENCE = Pinned(table(_FASTMCP), "NOT ACCEPTED")
FASTMCP_NO_AUDIENCE = Pinned(table({**_FASTMCP, "AUTH-TOK-06": AUDIENCE_NOT_CHECKED}), "NOT ACCEPTED")
FASTMCP_PATHLESS = Pinned(
    table(
        {
            "AUTH-PRM-03": Verdict(
                "failed",
                "FastMCP (pydantic AnyHttpUrl) lists 'https://127.0.0.1:PORT/' for node-oidc-provider's issuer "
                "'https://127.0.0.1:PORT': contract, Protected resource metadata 'Each must equal the issuer of the "
                "matching authorization server metadata exactly'.",
            ),
            "AUTH-ASM-02": Verdict(
                "failed",
                "The same mismatch from the AS side: contract, AS metadata 'issuer … Exact string match is used (no "
                "normalizing of slash, path, port or case)'.",
            ),
            "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
            "AUTH-ASM-08": Verdict(
                "warning",
                "SHOULD: iss is advertised but issuer identification is not met, the issuers differ (contract, "
                "Authentication 8: 'use the identical issuer string in metadata issuer and in "
                "authorization_servers').",
            ),
            "AUTH-MTLS-01": NO_MTLS,
        },
        rest=Verdict(
            "blocked", "Blocked by AUTH-ASM-02: a host rejects an issuer that differs (contract, Authentication 8)."
        ),
        passes=ids(
            "AUTH-PRM-01 AUTH-PRM-02 AUTH-PRM-04 AUTH-PRM-05 AUTH-ASM-01 AUTH-ASM-03 AUTH-ASM-04 AUTH-ASM-05"
            " AUTH-ASM-06"
        ),
    ),
    "NOT ACCEPTED",
)

# -- rules the harness has no check for yet (their checks change these rows) --------------------------------------
NO_CHECK_YET = {
    rule: Verdict(
        "skipped",
        f"{rule}: 'no check for this rule in this harness version' (a catalogue row whose check is being written; "
        "the check decides this row).",
    )
    for rule in ("AUTH-TOK-10", "AUTH-TOOL-07")
}
ALL_PROFILE_RULES = (*PROFILE_RULES, "PROF-14", "PROF-15")

# -- 4. authlib (Flask) authorization server in front of an MCP Python SDK tool server (authlib_server.py) ----------
_AUTHLIB = {
    "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
    **dict.fromkeys(
        ids("AUTH-CIMD-01 AUTH-CIMD-02 AUTH-CIMD-03 AUTH-CIMD-04 AUTH-CIMD-05 AUTH-CIMD-06 AUTH-CIMD-07"), NOT_CIMD
    ),
    "AUTH-FLOW-04": Verdict(
        "warning",
        "SHOULD: an authorization request without code_challenge (and one with code_challenge_method plain) was "
        "answered with a code. authlib's CodeChallenge(required=True) refuses a missing code_verifier only at the "
        "token endpoint and only for public clients, and accepts 'plain' by default (SUPPORTED_CODE_CHALLENGE_METHOD) "
        "although the metadata lists only S256. AUTH-FLOW-04 'An authorization request without code_challenge is "
        "refused'; OAuth 2.1 §4.1.1 (clients MUST use code_challenge), RFC 9700 §2.1.1.",
    ),
    "AUTH-TOK-05": Verdict(
        "skipped",
        "AUTH-TOK-05 'needs: token lifetime ≤ --max-expiry-wait, or harness-issued tokens'; authlib's Flask "
        "integration gives authorization-code tokens expires_in 864000 s (its default).",
    ),
    "AUTH-TOK-06": Verdict(
        "skipped",
        "AUTH-TOK-06 'needs: a second resource': authlib's JWTBearerTokenGenerator does not implement RFC 8707 (its "
        "aud is get_audiences(), here this server), so the AS issues no token for another audience.",
    ),
    "AUTH-TOK-07": NO_TEST_ISSUER,
    "AUTH-TOK-08": NO_SCOPED_TOOL,
    "AUTH-TOOL-02": NO_DECLARATION,
    "AUTH-TOOL-03": NO_DECLARED_TOOL,
    "AUTH-TOOL-04": NO_WRITING_TOOL,
    "AUTH-TOOL-06": NO_PROFILE_MARKER,
    "AUTH-CHAL-01": NO_IN_CALL_FAILURE,
    "AUTH-CHAL-02": NO_LINKING_TOOL,
    "AUTH-MTLS-01": NO_MTLS,
    "AUTH-WS-01": NO_WORKSPACE,
    "AUTH-REAUTH-01": ONE_SCOPE,
    **dict.fromkeys(ALL_PROFILE_RULES, NO_PROFILE_TOOL),
    **NO_CHECK_YET,
}
AUTHLIB_DCR = Pinned(table({**_AUTHLIB, "AUTH-ASM-09": NO_CIMD}), "NOT ACCEPTED")
AUTHLIB_PREDEFINED = Pinned(
    table(
        {
            **_AUTHLIB,
            "AUTH-ASM-09": Verdict(
                "failed",
                "No client_id_metadata_document_supported: the vendor configured one client for the host. AUTH-ASM-09 "
                "'supports CIMD … (DCR or a predefined client may stand beside it, not instead of it)'; contract, "
                "Authentication 12.",
            ),
            "AUTH-DCR-01": Verdict(
                "skipped",
                "AUTH-DCR-01 judges a registration_endpoint; this AS offers none (a predefined client: contract, Roles "
                "'predefined OAuth clients'). AUTH-DCR-02 judges the configured client instead.",
            ),
        }
    ),
    "NOT ACCEPTED",
)
SDK_TRAILING_SLASH = Verdict(
    "failed",
    "The MCP Python SDK (AuthSettings.issuer_url, pydantic AnyHttpUrl) lists 'https://127.0.0.1:PORT/' in "
    "authorization_servers for the path-less issuer 'https://127.0.0.1:PORT' that authlib's metadata states: contract, "
    "Protected resource metadata 'Each must equal the issuer of the matching authorization server metadata exactly'.",
)
AUTHLIB_PATHLESS = Pinned(
    table(
        {
            "AUTH-PRM-03": SDK_TRAILING_SLASH,
            "AUTH-ASM-02": Verdict(
                "failed",
                "The same mismatch from the AS side: contract, AS metadata 'issuer … Exact string match is used (no "
                "normalizing of slash, path, port or case)'.",
            ),
            "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
            "AUTH-ASM-08": Verdict(
                "warning",
                "SHOULD: iss is advertised but issuer identification is not met, the issuers differ (contract, "
                "Authentication 8: 'use the identical issuer string in metadata issuer and in "
                "authorization_servers').",
            ),
            "AUTH-MTLS-01": NO_MTLS,
            **NO_CHECK_YET,
        },
        rest=Verdict(
            "blocked", "Blocked by AUTH-ASM-02: a host rejects an issuer that differs (contract, Authentication 8)."
        ),
        passes=ids(
            "AUTH-PRM-01 AUTH-PRM-02 AUTH-PRM-04 AUTH-PRM-05 AUTH-ASM-01 AUTH-ASM-03 AUTH-ASM-04 AUTH-ASM-05"
            " AUTH-ASM-06"
        ),
    ),
    "NOT ACCEPTED",
)

# -- 5. better-auth (oauth-provider + mcp plugins) in front of an MCP TypeScript SDK server (better_auth/server.mjs) --
# Today the host registers its loopback redirect (http://127.0.0.1/oauth/callback) by DCR as a web client (no
# application_type); better-auth refuses it by the OpenID DCR rules ("web clients require https redirect URIs") and
# the harness files that as AUTH-DCR-01 failing, which blocks every rule behind the first link. The rows below state
# what the harness concludes once the host registers a loopback redirect as a native client (RFC 8252 §7.3, OpenID
# DCR application_type native); "today" is what it concludes now.
LOOPBACK_AS_WEB_CLIENT = "DCR: a loopback redirect registered as a native client (application_type native)"
CONSENT_NOT_ASKED = "error paths: prompt=consent asked when the AS lists it (consent is remembered here)"


def _after_registration(verdict: Verdict, awaits: str = LOOPBACK_AS_WEB_CLIENT) -> Verdict:
    """A row that today's harness blocks behind its own registration failure (AUTH-DCR-01)."""
    return Verdict(verdict.status, verdict.reason or "passes once registered", awaits=awaits, today="blocked")


_BA_PASSES_AFTER_REGISTRATION = ids(
    "AUTH-ASM-07 AUTH-DCR-02 AUTH-FLOW-01 AUTH-FLOW-02 AUTH-FLOW-04 AUTH-FLOW-05 AUTH-FLOW-06 AUTH-FLOW-07 "
    "AUTH-ISS-01 AUTH-TOK-01 AUTH-TOK-03 AUTH-TOK-04 AUTH-TOK-09 AUTH-TOOL-01 AUTH-TOOL-05 PROF-01"
)
_BA_TRUE = {
    "AUTH-ASM-09": NO_CIMD,
    **dict.fromkeys(
        ids("AUTH-CIMD-01 AUTH-CIMD-02 AUTH-CIMD-03 AUTH-CIMD-04 AUTH-CIMD-05 AUTH-CIMD-06 AUTH-CIMD-07"),
        Verdict(
            "skipped",
            "The host identifies itself by DCR: this configuration composes mcp() without the cimd() plugin, so the "
            "metadata has no client_id_metadata_document_supported (contract, Roles).",
        ),
    ),
    "AUTH-FLOW-03": Verdict(
        "failed",
        "A wrong code_verifier (and the code_challenge itself as the verifier) is answered 401 invalid_request ('code "
        "verification failed'): RFC 7636 §4.6 'If the values are not equal, an error response indicating "
        '"invalid_grant" as described in Section 5.2 of [RFC6749] MUST be returned\'; RFC 6749 §5.2: HTTP 400 '
        "(401 only for invalid_client).",
    ),
    "AUTH-TOK-02": Verdict(
        "failed",
        "A malformed Authorization header ('Bearer' without a token, a Basic header, a token without a scheme, the "
        'token under another scheme) is answered 401 with only a DPoP challenge (error="invalid_token", '
        "'authorization scheme must be Bearer or DPoP'), no Bearer challenge and no resource_metadata: contract, "
        "Errors: 'token missing or invalid … HTTP 401 with header WWW-Authenticate: Bearer resource_metadata=…'; "
        "RFC 6750 §3.",
    ),
    "AUTH-TOK-05": Verdict(
        "skipped",
        "AUTH-TOK-05 'needs: token lifetime ≤ --max-expiry-wait, or harness-issued tokens'; access tokens live 3600 s.",
    ),
    "AUTH-TOK-06": Verdict(
        "skipped",
        "AUTH-TOK-06 'needs: a second resource': mcp() binds tokens to its one resource (no --alt-resource the AS "
        "would issue a token for).",
    ),
    "AUTH-TOK-07": NO_TEST_ISSUER,
    "AUTH-TOK-08": NO_SCOPED_TOOL,
    "AUTH-TOOL-02": NO_DECLARATION,
    "AUTH-TOOL-03": NO_DECLARED_TOOL,
    "AUTH-TOOL-04": NO_WRITING_TOOL,
    "AUTH-TOOL-06": NO_PROFILE_MARKER,
    "AUTH-CHAL-01": NO_IN_CALL_FAILURE,
    "AUTH-CHAL-02": NO_LINKING_TOOL,
    "AUTH-WS-01": NO_WORKSPACE,
    "AUTH-REAUTH-01": Verdict(
        "skipped",
        "AUTH-REAUTH-01 'Reauthorization requesting more scopes'; the host already requests every scope the "
        "resource's metadata names (openid email profile; offline_access is the AS's own).",
    ),
    **dict.fromkeys(ALL_PROFILE_RULES, NO_PROFILE_TOOL),
}
BETTER_AUTH = Pinned(
    table(
        {
            "AUTH-PRM-06": NO_SCOPE_IN_CHALLENGE,
            "AUTH-MTLS-01": NO_MTLS,
            **NO_CHECK_YET,
            "AUTH-DCR-01": Verdict(
                "passed",
                "Open registration (allowUnauthenticatedClientRegistration) accepts a native client with a loopback "
                "redirect. Today the host registers http://127.0.0.1/oauth/callback as a web client and better-auth "
                "refuses it (400 invalid_redirect_uri, OpenID DCR: web clients use https): the harness's choice, not "
                "the target's MUST failure.",
                awaits=LOOPBACK_AS_WEB_CLIENT,
                today="failed",
            ),
            **{rule: _after_registration(v) for rule, v in _BA_TRUE.items()},
            **{rule: _after_registration(passed()) for rule in _BA_PASSES_AFTER_REGISTRATION},
            **{
                rule: _after_registration(
                    Verdict(
                        "passed",
                        "prompt=consent (listed in prompt_values_supported) reaches the consent page; Deny redirects "
                        "with error=access_denied and iss, and invalid_scope errors carry iss too (RFC 9207 §2).",
                    ),
                    f"{LOOPBACK_AS_WEB_CLIENT}; {CONSENT_NOT_ASKED}",
                )
                for rule in ("AUTH-ISS-02", "AUTH-ISS-03")
            },
        }
    ),
    "NOT ACCEPTED",
)
