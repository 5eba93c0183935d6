"""What a collected check's marks say, read once: the rules it decides, its suite, and how it keeps out of other
checks' way. Each mark lookup walks the check's chain of nodes (its module, packages, the session), and the plugin
asks at every step of a check's protocol (its hooks, the run loop's choices); the answers are the same once
collection has ended, when every ``pytest_collection_modifyitems`` (the plugin's, the suites' conftests') has placed
its marks: they are kept on the item then (:func:`keep`), and read afresh before (during collection)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from conformance.core.rules import alone_group, rules_of, runs_alone, suite_of_rules, touched_group


@dataclass(frozen=True)
class CheckMarks:
    rules: tuple[str, ...]  # rules_of
    suite: str | None  # suite_of: None for a test that decides no catalogued rule
    alone: bool  # runs_alone
    group: str | None  # alone_group
    touches: str | None  # touched_group


_KEY = pytest.StashKey[CheckMarks]()


def read(item: Any) -> CheckMarks:
    rules = tuple(rules_of(item))
    return CheckMarks(rules, suite_of_rules(rules), runs_alone(item), alone_group(item), touched_group(item))


def keep(item: pytest.Item) -> CheckMarks:
    """Read ``item``'s marks and keep what they say (once collection has ended)."""
    marks = item.stash[_KEY] = read(item)
    return marks


def of(item: pytest.Item) -> CheckMarks:
    """What ``item``'s marks say: as kept once collection ended, else read now."""
    kept = item.stash.get(_KEY, None)
    return kept if kept is not None else read(item)
