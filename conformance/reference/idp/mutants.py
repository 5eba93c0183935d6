"""Defects injected through the IdP's configuration (provider.js reads the names from its config file)."""

from __future__ import annotations

from conformance.reference.mutants import Mutant

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
    Mutant(
        name="idp-pkce-optional",
        service="idp",
        rules=frozenset({"AUTH-FLOW-04"}),
        description="An authorization request without code_challenge is accepted (PKCE not required).",
    ),
    Mutant(
        name="idp-pkce-unchecked",
        service="idp",
        rules=frozenset({"AUTH-FLOW-03"}),
        description="The code_verifier is not checked against the code_challenge: any verifier is accepted.",
    ),
    Mutant(
        name="idp-pkce-public-exempt",
        service="idp",
        rules=frozenset({"AUTH-FLOW-03"}),
        description="The code_verifier is checked only when the token request authenticates the client: a public "
        "client's (none) wrong verifier is accepted.",
    ),
    Mutant(
        name="idp-cimd-secret-accepted",
        service="idp",
        rules=frozenset({"AUTH-CIMD-05"}),
        description="A CIMD client presenting client_secret_post (a method outside the intersection) is accepted.",
    ),
    Mutant(
        name="idp-cimd-basic-accepted",
        service="idp",
        rules=frozenset({"AUTH-CIMD-05"}),
        description="A CIMD client presenting client_secret_basic (a method outside the intersection) is accepted.",
    ),
    Mutant(
        name="idp-cimd-any-key",
        service="idp",
        rules=frozenset({"AUTH-CIMD-03"}),
        description="A CIMD client assertion whose signature does not verify is ignored (the request falls back to "
        "none): an assertion signed by any key is accepted.",
    ),
    Mutant(
        name="idp-cimd-alg-none",
        service="idp",
        rules=frozenset({"AUTH-CIMD-03"}),
        description="An unsigned CIMD client assertion (alg none, any spelling) is taken as no assertion: the request "
        "falls back to none and is accepted.",
    ),
    Mutant(
        name="idp-assertion-exp-optional",
        service="idp",
        rules=frozenset({"AUTH-CIMD-04"}),
        description="A CIMD client assertion without exp is taken as no assertion (exp is checked only when present):"
        " the request falls back to none and is accepted.",
    ),
    Mutant(
        name="idp-code-reuse",
        service="idp",
        rules=frozenset({"AUTH-FLOW-06"}),
        description="Authorization codes are never marked used: a second exchange returns another token.",
    ),
    Mutant(
        name="idp-jti-replay",
        service="idp",
        rules=frozenset({"AUTH-CIMD-04"}),
        description="The client-assertion replay cache forgets every jti: a replayed private_key_jwt is accepted.",
    ),
    Mutant(
        name="idp-redirect-prefix",
        service="idp",
        rules=frozenset({"AUTH-FLOW-07"}),
        description="A redirect_uri is accepted when a registered one is a prefix of it (no exact match).",
    ),
    Mutant(
        name="idp-pkce-downgrade",
        service="idp",
        rules=frozenset({"AUTH-FLOW-03"}),
        description="A token request without code_verifier skips the PKCE check (RFC 9700 §4.8.2 downgrade).",
    ),
    Mutant(
        name="idp-redirect-case-insensitive",
        service="idp",
        rules=frozenset({"AUTH-FLOW-07"}),
        description="A redirect_uri is accepted when it equals a registered one but for letter case.",
    ),
    Mutant(
        name="idp-dcr-client-forgotten",
        service="idp",
        rules=frozenset({"AUTH-DCR-02"}),
        description="A registered client that got a token is deleted at its next authorization (invalid_client).",
        dependents=frozenset({"AUTH-REAUTH-01", "PROF-08"}),
    ),
    Mutant(
        name="idp-email-unverified",
        service="idp",
        rules=frozenset({"AUTH-WS-01"}),
        description="UserInfo returns email_verified: false.",
    ),
    Mutant(
        name="idp-advertised-scope-refused",
        service="idp",
        rules=frozenset({"AUTH-ASM-07"}),
        description="scopes_supported lists tools.admin, but a request for it fails with invalid_scope.",
        dependents=AFTER_FLOW,
    ),
    Mutant(
        name="idp-cimd-refused",
        service="idp",
        rules=frozenset({"AUTH-CIMD-01"}),
        description="CIMD is advertised, but no client metadata document is ever fetched (invalid_client).",
        dependents=frozenset({"AUTH-CIMD-02", "AUTH-CIMD-03", "AUTH-CIMD-04", "AUTH-CIMD-05", "AUTH-CIMD-06"}),
    ),
    Mutant(
        name="idp-cimd-no-private-key-jwt",
        service="idp",
        rules=frozenset({"AUTH-CIMD-02"}),
        description="A CIMD client whose document asks for private_key_jwt is refused.",
        dependents=frozenset({"AUTH-CIMD-03", "AUTH-CIMD-04", "AUTH-CIMD-05"}),
    ),
    Mutant(
        name="idp-cimd-stable-only",
        service="idp",
        rules=frozenset({"AUTH-CIMD-06"}),
        description="Callback-specific client documents (/oauth/{callback_id}/client.json) are refused.",
    ),
]
