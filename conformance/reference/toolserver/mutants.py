"""Defects of the reference tool server, each switched by one ``--mutant NAME`` flag (see app.py / verifier.py)."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, row_maker

_m = row_maker("toolserver")


_PROFILE_CALLS = {"PROF-06", "PROF-07", "PROF-08", "PROF-09", "PROF-10", "PROF-12", "PROF-13"}

MUTANTS: list[Mutant] = [
    # --- token checks (verifier)
    _m(
        "ts-expects-other-audience",
        {"AUTH-TOK-01"},
        "The audience check expects the resource with a trailing slash: every valid token is refused.",
        {*(f"AUTH-TOK-0{i}" for i in range(2, 10)), "AUTH-TOOL-05", "AUTH-CHAL-01", *_PROFILE_CALLS},
    ),
    _m("ts-skip-audience", {"AUTH-TOK-06"}, "Tokens issued for another resource (aud) are accepted."),
    _m("ts-accept-alg-none", {"AUTH-TOK-04"}, "Unsigned tokens (alg: none) are accepted."),
    _m(
        "ts-ignore-signature",
        {"AUTH-TOK-03", "AUTH-TOK-04"},
        "Signatures are not checked: tampered tokens and tokens signed by unknown keys are accepted.",
    ),
    _m("ts-skip-exp", {"AUTH-TOK-05"}, "Expired tokens are accepted."),
    _m("ts-skip-nbf", {"AUTH-TOK-07"}, "Tokens whose nbf lies in the future are accepted."),
    _m("ts-skip-iss", {"AUTH-TOK-07"}, "The iss claim is ignored: any trusted key validates any issuer's token."),
    _m("ts-skip-scope", {"AUTH-TOK-08"}, "Tool calls are not checked against the token's scopes."),
    _m(
        "ts-scope-substring",
        {"AUTH-TOK-08"},
        "Required scopes are searched as substrings of the granted ones: 'tools.writex' grants 'tools.write'.",
    ),
    _m(
        "ts-malformed-authorization-as-user",
        {"AUTH-TOK-02"},
        "A malformed Authorization header (not a Bearer token) acts as a built-in development user.",
    ),
    _m("ts-accept-query-token", {"AUTH-TOK-09"}, "An access_token query parameter is accepted as the bearer token."),
    # --- attack families (issue 16): each passes the single probe its rule used to send
    _m(
        "ts-any-auth-scheme",
        {"AUTH-TOK-02"},
        "The Authorization scheme is ignored: the credentials after any scheme (e.g. 'Token ...') are verified.",
    ),
    _m(
        "ts-accept-stripped-signature",
        {"AUTH-TOK-03"},
        "A token whose signature segment is empty is taken as having nothing wrong with its signature.",
    ),
    _m(
        "ts-bare-401-on-bad-signature",
        {"AUTH-TOK-03", "AUTH-TOK-04"},
        "Tokens failing the signature check get a bare 401 without a WWW-Authenticate challenge.",
    ),
    _m(
        "ts-alg-none-any-case",
        {"AUTH-TOK-04"},
        "Only the exact spelling alg 'none' is refused: 'None', 'NONE' … are accepted unsigned.",
    ),
    _m("ts-trust-embedded-jwk", {"AUTH-TOK-04"}, "A token carrying a jwk header is verified with that key."),
    _m(
        "ts-hs256-public-key",
        {"AUTH-TOK-04"},
        "Algorithm confusion: HS256 tokens are verified with the issuer's public key (PEM) as the HMAC secret.",
    ),
    _m(
        "ts-exp-lenient-type",
        {"AUTH-TOK-05"},
        "A non-numeric exp (e.g. a string) is not checked instead of making the token invalid.",
    ),
    _m(
        "ts-audience-prefix",
        {"AUTH-TOK-06"},
        "The audience check accepts an aud the resource starts with (e.g. its origin).",
    ),
    _m(
        "ts-iss-normalized",
        {"AUTH-TOK-07"},
        "iss is compared case- and trailing-slash-insensitively, not by simple string comparison.",
    ),
    _m(
        "ts-nbf-lenient-type",
        {"AUTH-TOK-07"},
        "A non-numeric nbf (e.g. a string) is not checked instead of making the token invalid.",
    ),
    _m(
        "ts-query-token-over-header",
        {"AUTH-TOK-09"},
        "With an Authorization header present, an access_token query parameter wins over it.",
    ),
    # --- mTLS front (mtls_front.py)
    _m(
        "ts-mtls-accept-wrong-san",
        {"AUTH-MTLS-01"},
        "The mTLS front accepts a client certificate of the trusted intermediate whatever its SAN dnsName.",
    ),
    _m(
        "ts-mtls-san-prefix",
        {"AUTH-MTLS-01"},
        "The mTLS front accepts a client certificate whose SAN dnsName starts with the configured name.",
    ),
    # --- challenges
    _m(
        "ts-omit-meta-challenge",
        {"AUTH-CHAL-01", "AUTH-CHAL-02"},
        'Auth errors inside tool calls carry no _meta["mcp/www_authenticate"].',
        {"PROF-11", "AUTH-TOK-08", "AUTH-TOK-02"},
    ),
    _m(
        "ts-challenge-without-description",
        {"AUTH-CHAL-01", "AUTH-CHAL-02"},
        "Bearer challenges lack error_description.",
        {"PROF-11", "AUTH-TOK-08", "AUTH-TOK-02", "AUTH-PRM-05"},
    ),
    _m(
        "ts-no-www-authenticate",
        {"AUTH-PRM-05"},
        "401 answers carry no WWW-Authenticate header.",
        # the token checks judge refusals whole: a bare 401 is not a refusal with a challenge
        {"AUTH-PRM-06", *(f"AUTH-TOK-0{i}" for i in range(2, 8))},
    ),
    _m(
        "ts-no-challenge-scope",
        {"AUTH-PRM-06"},
        'Bearer challenges carry no scope="..." parameter.',
        {"AUTH-TOK-08"},  # its insufficient_scope challenge must name the scope
    ),
    # --- protected resource metadata
    _m(
        "ts-prm-missing",
        {"AUTH-PRM-01"},
        "No protected resource metadata is served (404).",
        {
            "AUTH-PRM-02",
            "AUTH-PRM-03",
            "AUTH-PRM-04",
            "AUTH-PRM-05",
            "AUTH-CHAL-02",
            "AUTH-ASM-01",
            "AUTH-ASM-02",
        },
    ),
    _m("ts-prm-wrong-resource", {"AUTH-PRM-02"}, "The metadata's resource is the server origin, not the MCP URL."),
    _m("ts-prm-bad-types", {"AUTH-PRM-04"}, "scopes_supported is a string instead of an array."),
    # --- tool declarations and access
    _m(
        "ts-anonymous-list-orders",
        {"AUTH-TOOL-03"},
        "list_orders (oauth2 only) returns data to anonymous calls.",
        {"AUTH-TOK-02"},  # the no-token case of the same tool
    ),
    _m(
        "ts-anonymous-cancel",
        {"AUTH-TOOL-04"},
        "cancel_order (destructive) is declared noauth + oauth2 and works anonymously.",
    ),
    _m("ts-bad-security-schemes", {"AUTH-TOOL-02"}, "search_docs declares a noauth scheme that carries scopes."),
    _m("ts-tool-without-description", {"AUTH-TOOL-01"}, "search_docs has no description."),
    _m("ts-bad-output", {"AUTH-TOOL-05"}, "list_orders returns total_cents as a string, against its outputSchema."),
    # --- profile tool
    _m(
        "ts-profile-marker-string",
        {"AUTH-TOOL-06"},
        'The profile marker is the string "true" instead of a boolean.',
        {"PROF-01", *_PROFILE_CALLS, "PROF-02", "PROF-03", "PROF-04", "PROF-05", "PROF-11"},
    ),
    _m("ts-profile-two-markers", {"PROF-01"}, "Two tools carry the profile marker.", _PROFILE_CALLS),
    _m("ts-profile-input-props", {"PROF-02"}, "The profile tool's inputSchema has a property and allows more."),
    _m("ts-profile-annotations", {"PROF-03"}, "The profile tool declares openWorldHint: true."),
    _m(
        "ts-profile-noauth",
        {"PROF-04"},
        "The profile tool declares securitySchemes noauth (runtime still needs auth).",
        {"AUTH-TOOL-03"},  # a tool declared noauth only that refuses anonymous calls
    ),
    _m("ts-profile-output-schema", {"PROF-05"}, "The profile outputSchema allows extra properties and no id."),
    _m("ts-profile-text-mismatch", {"PROF-06"}, "The text content is not the same JSON as structuredContent."),
    _m(
        "ts-profile-numeric-id",
        {"PROF-07", "AUTH-TOOL-05"},
        "The profile id is a JSON number (the store's row number), not a string.",
        {"PROF-08", "PROF-09", "PROF-06"},
    ),
    _m(
        "ts-profile-null-field",
        {"AUTH-TOOL-05"},
        "The profile record of an account without a nickname (the second test account) carries nickname: null,"
        " against the outputSchema; the first account's record is valid.",
        {"PROF-12"},  # the SHOULD about null fields warns too
    ),
    _m("ts-profile-id-per-token", {"PROF-08"}, "The profile id is derived from the token (changes on refresh)."),
    _m("ts-profile-id-shared", {"PROF-09"}, "Every account gets the same profile id."),
    _m("ts-profile-id-from-email", {"PROF-10"}, "The profile id is the account's email address."),
    _m(
        "ts-profile-id-email-digest",
        {"PROF-10"},
        "The profile id is a truncated SHA-256 of the lower-cased email (opaque-looking, reversible by dictionary).",
    ),
    _m("ts-profile-id-email-base64", {"PROF-10"}, "The profile id is the base64url of the account's email."),
    _m(
        "ts-profile-placeholder",
        {"PROF-11", "AUTH-TOOL-03"},
        "Without credentials the profile tool returns a placeholder profile.",
        {"AUTH-CHAL-01", "AUTH-CHAL-02"},
    ),
    _m("ts-profile-invented-fields", {"PROF-12"}, 'Missing display fields are returned as "N/A".'),
    _m("ts-profile-blank-id-invents", {"PROF-13"}, "A blank stored id is replaced by a freshly invented one."),
]
