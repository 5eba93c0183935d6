"""Helpers of the auth suite's checks (fixtures: conftest.py and the shared ``suites/fixtures.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from conformance import needs
from conformance.host.asmeta import AsMetadata
from conformance.host.login import LoginResult
from conformance.host.oauth import AuthorizationRequest, CallbackParams, OAuthClient
from conformance.host.publisher import Publisher


@dataclass
class Declined:
    """An authorization the user declined: the error response the authorization server sent back."""

    request: AuthorizationRequest
    login: LoginResult
    callback: CallbackParams


def none_only_client(publisher: Publisher) -> OAuthClient:
    """A CIMD client of ``publisher``'s origin whose document lists only `none` (no JWKS, no signing algorithm):
    it tells "CIMD refused" from "private_key_jwt refused"; the host's own documents, which the authorization server
    may have cached, stay as they are."""
    identity = publisher.identity
    assert identity is not None
    document = {
        **identity.client_document(),
        "token_endpoint_auth_methods_supported": ["none"],
        "token_endpoint_auth_method": "none",
    }
    for name in ("jwks_uri", "token_endpoint_auth_signing_alg"):
        document.pop(name)
    publisher.override("/oauth/client.json", 200, document)
    return OAuthClient("cimd", identity.stable_document_url, "none", (identity.redirect_uri(),), identity=identity)


def require_iss_advertised(as_metadata: AsMetadata) -> None:
    if not as_metadata.iss_parameter_supported:
        needs("authorization_response_iss_parameter_supported: true (AUTH-ASM-08)")
