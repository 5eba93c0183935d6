"""Fixtures of the auth suite only; linking an account and the tool listing (shared with profile) are in
``suites/fixtures.py``."""

from __future__ import annotations

import pytest

from conformance import Blocked, NeedsUnmet
from conformance.core.rules import ALONE_MARK, RULES, rules_of
from conformance.suites._linking import FlowAttempt, Linker
from conformance.suites.auth.client import Declined

TOOL_SERVER_SUITES = frozenset({"auth", "profile"})


def _alone(item: pytest.Item) -> bool:
    mark = item.get_closest_marker(ALONE_MARK)
    return mark is not None and not mark.kwargs.get("among")


def suite_of(item: pytest.Item) -> str | None:
    rules = rules_of(item)
    return RULES[rules[0]].suite if rules and rules[0] in RULES else None


@pytest.fixture(scope="session")
def declined(linker: Linker, first_link: FlowAttempt) -> Declined:
    """The user declines consent (AUTH-ISS-02/03): the error response, parsed."""
    if first_link.callback is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    return Declined(*linker.decline())


@pytest.fixture(scope="session")
def declined_or_need(request: pytest.FixtureRequest) -> Declined | NeedsUnmet:
    """The declined consent, or what it needs (a check with other cases tries those without it)."""
    try:
        found: Declined = request.getfixturevalue("declined")
    except NeedsUnmet as exc:
        return exc
    return found


# Rules judged over everything the run obtained (every successful authorization response, every tool result, every
# 401 and every in-call auth error of a tool call): their checks run after all others, the profile suite's included.
JUDGED_LAST = frozenset({"AUTH-CHAL-01", "AUTH-ISS-01", "AUTH-PRM-05", "AUTH-TOOL-05"})


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tool server's checks in three groups, each in collection order: those that may run beside others, then
    those that must run alone (``conformance.alone``), then those judged over everything the run obtained. Checks
    that run at once (``--concurrency``) then wait once for the others to end, not before each check that must run
    alone; and the order is the same whatever the setting, so the verdicts are too. (The test modules' fixtures
    are session-scoped: a module whose checks are in two groups is set up once.)"""
    last = [item for item in items if JUDGED_LAST.intersection(rules_of(item))]
    for item in last:  # every other check has ended (and appended what it obtained) before one of these starts
        item.add_marker(getattr(pytest.mark, ALONE_MARK)("judged over everything the run obtained"))
    alone = [item for item in items if item not in last and suite_of(item) in TOOL_SERVER_SUITES and _alone(item)]
    if last or alone:
        moved = {id(item) for item in (*alone, *last)}
        items[:] = [item for item in items if id(item) not in moved] + alone + last
