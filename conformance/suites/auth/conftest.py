"""Fixtures of the auth suite only; linking an account (shared with profile) is in ``suites/_linking.py``."""

from __future__ import annotations

import pytest

from conformance import Blocked, needs
from conformance.suites._linking import FlowAttempt, Linker
from conformance.suites.auth._support import Declined


@pytest.fixture(scope="session")
def declined(linker: Linker, first_link: FlowAttempt) -> Declined:
    """The user declines consent (AUTH-ISS-02/03): the error response, parsed."""
    if first_link.callback is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    request = linker.request()
    login, callback = linker.authorize(request, decision="deny")
    if callback is None:
        raise Blocked("AUTH-FLOW-01", f"declining consent led nowhere: {login.stopped}")
    if not callback.is_error:
        needs("a consent page the user can decline (the authorization server did not ask)", "--login-steps")
    return Declined(request, login, callback)
