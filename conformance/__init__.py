"""conformance: a harness that plays an assistant host against tool servers and API sandboxes.

The curated API for writing checks::

    from conformance import rule, fail, expect, observe, needs, Blocked

    @rule("CAMP-02")
    def test_name_bounds(host_http, platform_target): ...
"""

from typing import TYPE_CHECKING, Any

from conformance._exceptions import (
    ConfigError,
    ConformanceError,
    ResponseTooLarge,
    TargetError,
    TargetUnreachable,
    UnknownRuleError,
    UrlRefused,
)
from conformance._hypothesis import hypothesis_profile
from conformance.report.model import Status
from conformance.rules import RULES, Level, Rule, get_rule, rule

if TYPE_CHECKING:
    from conformance._verdicts import Blocked, Failure, NeedsUnmet, expect, fail, needs, observe

__version__ = "0.1.0"

# The verdicts build on pytest's skip exception: loaded when a check first asks for them, so the commands that only
# read reports (``conformance report``, ``summary``, ``diff``) never import pytest.
_VERDICTS = frozenset({"Blocked", "Failure", "NeedsUnmet", "expect", "fail", "needs", "observe"})


def __getattr__(name: str) -> Any:
    if name in _VERDICTS:
        from conformance import _verdicts

        return getattr(_verdicts, name)
    raise AttributeError(f"module 'conformance' has no attribute {name!r}")


__all__ = [
    "RULES",
    "Blocked",
    "ConfigError",
    "ConformanceError",
    "Failure",
    "Level",
    "NeedsUnmet",
    "ResponseTooLarge",
    "Rule",
    "Status",
    "TargetError",
    "TargetUnreachable",
    "UnknownRuleError",
    "UrlRefused",
    "__version__",
    "expect",
    "fail",
    "get_rule",
    "hypothesis_profile",
    "needs",
    "observe",
    "rule",
]
