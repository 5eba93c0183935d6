"""The order of a target's checks when their bodies overlap (``--concurrency``): those that may run beside others
first, then those marked :func:`conformance.alone`, then those judged over everything the run obtained from the
target. A check that must run alone waits for every body in flight to end; grouped at the end, the others wait once
rather than before each of them. The order is the same whatever the setting, so the verdicts are too.

Called from each suite's conftest with its target's suites (a run loads only the selected suites' conftests):
every call gives the same order, whichever runs first. A module whose checks land in two groups is set up once: the
test modules' fixtures are session-scoped."""

from __future__ import annotations

import pytest

from conformance.core.rules import ALONE_MARK, rules_of, runs_alone, suite_of

TOOL_SERVER_SUITES = frozenset({"auth", "profile"})
# Judged over every authorization response, tool result, 401 and in-call auth error the run obtained.
TOOL_SERVER_JUDGED_LAST = frozenset({"AUTH-CHAL-01", "AUTH-ISS-01", "AUTH-PRM-05", "AUTH-TOOL-05"})
PLATFORM_SUITES = frozenset({"platform", "campaigns", "compression"})
# Judged over every answer of their target the platform and campaigns checks received (the rate-limit ledger).
PLATFORM_JUDGED_LAST = frozenset({"RL-01", "RL-04", "RL-05", "RL-07"})
JUDGED_LAST_REASON = "judged over everything the run obtained"


def alone_after_the_rest(
    items: list[pytest.Item], suites: frozenset[str] = PLATFORM_SUITES, last: frozenset[str] = PLATFORM_JUDGED_LAST
) -> None:
    """Reorder ``items`` in place (see the module's docstring); other suites' checks keep their places. The checks
    of ``last`` are marked alone: every other check has ended, and appended what it obtained, before one starts."""
    judged_last = [item for item in items if last.intersection(rules_of(item))]
    for item in judged_last:
        if not runs_alone(item):
            item.add_marker(getattr(pytest.mark, ALONE_MARK)(JUDGED_LAST_REASON))
    alone = [item for item in items if item not in judged_last and suite_of(item) in suites and runs_alone(item)]
    if judged_last or alone:
        moved = {id(item) for item in (*alone, *judged_last)}
        items[:] = [item for item in items if id(item) not in moved] + alone + judged_last
