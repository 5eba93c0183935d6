"""Fixtures of the auth suite only; linking an account (shared with profile) is in ``conformance/suites/_linking.py``."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance import Blocked, needs
from conformance.host.asmeta import AsMetadata
from conformance.host.login import LoginResult
from conformance.host.oauth import AuthorizationRequest, CallbackParams
from conformance.suites._linking import FlowAttempt, Linker


@dataclass
class Declined:
    """An authorization the user declined: the error response the authorization server sent back."""

    request: AuthorizationRequest
    login: LoginResult
    callback: CallbackParams


@pytest.fixture(scope="session")
def declined(linker: Linker, first_link: FlowAttempt) -> Declined:
    if first_link.callback is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    request = linker.request()
    login, callback = linker.authorize(request, decision="deny")
    if callback is None:
        raise Blocked("AUTH-FLOW-01", f"declining consent led nowhere: {login.stopped}")
    if not callback.is_error:
        needs("a consent page the user can decline (the authorization server did not ask)", "--login-steps")
    return Declined(request, login, callback)


def require_iss_advertised(as_metadata: AsMetadata) -> None:
    if not as_metadata.iss_parameter_supported:
        needs("authorization_response_iss_parameter_supported: true (AUTH-ASM-08)")
