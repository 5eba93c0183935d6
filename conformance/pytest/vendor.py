"""What a vendor's own tests get from the harness: extension rules and async fixtures (a pytest plugin).

Vendors test their own tools with the host's real session, in the same run and report as the conformance suites:

- :func:`register_rule` adds an extension rule (``X-<VENDOR>-<NN>``, e.g. ``X-ACME-01``) with its level and text;
  ``@rule("X-ACME-01")`` then marks the vendor's check and the rule appears in report.json/report.html like the
  built-in ones. The built-in catalog stays closed: its IDs cannot be registered or changed.
- fixtures: ``linked_token`` (the linked test account's access token), ``host_mcp_session`` (async: an initialized
  MCP ``ClientSession`` as the host makes it, with that token), ``async_host_http`` (async: :class:`AsyncHostHTTP`,
  the host's HTTP client with its guard, recording and redaction).
- checks and vendor tests may be ``async def`` (pytest-asyncio runs them; ``@rule`` marks coroutine checks for it).
  Unless the vendor configured it, the plugin sets ``asyncio_default_fixture_loop_scope = fixture-scope``:
  pytest-asyncio's current behaviour, stated explicitly, so a vendor's run shows no loop-scope deprecation warning
  and their async fixtures run on the loops they run on today; a value the vendor set (ini file or ``-o``) is kept,
  as is their ``asyncio_mode``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

from conformance.core._exceptions import UnknownRuleError
from conformance.core._shortcuts import set_ini_default
from conformance.core.rules import catalog

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from conformance.config import Target
    from conformance.host.async_http import AsyncHostHTTP
    from conformance.host.http import HostHTTP

EXTENSION_ID = re.compile(r"^X-[A-Z]+-[0-9]+$")  # the report schema's rule pattern, with the extension prefix
BUILT_IN = frozenset(rule.id for rule in catalog())
LOOP_SCOPE_INI = "asyncio_default_fixture_loop_scope"
KEEP_FIXTURE_SCOPE = "fixture-scope"  # pytest-asyncio's value for "each fixture's loop is its own scope" (today's)


def register_rule(
    rule_id: str, level: str, text: str, *, suite: str = "auth", title: str | None = None, source: str = "vendor"
) -> None:
    """Register a vendor extension rule. ``suite`` names the built-in suite (and so the target) it extends.
    Registering the same rule again with the same definition is a no-op (a module imported twice)."""
    from conformance.core.rules import RULES, SUITES, Level, Rule

    if rule_id in BUILT_IN:
        raise UnknownRuleError(f"{rule_id} is a built-in rule: the catalog is closed, extension rules are X-...")
    if not EXTENSION_ID.match(rule_id):
        raise UnknownRuleError(f"extension rule IDs look like X-ACME-01 (X-, letters, -, digits), not {rule_id!r}")
    if suite not in SUITES:
        raise UnknownRuleError(f"unknown suite {suite!r} for {rule_id}; known: {', '.join(SUITES)}")
    rule = Rule(
        id=rule_id,
        level=Level(level),
        suite=suite,
        title=title or text.rstrip("."),
        text=text,
        source=source,
    )
    existing = RULES.get(rule_id)
    if existing is not None and existing != rule:
        raise UnknownRuleError(f"{rule_id} is already registered differently: {existing}")
    RULES[rule_id] = rule


# -- pytest plugin --------------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before pytest-asyncio reads it: its current default loop scope, said explicitly, unless the vendor set one."""
    if not config.pluginmanager.hasplugin("asyncio"):
        return
    try:
        configured = config.getini(LOOP_SCOPE_INI)
    except ValueError:  # an old pytest-asyncio without the option
        return
    if not configured:
        # No public API sets another plugin's ini default; getini's cache is what pytest-asyncio reads next.
        set_ini_default(config, LOOP_SCOPE_INI, KEEP_FIXTURE_SCOPE)


@pytest.fixture(scope="session")
def linked_token(request: pytest.FixtureRequest) -> str:
    """The linked test account's access token (renewed when about to expire); skipped without a tool server."""
    from conformance import needs
    from conformance.suites._tool_access import fresh_token

    try:
        account = request.getfixturevalue("linked_account")
    except pytest.FixtureLookupError:
        needs("a tool server target with a test account", "--target-url")
    return fresh_token(account)


@pytest_asyncio.fixture
async def host_mcp_session(
    host_http: HostHTTP, tool_server_target: Target, linked_token: str
) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session with the linked account's token, as the host makes it."""
    from conformance.host.async_mcp import OwnedSession

    owned = OwnedSession(host_http, tool_server_target.base_url, token=linked_token)
    session = await owned.start()  # one task enters and leaves the SDK's cancel scopes (setup and teardown may not)
    try:
        yield session
    finally:
        await owned.aclose()


@pytest_asyncio.fixture
async def async_host_http(host_http: HostHTTP) -> AsyncIterator[AsyncHostHTTP]:
    """The host's HTTP client for async code: same guard, timeouts, TLS, recording and redaction."""
    from conformance.host.async_http import AsyncHostHTTP

    async with AsyncHostHTTP(host_http) as client:
        yield client


__all__ = ["register_rule"]
