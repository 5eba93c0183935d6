"""The exchanges that fetched a session fixture's document, as evidence of every check that uses it.

A check that uses one of :data:`EVIDENCE_FIXTURES` (itself, or through another fixture: ``profile_tool`` comes from
``listing``) holds the exchanges that fetched it, whichever check's set-up fetched them first. They are attached at
the point of the check's set-up where a function-scoped fixture would: once every fixture of a wider scope is set
up, before the first function-scoped one (the plugin's ``pytest_fixture_setup``), or at the end of a set-up that has
none (the plugin's ``pytest_runtest_setup``). So the check's exchanges keep their order: those of the session
fixtures, then those of its own fixtures. No fixture of its own does it: one more function-scoped fixture is
pytest's whole protocol of a fixture (its request, its hooks, its finalizers) for every check, when nothing of it is
needed but this moment."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core import _context

# The session fixtures whose documents checks judge (conformance/suites/fixtures.py).
EVIDENCE_FIXTURES = ("prm_discovery", "as_metadata", "listing", "profile_1", "profile_2")

_PENDING = pytest.StashKey[bool]()  # the item's set-up runs and its fixtures' evidence is not attached yet


def setup_begins(item: pytest.Item) -> None:
    item.stash[_PENDING] = True


def before_function_fixture(request: pytest.FixtureRequest) -> None:
    """A function-scoped fixture is about to be set up (``request`` its own): the first of a check's set-up
    attaches the evidence first."""
    item = request.node
    if item.stash.get(_PENDING, False):
        item.stash[_PENDING] = False
        attach(request)


def setup_ends(item: pytest.Item, *, passed: bool) -> None:
    """The check's set-up has ended: attach the evidence if no function-scoped fixture did (its fixtures all of a
    wider scope) and the set-up passed."""
    if not item.stash.get(_PENDING, False):
        return
    item.stash[_PENDING] = False
    if passed:
        # The check's own request: every check's fixtures take it (the plugin's autouse conformance_fleet_target).
        request = getattr(item, "funcargs", {}).get("request")
        if isinstance(request, pytest.FixtureRequest):
            attach(request)


def attach(request: pytest.FixtureRequest) -> None:
    """Attach to the running check's record the exchanges of each fixture of :data:`EVIDENCE_FIXTURES` its
    ``request`` has (those its fixtures take, and those set up for it so far)."""
    if _context.current() is None:
        return
    names = request.fixturenames
    for name in EVIDENCE_FIXTURES:
        if name in names:
            value: Any = request.getfixturevalue(name)
            _context.attach(list(getattr(value, "exchanges", ())))
