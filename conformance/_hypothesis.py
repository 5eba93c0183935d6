"""The ``conformance`` Hypothesis profile, registered on first use (importing Hypothesis costs every run ~0.2-2 s,
and only property-based checks need it)."""

from __future__ import annotations

import os
from typing import Any

PROFILE = "conformance"
_registered = False


def hypothesis_profile() -> Any:
    """Bounded examples, no deadline (targets are remote), no example database (runs must not share state)."""
    global _registered
    from hypothesis import HealthCheck, settings

    if not _registered:
        settings.register_profile(
            PROFILE,
            max_examples=int(os.environ.get("CONFORMANCE_HYPOTHESIS_EXAMPLES", "25")),
            deadline=None,
            database=None,
            suppress_health_check=[
                HealthCheck.function_scoped_fixture,
                HealthCheck.too_slow,
                HealthCheck.data_too_large,
            ],
        )
        _registered = True
    return settings.get_profile(PROFILE)
