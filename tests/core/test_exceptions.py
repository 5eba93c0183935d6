"""The exception module's docstring draws the whole tree of the harness's exceptions: it must say what the classes
are."""

from __future__ import annotations

import re

from conformance.core import _exceptions


def drawn_tree() -> dict[str, str]:
    """Each class the docstring draws, with the class drawn as its parent (by indentation)."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (_exceptions.__doc__ or "").splitlines():
        found = re.match(r"^(\s*(?:[│ ]\s*)*(?:[├└]── )?)([A-Z]\w+)\s", line)
        if not found or not hasattr(_exceptions, found.group(2)):
            continue
        depth, name = len(found.group(1)), found.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((depth, name))
    return parents


def defined_tree() -> dict[str, str]:
    """Each exception class the module defines, with its base."""
    return {
        name: value.__base__.__name__
        for name, value in vars(_exceptions).items()
        if isinstance(value, type)
        and issubclass(value, _exceptions.ConformanceError)
        and value is not _exceptions.ConformanceError
        and value.__module__ == _exceptions.__name__
    }


def test_the_docstring_draws_every_class_under_its_base() -> None:
    assert drawn_tree() == defined_tree()


def test_the_limits_of_the_harness_are_one_kind() -> None:
    """Code that lets the harness's own limits through (never a verdict) names one class for both."""
    for limit in (_exceptions.TargetThrottled("a 429"), _exceptions.TargetTooSlow("the check's 2 s")):
        assert isinstance(limit, _exceptions.LimitReached)
        assert isinstance(limit, _exceptions.TargetError)
        assert limit.evidence
    assert not issubclass(_exceptions.TargetUnreachable, _exceptions.LimitReached)
