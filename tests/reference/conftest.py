"""Fixtures of the reference-stack tests: one authorization stack (IdP + tool server) shared by the session."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.reference.idp.scripted import obtain_tokens
from conformance.reference.stack import Stack
from tests._forked import forked_stack

ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="session")
def auth_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # The services forked from the fork server (tests/_forked.py): how the stack starts them is
    # tests/reference/test_stack.py's subject, not these tests'.
    with forked_stack(services=["toolserver"], data_dir=tmp_path_factory.mktemp("auth-stack")) as stack:
        yield stack


@pytest.fixture(scope="session")
def issuer(auth_stack: Stack) -> str:
    with https_client(auth_stack) as client:
        prm = client.get(metadata_url(auth_stack.settings["CONFORMANCE_TARGET_URL"])).json()
    return str(prm["authorization_servers"][0])


@pytest.fixture(scope="session")
def alice_tokens(auth_stack: Stack, issuer: str) -> dict[str, Any]:
    s = auth_stack.settings
    return obtain_tokens(
        issuer,
        str(auth_stack.ca_file),
        login=s["CONFORMANCE_TEST_USER"],
        password=s["CONFORMANCE_TEST_PASSWORD"],
        resource=s["CONFORMANCE_TARGET_URL"],
    )


def https_client(stack: Stack) -> httpx.Client:
    return httpx.Client(verify=ssl.create_default_context(cafile=str(stack.ca_file)), timeout=10.0)


def register_predefined_client(stack: Stack, issuer: str) -> str:
    """The vendor's predefined public client, registered once with the harness's stable redirect URI: its id."""
    from conformance.cli.init import PREDEFINED_REDIRECT_URI

    with https_client(stack) as client:
        metadata = client.get(issuer.rstrip("/") + "/.well-known/oauth-authorization-server").json()
        registered = client.post(
            metadata["registration_endpoint"],
            json={
                "redirect_uris": [PREDEFINED_REDIRECT_URI],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
            },
        )
    assert registered.status_code == 201, registered.text
    client_id: str = registered.json()["client_id"]
    return client_id


def metadata_url(resource: str) -> str:
    origin, _, path = resource.partition("//")[2].partition("/")
    return f"https://{origin}/.well-known/oauth-protected-resource/{path}"


def rpc(
    client: httpx.Client, url: str, method: str, params: dict[str, Any], token: str | None = None
) -> httpx.Response:
    headers = {"accept": ACCEPT}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers)


def pids_alive(pids: list[int]) -> list[int]:
    """The pids that still exist as live (non-zombie) processes."""
    alive = []
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat")
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive
