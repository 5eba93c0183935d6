"""conformance: a harness that plays an assistant host against tool servers and API sandboxes.

The curated API for writing checks::

    from conformance import rule, fail, expect, observe, needs, Blocked

    @rule("CAMP-02")
    def test_name_bounds(host_http, platform_target): ...
"""

import importlib
from typing import TYPE_CHECKING, Any

from conformance.core import _shortcuts  # noqa: F401 - first: keeps pytest's assertion rewriter off the package (see there)
from conformance.core._exceptions import (
    ConfigError,
    ConformanceError,
    ResponseTooLarge,
    TargetError,
    TargetUnreachable,
    UnknownRuleError,
    UrlRefused,
)

if TYPE_CHECKING:
    from conformance.core._early import early
    from conformance.core.rules import RULES, Level, Rule, alone, get_rule, rule
    from conformance.report.model import Status
    from conformance.verdict._hypothesis import hypothesis_profile
    from conformance.verdict._verdicts import Blocked, Failure, NeedsUnmet, expect, fail, needs, observe

__version__ = "0.1.0"

# Loaded on first use: the verdicts and the catalog import pytest, and ``conformance.host`` (a subpackage, so
# importing it runs this module) must not.
_LAZY = {
    "hypothesis_profile": "conformance.verdict._hypothesis",
    **dict.fromkeys(
        ("Blocked", "Failure", "NeedsUnmet", "expect", "fail", "needs", "observe"), "conformance.verdict._verdicts"
    ),
    "Status": "conformance.report.model",
    "early": "conformance.core._early",
    **dict.fromkeys(("RULES", "Level", "Rule", "alone", "get_rule", "rule"), "conformance.core.rules"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


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
    "alone",
    "early",
    "expect",
    "fail",
    "get_rule",
    "hypothesis_profile",
    "needs",
    "observe",
    "rule",
]
