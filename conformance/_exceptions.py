"""Exceptions of the harness.

The tree::

    ConformanceError                    anything the harness raises on purpose
    ├── ConfigError                     bad or missing configuration (clear message, no traceback as a verdict)
    ├── UnknownRuleError                a check names a rule ID that is not in the catalog
    └── TargetError                     the target did not give a usable answer: the target fails the rule
        ├── TargetUnreachable           connection refused, DNS, TLS failure, timeout
        ├── ResponseTooLarge            body beyond the configured cap
        └── UrlRefused                  the URL guard refused to fetch a URL (scheme, private address)

    AssertionError
    └── Failure                         a check's verdict: the target broke the rule

    pytest's Skipped
    ├── NeedsUnmet                      the check cannot run: a capability or option is missing
    └── Blocked                         a prerequisite rule failed, so this rule cannot be decided
"""

from __future__ import annotations

import pytest


class ConformanceError(Exception):
    """Base of every deliberate harness exception."""


class ConfigError(ConformanceError):
    """Configuration is missing or malformed."""


class UnknownRuleError(ConformanceError):
    """A check names a rule ID that the catalog does not have."""


class TargetError(ConformanceError):
    """The target did not answer usably. Checks let it propagate: the rule fails with this message."""


class TargetUnreachable(TargetError):
    """Connection, TLS or timeout failure."""


class ResponseTooLarge(TargetError):
    """The response body exceeded the configured size cap."""


class UrlRefused(TargetError):
    """The URL guard refused a URL: plain HTTP off loopback, or a private address reached through metadata."""


class Failure(AssertionError):
    """A check's negative verdict. ``message`` says what the target did and what the rule wanted."""

    def __init__(self, message: str, *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.title = title


_Skipped: type[BaseException] = pytest.skip.Exception


class NeedsUnmet(_Skipped):  # type: ignore[misc,valid-type]
    """The check needs something the target or the configuration does not offer."""

    def __init__(self, need: str, option: str | None = None, *, incomplete: bool = False) -> None:
        reason = f"needs {need}" + (f" (supply with {option})" if option else "")
        super().__init__(reason, pytrace=False)
        self.need = need
        self.option = option
        # Without it the run never reaches its target (no account linked, no API key): the run is INCOMPLETE.
        self.incomplete = incomplete


class Blocked(_Skipped):  # type: ignore[misc,valid-type]
    """A prerequisite rule failed; this rule cannot be decided and is reported as blocked by it."""

    def __init__(self, rule_id: str, reason: str = "") -> None:
        super().__init__(f"blocked by {rule_id}" + (f": {reason}" if reason else ""), pytrace=False)
        self.rule_id = rule_id
        self.reason = reason
