"""The example budgets of the project's own property tests that name one (``@settings(max_examples=...)``, which a
profile does not override)."""

from __future__ import annotations

from typing import Any


def examples(wanted: int, profile: Any = None) -> int:
    """``wanted`` scaled by the profile's budget (by default the loaded one) against Hypothesis' default profile:
    ``wanted`` itself in the main pass, fewer in the lowest-versions pass (tests/conftest.py's FLOOR_PROFILE). Read
    when the test module is imported, after the session has loaded its profile."""
    from hypothesis import settings

    budget = (profile or settings.default).max_examples
    return max(1, wanted * budget // settings.get_profile("default").max_examples)
