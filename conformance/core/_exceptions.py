"""Exceptions of the harness.

The tree::

    ConformanceError                    anything the harness raises on purpose
    ├── ConfigError                     bad or missing configuration (clear message, no traceback as a verdict)
    ├── UnknownRuleError                a check names a rule ID that is not in the catalog
    └── TargetError                     the target did not give a usable answer (carries the exchange, if any)
        ├── TargetUnreachable           connection refused, DNS, TLS failure, timeout
        ├── ResponseTooLarge            body beyond the configured cap
        ├── UrlRefused                  the URL guard refused to fetch a URL (scheme, private address)
        ├── InvalidResponse             the answer broke the rule being judged (or, with blocked_by, a prerequisite)
        └── LimitReached                a limit of the harness's ran out waiting on the target: never a verdict
            ├── TargetThrottled         the target throttled the harness beyond what it may wait
            └── TargetTooSlow           the check's (or the run's) time budget ran out waiting on the target

None of these imports pytest: ``conformance.host`` raises them and knows nothing of verdicts. The verdicts a
check reaches (``Failure``, ``NeedsUnmet``, ``Blocked``, ``Throttled``) live in :mod:`conformance.verdict._verdicts`,
and the judge there maps every exception above to one.
"""

from __future__ import annotations

from typing import Any

from conformance.core import _context


class ConformanceError(Exception):
    """Base of every deliberate harness exception."""


class ConfigError(ConformanceError):
    """Configuration is missing or malformed."""


class UnknownRuleError(ConformanceError):
    """A check names a rule ID that the catalog does not have."""


class TargetError(ConformanceError):
    """The target did not answer usably. Checks let it propagate: the rule fails with this message.

    ``exchange`` is the recorded exchange that caused it, when there was one (like httpx's request-carrying
    exceptions), so the verdict can show it.
    """

    def __init__(self, message: str = "", *, exchange: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.exchange = exchange


class TargetUnreachable(TargetError):
    """Connection, TLS or timeout failure. ``dropped``: the connection closed (or was reset) before the answer was
    complete, which a host may meet on a connection the server closes as it is reused."""

    dropped = False


class ResponseTooLarge(TargetError):
    """The response body exceeded the configured size cap."""


class UrlRefused(TargetError):
    """The URL guard refused a URL: plain HTTP off loopback, or a private address reached through metadata."""


class InvalidResponse(TargetError):
    """The answer broke the rule being judged: absent or mistyped field, wrong status, not JSON.

    With ``blocked_by`` the answer belonged to a prerequisite rule, so the rule being judged is blocked by that
    one rather than failed.
    """

    def __init__(self, message: str, *, blocked_by: str | None = None, exchange: dict[str, Any] | None = None) -> None:
        super().__init__(message, exchange=exchange)
        self.message = message
        self.blocked_by = blocked_by
        if blocked_by is None:  # a verdict on the running check, like a Failure: its evidence ends here
            _context.note_failure(self)


class LimitReached(TargetError):
    """A limit of the harness's ran out while it waited on the target (its waits for rate limits, its time budget):
    never a verdict on the rule, the check is blocked. Code that turns a target's errors into a verdict or a
    fallback lets it through."""

    evidence: str


class TargetThrottled(LimitReached):
    """The target throttled the harness (429, or 503 overload) beyond what it may wait: never a verdict."""

    def __init__(self, evidence: str, *, exchange: dict[str, Any] | None = None) -> None:
        super().__init__(f"target throttled the harness: {evidence}", exchange=exchange)
        self.evidence = evidence


class TargetTooSlow(LimitReached):
    """The check's time budget (``--max-check-time``) or the run's (``--max-run-time``) ran out while the harness
    waited on the target: never a verdict on the rule, the check is blocked."""

    def __init__(self, evidence: str, *, exchange: dict[str, Any] | None = None) -> None:
        super().__init__(f"target too slow: {evidence}", exchange=exchange)
        self.evidence = evidence
