"""Dynamic client registration: AUTH-DCR-01, 02."""

from __future__ import annotations

import pytest

from conformance import Blocked, Failure, TargetError, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host.asmeta import AsMetadata
from conformance.host.http import HostHTTP
from conformance.host.oauth import ClientRegistry, OAuthClient, TokenEndpoint, identify_client
from conformance.suites._linking import Linker


def _register(host_http: HostHTTP, linker: Linker, registry: ClientRegistry) -> OAuthClient:
    host = linker.host
    return registry.get_or_register(host_http, host.as_metadata, [host.redirect.redirect_uri], identity=host.identity)


@rule("AUTH-DCR-01")
def test_registration_returns_a_client(
    host_http: HostHTTP, as_metadata: AsMetadata, linker: Linker, client_registry: ClientRegistry
) -> None:
    if not as_metadata.registration_endpoint:
        needs("a registration_endpoint in the authorization server metadata")
    before = client_registry.registrations
    client = _register(host_http, linker, client_registry)  # a RegistrationError (Failure) says what came back
    if _register(host_http, linker, client_registry) is not client or client_registry.registrations > before + 1:
        raise RuntimeError("harness: the host registered twice in one connection")
    observe(f"registered {client.client_id} ({client.auth_method}); reused for the connection")


@pytest.fixture(scope="module")
def connection_client(
    host_http: HostHTTP,
    as_metadata: AsMetadata,
    linker: Linker,
    client_registry: ClientRegistry,
    conformance_settings: Settings,
) -> OAuthClient:
    """The DCR client of this connection, else the predefined one."""
    s = conformance_settings
    if as_metadata.registration_endpoint:
        try:
            return _register(host_http, linker, client_registry)
        except (Failure, TargetError) as exc:
            raise Blocked("AUTH-DCR-01", str(exc)) from None
    if s.get("client_id"):
        host = linker.host
        return identify_client(
            host_http,
            as_metadata,
            host.identity,
            host.redirect,
            mode="predefined",
            client_id=s.get("client_id"),
            client_secret=s.get("client_secret"),
            client_auth_method=s.get("client_auth_method"),
        )
    needs("a registration_endpoint or a predefined client", "--client-id")


@rule("AUTH-DCR-02")
def test_registered_client_stays_valid(linker: Linker, connection_client: OAuthClient) -> None:
    tokens = TokenEndpoint(linker.http, linker.host.as_metadata, connection_client)
    first = linker.attempt(client=connection_client, tokens=tokens)
    if not first.ok:
        if "invalid_client" in (first.problem or ""):
            fail(f"the {connection_client.kind} client was refused at its first authorization: {first.problem}")
        raise Blocked(first.rule or "AUTH-FLOW-01", first.problem or "")
    second = linker.attempt(client=connection_client, tokens=tokens)
    problems = []
    if not second.ok:
        problems.append(f"second authorization: {second.problem}")
    latest = second.token if second.ok and second.token else first.token
    assert latest is not None
    if latest.refresh_token:
        refreshed = tokens.refresh(latest.refresh_token, resource=linker.host.resource)
        if not refreshed.ok:
            problems.append(f"refresh: {refreshed.describe()}")
    else:
        observe("no refresh token was issued: only a second authorization was tried")
    invalid = [p for p in problems if "invalid_client" in p]
    expect(not invalid, "the client stopped being valid during the connection: " + "; ".join(invalid))
    if problems:
        raise Blocked("AUTH-FLOW-01", "; ".join(problems))
