"""Defects of the authorization server that the IdP cannot be configured into: a rewriting HTTPS proxy in front
of it makes them (see app.py). With any of these, the stack puts the proxy at the issuer URL."""

from __future__ import annotations

from conformance.reference.idp.mutants import AFTER_FLOW
from conformance.reference.mutants import Mutant


def _m(name: str, rules: set[str], description: str, dependents: frozenset[str] = frozenset()) -> Mutant:
    return Mutant(name, "proxy", frozenset(rules), description, dependents - frozenset(rules))


MUTANTS: list[Mutant] = [
    _m(
        "proxy-strip-iss",
        {"AUTH-ISS-01", "AUTH-ISS-02", "AUTH-ISS-03"},
        "Authorization responses (success and error) lose their iss parameter while metadata advertises it.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-strip-iss-on-request-errors",
        {"AUTH-ISS-02"},
        "Error responses to a bad authorization request (invalid_scope, invalid_request...) lose their iss; a declined "
        "consent (access_denied) keeps it.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-strip-iss-after-first",
        {"AUTH-ISS-01"},
        "Only the first successful authorization response carries iss; every later one (another login, another "
        "client) loses it.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-alter-iss",
        {"AUTH-ISS-01", "AUTH-ISS-02", "AUTH-ISS-03"},
        "Authorization responses carry an iss of another issuer.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-issuer-trailing-slash",
        {"AUTH-ASM-02", "AUTH-PRM-03", "AUTH-ASM-08"},
        "The authorization server calls itself issuer + '/' (metadata and iss), unlike authorization_servers.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-drop-s256",
        {"AUTH-ASM-03"},
        "Metadata omits code_challenge_methods_supported.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-iss-unadvertised",
        {"AUTH-ASM-08"},
        "Metadata says authorization_response_iss_parameter_supported: false.",
        frozenset({"AUTH-ISS-01", "AUTH-ISS-02", "AUTH-CIMD-06"}),
    ),
    _m(
        "proxy-drop-resource",
        {"AUTH-FLOW-05"},
        "The resource parameter is removed from authorization and token requests: tokens are not for the tool server.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-http-token-endpoint",
        {"AUTH-ASM-04"},
        "Metadata advertises the token endpoint over plain http.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-no-client-identification",
        {"AUTH-ASM-05"},
        "Metadata offers neither CIMD nor a registration endpoint.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-secret-methods-only",
        {"AUTH-ASM-06"},
        "Metadata lists only client_secret_basic as token endpoint auth method.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-no-metadata",
        {"AUTH-ASM-01"},
        "Neither well-known metadata document is served (404).",
        AFTER_FLOW
        | {
            "AUTH-ASM-02",
            "AUTH-ASM-03",
            "AUTH-ASM-04",
            "AUTH-ASM-05",
            "AUTH-ASM-06",
            "AUTH-ASM-07",
            "AUTH-ASM-08",
            "AUTH-PRM-03",
        },
    ),
    _m(
        "proxy-drop-state",
        {"AUTH-FLOW-01"},
        "Authorization redirects lose the state parameter.",
        AFTER_FLOW,
    ),
    _m(
        "proxy-token-type-not-bearer",
        {"AUTH-FLOW-02"},
        'Token responses say token_type "mac" instead of Bearer.',
        AFTER_FLOW,
    ),
    _m(
        "proxy-dcr-broken",
        {"AUTH-DCR-01"},
        "The registration endpoint answers 500 while metadata advertises it.",
        frozenset({"AUTH-DCR-02"}),
    ),
    _m(
        "proxy-reject-id-token-hint",
        {"AUTH-REAUTH-01"},
        "Authorization requests carrying id_token_hint are refused (400) instead of honoured or ignored.",
    ),
]
