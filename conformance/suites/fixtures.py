"""Fixtures the suites share: linking an account (auth and profile alike) and the tool server's tool listing.

The plugin names this module in its ``pytest_plugins``, so every check (bundled or not) can request these fixtures
(they build on the plugin's ``host_http``, ``conformance_settings`` and ``tool_server_target``). The module itself is
light: each fixture imports the linking client (``suites/_linking.py``, OAuth, MCP, login drivers) when it first
runs, so a run with no tool server never loads it. A fixture whose prerequisite fails raises
``Blocked(<rule>, why)`` (pytest caches it: every later user is blocked by the same rule without a new attempt);
missing configuration is ``needs(...)`` (skipped with the option that supplies it).

Every fixture of the chain a linked account waits for (discovery, the publisher, the host's identity and client, the
linker, the first link) is marked :func:`~conformance.early`: the run loop starts the whole chain on threads as
soon as the plugin's fixtures are set up, and checks that need none of it go on meanwhile; the discovery starts
while pytest still collects (``pytest/_head_start.py``).

Fixtures (session scope):

``prm_discovery`` → :class:`~conformance.host.discovery.PrmDiscovery`
    The protected resource metadata found the host's way (blocked by AUTH-PRM-01). When the unauthenticated
    request is served (anonymous read-only tools), ``challenge`` is the Bearer challenge of a request with an
    invalid token instead, which is the challenge a host meets when a tool needs auth.
``as_metadata`` → :class:`~conformance.host.asmeta.AsMetadata`
    The metadata of ``authorization_servers[0]`` (blocked by AUTH-PRM-03 when there is no entry, AUTH-ASM-01 when
    none is served). Not required to be valid: checks judge it; ``Linker`` refuses what a host refuses.
``publisher`` → :class:`~conformance.host.publisher.Publisher`
    The host's HTTPS server for its CIMD documents, JWKS and callbacks (options ``publisher_certfile`` /
    ``publisher_keyfile``, the reference stack exports its own certificate; ``client_metadata_url`` when the
    authorization server reaches it through a public origin). ``needs(...)`` without a certificate.
``optional_publisher`` → ``Publisher | None`` and ``client_registry`` → :class:`~conformance.host.oauth.ClientRegistry`
    The same publisher without the need, and the DCR clients of this connection (registered once, reused).
``host_identity`` → :class:`~conformance.host.identity.HostIdentity`
    The publisher's identity, or, with only ``client_metadata_url``, documents published elsewhere
    (``conformance cimd export``; fetches then cannot be observed). A host that will not use CIMD (DCR, a
    predefined client) needs neither: its identity is unpublished, with the stable redirect URIs
    ``DEFAULT_REDIRECT_BASE`` (or ``redirect_base``) and, for a predefined client, ``.../conformance``.
``host_client`` → ``HostClient``
    The identified client (CIMD, DCR or predefined, option ``client_registration``), its redirect choice, the
    default scopes and a :class:`~conformance.host.oauth.TokenEndpoint`. Blocked by AUTH-PRM-02 (resource not
    canonical), AUTH-ASM-02/03/04/05/06 (what makes a host refuse the server) or AUTH-DCR-01.
``linker`` → ``Linker``
    Runs authorizations (see ``suites/_linking.py``). ``linker.shared(account, scopes)`` is the host's token for
    that account and those scopes, as a host keeps one per user and server until it expires: ``linked_account``
    and ``linked_account_2`` are kept there, another scope set is authorized once and shared by the checks that
    only present the token or read what came with it.
``first_link`` → ``FlowAttempt``
    The first authorization of test account 1 with the default scopes (AUTH-FLOW-01/02 judge it).
``linked_account`` → ``LinkedAccount``
    That authorization, completed: ``access_token``, ``refresh_token``, ``id_token``, ``scopes`` (granted),
    ``token`` (the TokenResult), ``tokens`` (TokenEndpoint), ``refresh()`` (rotates in place), ``resource``.
    Blocked by the rule the flow broke (AUTH-FLOW-01, AUTH-FLOW-02, AUTH-CIMD-01/02, AUTH-ISS-01 ...).
``linked_account_2`` → ``LinkedAccount``
    Test account 2 (options ``test_user_2`` / ``test_password_2``), or ``needs(...)``.
``link_account`` → ``Callable[..., LinkedAccount]``
    ``link_account(account=1, scopes=None, id_token_hint=None)``: a fresh authorization (a new code and tokens,
    never shared), raising ``Blocked`` like ``linked_account``. Use it when a probe spoils a token (code reuse
    revokes the first exchange's tokens; refresh tokens rotate) or when the new authorization is what the rule is
    about; otherwise ``linker.shared(...)``.
``listing`` → ``Listing``
    The tool server's ``tools/list``: anonymous, or with the linked account's token when the server refuses
    anonymous sessions; a failed listing blocks its users (AUTH-TOOL-01 judges declarations).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from conformance import early
from conformance.config import Settings, Target
from conformance.verdict._verdicts import NeedsUnmet, needs

if TYPE_CHECKING:  # the linking client is imported by the fixtures when they run (see the module's docstring)
    from conformance.host.asmeta import AsMetadata
    from conformance.host.discovery import PrmDiscovery
    from conformance.host.http import HostHTTP
    from conformance.host.identity import HostIdentity
    from conformance.host.oauth import ClientRegistry, ScopeChoice
    from conformance.host.publisher import Publisher
    from conformance.suites._linking import FlowAttempt, HostClient, LinkedAccount, Linker
    from conformance.suites._tool_access import Listing


# -- discovery -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@early()
def prm_discovery(host_http: HostHTTP, tool_server_target: Target) -> PrmDiscovery:
    from conformance.suites._linking import host_discovery

    return host_discovery(host_http, tool_server_target.base_url)


@pytest.fixture(scope="session")
@early()
def as_metadata(host_http: HostHTTP, prm_discovery: PrmDiscovery) -> AsMetadata:
    from conformance.suites._linking import first_as_metadata

    return first_as_metadata(host_http, prm_discovery)


# -- the host's client ---------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@early()
def optional_publisher(conformance_settings: Settings, host_http: HostHTTP) -> Iterator[Publisher | None]:
    """The publisher when a certificate is configured, else None (``publisher`` turns that into a need)."""
    s = conformance_settings
    if not s.get("publisher_certfile") or not s.get("publisher_keyfile"):
        yield None
        return
    from conformance.host.publisher import Publisher

    with Publisher.from_settings(s, host_http.redactor) as publisher:
        yield publisher


@pytest.fixture(scope="session")
def publisher(optional_publisher: Publisher | None) -> Publisher:
    if optional_publisher is None:
        needs(
            "a TLS certificate for the host's CIMD publisher (trusted by the authorization server)",
            "--publisher-certfile and --publisher-keyfile",
            incomplete=True,
        )
    return optional_publisher


@pytest.fixture(scope="session")
@early(after=("as_metadata",))
def host_identity(
    optional_publisher: Publisher | None, conformance_settings: Settings, request: pytest.FixtureRequest
) -> HostIdentity:
    from conformance.suites._linking import host_identity_for

    return host_identity_for(optional_publisher, conformance_settings, lambda: request.getfixturevalue("as_metadata"))


@pytest.fixture(scope="session")
@early()
def client_registry() -> ClientRegistry:
    """DCR clients of this run: registered once per connection and reused (AUTH-DCR-01)."""
    from conformance.host.oauth import ClientRegistry

    return ClientRegistry()


@pytest.fixture(scope="session")
@early()
def host_client(
    host_http: HostHTTP,
    conformance_settings: Settings,
    tool_server_target: Target,
    prm_discovery: PrmDiscovery,
    as_metadata: AsMetadata,
    host_identity: HostIdentity,
    client_registry: ClientRegistry,
) -> HostClient:
    from conformance.suites._linking import make_host_client

    return make_host_client(
        host_http, conformance_settings, tool_server_target, prm_discovery, as_metadata, host_identity, client_registry
    )


# -- authorizations --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@early()
def linker(
    host_http: HostHTTP,
    conformance_settings: Settings,
    host_client: HostClient,
    optional_publisher: Publisher | None,
) -> Linker:
    from conformance.suites._linking import Linker

    return Linker(host_http, conformance_settings, host_client, optional_publisher)


@pytest.fixture(scope="session")
@early()
def first_link_outcome(linker: Linker) -> FlowAttempt | NeedsUnmet:
    """The first authorization of test account 1, or the configuration gap that stopped it."""
    from conformance.suites._linking import first_attempt

    return first_attempt(linker)


@pytest.fixture(scope="session")
@early()
def first_link(first_link_outcome: FlowAttempt | NeedsUnmet) -> FlowAttempt:
    if isinstance(first_link_outcome, NeedsUnmet):
        raise first_link_outcome
    return first_link_outcome


@pytest.fixture(scope="session")
@early()
def linked_account(linker: Linker, first_link: FlowAttempt) -> LinkedAccount:
    from conformance.suites._linking import LinkedAccount

    return linker.keep(
        LinkedAccount.from_attempt(
            1, linker.host.resource, linker.host.tokens, first_link, relink=linker.relinker(1, first_link)
        )
    )


@pytest.fixture(scope="session")
@early()
def linked_account_2(linker: Linker, linked_account: LinkedAccount) -> LinkedAccount:
    # Account 2 only once account 1 linked: a broken flow blocks both by the same rule.
    linker.credentials(2)
    return linker.keep(linker.link(account=2))


@pytest.fixture(scope="session")
def link_account(linker: Linker, linked_account: LinkedAccount) -> Callable[..., LinkedAccount]:
    """``link_account(account=1, scopes=None, id_token_hint=None)``: a fresh authorization."""

    def link(
        account: int = 1,
        scopes: ScopeChoice | str | Sequence[str] | None = None,
        id_token_hint: str | None = None,
    ) -> LinkedAccount:
        return linker.link(account=account, scopes=scopes, id_token_hint=id_token_hint)

    return link


# -- the tool listing ------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@early(after=("linked_account",), imports=("conformance.host.mcp_session",))
def listing(
    host_http: HostHTTP, tool_server_target: Target, conformance_settings: Settings, request: pytest.FixtureRequest
) -> Listing:
    """The tool server's tools/list, once per run (auth's token and tool checks and the profile suite share it)."""
    from conformance.suites._tool_access import fresh_token, suite_listing, vendor_of

    def token() -> str:
        return fresh_token(request.getfixturevalue("linked_account"))

    from conformance.core import _context

    position = _context.mark()
    found = suite_listing(host_http, tool_server_target.base_url, vendor_of(conformance_settings), token)
    found.exchanges = [e for e in _context.since(position) if "tools/list" in str(e.get("request_body") or "")]
    return found


def value_or_need(request: pytest.FixtureRequest, name: str) -> Any:
    """The fixture ``name``'s value, or the :class:`NeedsUnmet` it raised: for a fixture whose lack a check reports
    as a case not tried. Asked for by another fixture, so that it is set up with the check's other fixtures, never
    from a body running beside other checks (``conformance/pytest/_overlap.py``)."""
    try:
        return request.getfixturevalue(name)
    except NeedsUnmet as exc:
        return exc
