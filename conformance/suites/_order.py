"""The order of the platform's and compression's checks when their bodies overlap (``--concurrency``): those that
may run beside others first, then those marked :func:`conformance.alone`, then the rate-limit checks judged over
every answer of their target. A check that must run alone waits for every body in flight to end; grouped at the end,
the others wait once rather than before each of them. The order is the same whatever the setting, so the verdicts
are too.

Called from the platform's, the campaigns' and the compression suite's conftest (a run loads only the selected
suites' conftests): every call gives the same order, whichever runs first."""

from __future__ import annotations

import pytest

from conformance.core.rules import ALONE_MARK, RULES, rules_of

SUITES = frozenset({"platform", "campaigns", "compression"})
# Judged over every answer of their target the platform and campaigns checks received (the rate-limit ledger).
JUDGED_LAST = frozenset({"RL-01", "RL-04", "RL-05", "RL-07"})


def _suite(item: pytest.Item) -> str | None:
    rules = rules_of(item)
    return RULES[rules[0]].suite if rules and rules[0] in RULES else None


def _alone(item: pytest.Item) -> bool:
    mark = item.get_closest_marker(ALONE_MARK)
    return mark is not None and not mark.kwargs.get("among")


def alone_after_the_rest(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place (see the module's docstring); other suites' checks keep their places."""
    last = [item for item in items if JUDGED_LAST.intersection(rules_of(item))]
    alone = [item for item in items if item not in last and _suite(item) in SUITES and _alone(item)]
    if last or alone:
        moved = {id(item) for item in (*alone, *last)}
        items[:] = [item for item in items if id(item) not in moved] + alone + last
