"""Dynamic client registration: AUTH-DCR-01, 02.

The host registers only what the user asked for: with a predefined client (``--client-id``, or
``--client-registration predefined``) or ``--client-registration cimd`` nothing is registered, and AUTH-DCR-02
judges the client the host actually links with.
"""

from __future__ import annotations

import pytest

from conformance import Blocked, alone, expect, needs, observe, rule
from conformance.config import Settings
from conformance.host.asmeta import AsMetadata
from conformance.host.http import HostHTTP
from conformance.host.oauth import ClientRegistry, OAuthClient, TokenEndpoint
from conformance.suites._linking import FlowAttempt, Linker, blocked_by, register_connection_client


def _register(host_http: HostHTTP, linker: Linker, registry: ClientRegistry, settings: Settings) -> OAuthClient:
    return register_connection_client(host_http, linker.host, registry, settings)


def registration_refused(settings: Settings, linker: Linker) -> str | None:
    """Why the host must not register a client in this run (the user chose another identity), else None."""
    mode = settings.get("client_registration", "auto")
    if mode in ("cimd", "predefined"):
        return f"--client-registration {mode}"
    if linker.host.client.kind == "predefined":
        return "a predefined client (--client-id)"
    return None


@alone("counts the registrations before and after its own")
@rule("AUTH-DCR-01")
def test_registration_returns_a_client(
    host_http: HostHTTP,
    as_metadata: AsMetadata,
    linker: Linker,
    client_registry: ClientRegistry,
    conformance_settings: Settings,
) -> None:
    if not as_metadata.registration_endpoint:
        needs("a registration_endpoint in the authorization server metadata")
    chosen = registration_refused(conformance_settings, linker)
    if chosen is not None:
        needs(
            f"a run that lets the host register (the user chose {chosen}: nothing is registered)",
            "--client-registration auto or dcr, without --client-id",
        )
    before = client_registry.registrations
    client = _register(host_http, linker, client_registry, conformance_settings)  # a RegistrationError says why
    again = _register(host_http, linker, client_registry, conformance_settings)
    if again is not client or client_registry.registrations > before + 1:
        raise RuntimeError("harness: the host registered twice in one connection")
    observe(f"registered {client.client_id} ({client.auth_method}); reused for the connection")


@pytest.fixture(scope="session")
def connection_client(
    host_http: HostHTTP,
    as_metadata: AsMetadata,
    linker: Linker,
    client_registry: ClientRegistry,
    conformance_settings: Settings,
) -> OAuthClient:
    """The client judged: the host's own when it is registered or predefined, else (auto mode linking with CIMD)
    the DCR client of this connection."""
    host_client = linker.host.client
    if host_client.kind in ("dcr", "predefined"):
        return host_client
    if registration_refused(conformance_settings, linker) is None and as_metadata.registration_endpoint:
        with blocked_by("AUTH-DCR-01"):
            return _register(host_http, linker, client_registry, conformance_settings)
    needs("a registered or predefined client (the host links with CIMD)", "--client-id or --client-registration dcr")


@rule("AUTH-DCR-02")
def test_registered_client_stays_valid(linker: Linker, connection_client: OAuthClient, first_link: FlowAttempt) -> None:
    """Only *staying* valid is judged: the first use of the client is the flow's (AUTH-FLOW-01/02) business."""
    own = connection_client is linker.host.client
    tokens = linker.host.tokens if own else TokenEndpoint(linker.http, linker.host.as_metadata, connection_client)
    first = first_link if own else linker.attempt(client=connection_client, tokens=tokens)
    if not first.ok:
        if first.need is not None:
            first.require()  # a configuration gap: skipped as incomplete
        raise Blocked(first.rule or "AUTH-FLOW-01", f"the first use of the client failed: {first.problem or ''}")
    second = linker.attempt(client=connection_client, tokens=tokens)
    if not second.ok:
        if second.need is not None:
            second.require()
        problem = f"second authorization: {second.problem}"
        expect("invalid_client" not in problem, f"the client stopped being valid during the connection: {problem}")
        raise Blocked(second.rule or "AUTH-FLOW-01", problem)
    observe(f"a second authorization with the {connection_client.kind} client {connection_client.client_id} succeeded")
    latest = second.token if second.token else first.token
    assert latest is not None
    if not latest.refresh_token:
        observe("no refresh token was issued: the refresh case does not apply")
        return
    refreshed = tokens.refresh(latest.refresh_token, resource=linker.host.resource)
    expect(
        refreshed.error != "invalid_client",
        f"the client stopped being valid during the connection: refresh: {refreshed.describe()}",
    )
    outcome = "succeeded" if refreshed.ok else f"was refused ({refreshed.describe()}), not for the client"
    observe(f"a refresh {outcome} (reported: tokens 'may expire or rotate normally')")
