"""Defects injected through the IdP's configuration (provider.js reads the names from its config file)."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, row_maker

_m = row_maker("idp")

# Rules that need a completed authorization (a token for the tool server); a mutant that breaks the flow may
# fail or block them too.
AFTER_FLOW = frozenset(
    {
        *(f"AUTH-FLOW-0{i}" for i in range(1, 8)),
        *(f"AUTH-TOK-0{i}" for i in range(1, 10)),
        *(f"AUTH-CIMD-0{i}" for i in range(1, 7)),
        "AUTH-DCR-01",
        "AUTH-DCR-02",
        "AUTH-ISS-01",
        "AUTH-ISS-02",
        "AUTH-ISS-03",
        "AUTH-TOOL-05",
        "AUTH-CHAL-01",
        "AUTH-CHAL-02",
        "AUTH-REAUTH-01",
        "AUTH-WS-01",
        *(f"PROF-{i:02d}" for i in range(6, 14)),
    }
)

MUTANTS: list[Mutant] = [
    _m(
        "idp-pkce-optional",
        {"AUTH-FLOW-04"},
        "An authorization request without code_challenge is accepted (PKCE not required).",
    ),
    _m(
        "idp-pkce-confidential-exempt",
        {"AUTH-FLOW-04"},
        "PKCE is required of public clients only (node-oidc-provider's default): a confidential (private_key_jwt) "
        "client's authorization request without code_challenge is answered with a code.",
    ),
    _m(
        "idp-pkce-unchecked",
        {"AUTH-FLOW-03"},
        "The code_verifier is not checked against the code_challenge: any verifier is accepted.",
    ),
    _m(
        "idp-pkce-public-exempt",
        {"AUTH-FLOW-03"},
        "The code_verifier is checked only when the token request authenticates the client: a public "
        "client's (none) wrong verifier is accepted.",
    ),
    _m(
        "idp-cimd-secret-accepted",
        {"AUTH-CIMD-05"},
        "A CIMD client presenting client_secret_post (a method outside the intersection) is accepted.",
    ),
    _m(
        "idp-cimd-basic-accepted",
        {"AUTH-CIMD-05"},
        "A CIMD client presenting client_secret_basic (a method outside the intersection) is accepted.",
    ),
    _m(
        "idp-cimd-any-key",
        {"AUTH-CIMD-03"},
        "A CIMD client assertion whose signature does not verify is ignored (the request falls back to "
        "none): an assertion signed by any key is accepted.",
    ),
    _m(
        "idp-cimd-alg-none",
        {"AUTH-CIMD-03"},
        "An unsigned CIMD client assertion (alg none, any spelling) is taken as no assertion: the request "
        "falls back to none and is accepted.",
    ),
    _m(
        "idp-assertion-exp-optional",
        {"AUTH-CIMD-04"},
        "A CIMD client assertion without exp is taken as no assertion (exp is checked only when present):"
        " the request falls back to none and is accepted.",
    ),
    _m(
        "idp-code-reuse",
        {"AUTH-FLOW-06"},
        "Authorization codes are never marked used: a second exchange returns another token.",
    ),
    _m(
        "idp-jti-replay",
        {"AUTH-CIMD-04"},
        "The client-assertion replay cache forgets every jti: a replayed private_key_jwt is accepted.",
    ),
    _m(
        "idp-redirect-prefix",
        {"AUTH-FLOW-07"},
        "A redirect_uri is accepted when a registered one is a prefix of it (no exact match).",
    ),
    _m(
        "idp-redirect-prefix-confidential",
        {"AUTH-FLOW-07"},
        "A confidential (private_key_jwt) client's redirect_uri is accepted when a registered one is a prefix of it;"
        " a public client's is matched exactly.",
    ),
    _m(
        "idp-pkce-downgrade",
        {"AUTH-FLOW-03"},
        "A token request without code_verifier skips the PKCE check (RFC 9700 §4.8.2 downgrade).",
    ),
    _m(
        "idp-redirect-case-insensitive",
        {"AUTH-FLOW-07"},
        "A redirect_uri is accepted when it equals a registered one but for letter case.",
    ),
    _m(
        "idp-dcr-client-forgotten",
        {"AUTH-DCR-02"},
        "A registered client that got a token is deleted at its next authorization (invalid_client).",
        {"AUTH-REAUTH-01", "PROF-08"},
    ),
    _m("idp-email-unverified", {"AUTH-WS-01"}, "UserInfo returns email_verified: false."),
    _m(
        "idp-advertised-scope-refused",
        {"AUTH-ASM-07"},
        "scopes_supported lists tools.admin, but a request for it fails with invalid_scope.",
        AFTER_FLOW,
    ),
    _m(
        "idp-cimd-refused",
        {"AUTH-CIMD-01"},
        "CIMD is advertised, but no client metadata document is ever fetched (invalid_client).",
        {"AUTH-CIMD-02", "AUTH-CIMD-03", "AUTH-CIMD-04", "AUTH-CIMD-05", "AUTH-CIMD-06"},
    ),
    _m(
        "idp-cimd-no-private-key-jwt",
        {"AUTH-CIMD-02"},
        "A CIMD client whose document asks for private_key_jwt is refused.",
        {"AUTH-CIMD-03", "AUTH-CIMD-04", "AUTH-CIMD-05"},
    ),
    _m(
        "idp-cimd-stable-only",
        {"AUTH-CIMD-06"},
        "Callback-specific client documents (/oauth/{callback_id}/client.json) are refused.",
    ),
]
