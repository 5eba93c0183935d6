"""Fixtures of the auth suite only; linking an account and the tool listing (shared with profile) are in
``suites/fixtures.py``."""

from __future__ import annotations

import pytest

from conformance import Blocked
from conformance.core.rules import rules_of
from conformance.suites._linking import FlowAttempt, Linker
from conformance.suites.auth.client import Declined


@pytest.fixture(scope="session")
def declined(linker: Linker, first_link: FlowAttempt) -> Declined:
    """The user declines consent (AUTH-ISS-02/03): the error response, parsed."""
    if first_link.callback is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    return Declined(*linker.decline())


# Rules judged over everything the run obtained (every successful authorization response, every tool result, every
# 401 and every in-call auth error of a tool call): their checks run after all others, the profile suite's included.
JUDGED_LAST = frozenset({"AUTH-CHAL-01", "AUTH-ISS-01", "AUTH-PRM-05", "AUTH-TOOL-05"})


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    last = [item for item in items if JUDGED_LAST.intersection(rules_of(item))]
    if last:
        items[:] = [item for item in items if item not in last] + last
