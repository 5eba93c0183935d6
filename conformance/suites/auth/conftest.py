"""Fixtures of the auth suite only; linking an account and the tool listing (shared with profile) are in
``suites/fixtures.py``."""

from __future__ import annotations

import pytest

from conformance import Blocked, NeedsUnmet, early
from conformance.core._early import asks
from conformance.suites._linking import FlowAttempt, Linker
from conformance.suites._order import TOOL_SERVER_JUDGED_LAST, TOOL_SERVER_SUITES, alone_after_the_rest
from conformance.suites.auth.client import Declined
from conformance.suites.fixtures import value_or_need


@pytest.fixture(scope="session")
@early()
def declined(linker: Linker, first_link: FlowAttempt) -> Declined:
    """The user declines consent (AUTH-ISS-02/03): the error response, parsed."""
    if first_link.callback is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    return Declined(*linker.decline())


@pytest.fixture(scope="session")
@asks("declined")
def declined_or_need(request: pytest.FixtureRequest) -> Declined | NeedsUnmet:
    """The declined consent, or what it needs (a check with other cases tries those without it)."""
    found: Declined | NeedsUnmet = value_or_need(request, "declined")
    return found


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tool server's checks: those that may run beside others, then those that must run alone, then those
    judged over everything the run obtained, the profile suite's included (``suites/_order.py``)."""
    alone_after_the_rest(items, TOOL_SERVER_SUITES, TOOL_SERVER_JUDGED_LAST)
