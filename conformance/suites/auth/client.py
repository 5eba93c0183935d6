"""Helpers of the auth suite's checks (fixtures: conftest.py and the shared ``suites/fixtures.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from conformance import needs
from conformance.host.asmeta import AsMetadata
from conformance.host.login import LoginResult
from conformance.host.oauth import AuthorizationRequest, CallbackParams


@dataclass
class Declined:
    """An authorization the user declined: the error response the authorization server sent back."""

    request: AuthorizationRequest
    login: LoginResult
    callback: CallbackParams


def require_iss_advertised(as_metadata: AsMetadata) -> None:
    if not as_metadata.iss_parameter_supported:
        needs("authorization_response_iss_parameter_supported: true (AUTH-ASM-08)")
