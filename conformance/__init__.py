"""conformance: a harness that plays an assistant host against tool servers and API sandboxes.

The curated API for writing checks::

    from conformance import rule, fail, expect, observe, needs, Blocked

    @rule("CAMP-02")
    def test_name_bounds(host_http, platform_target): ...
"""

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
from conformance._verdicts import Blocked, Failure, NeedsUnmet, expect, fail, needs, observe
from conformance.report.model import Status
from conformance.rules import RULES, Level, Rule, get_rule, rule

__version__ = "0.1.0"

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
