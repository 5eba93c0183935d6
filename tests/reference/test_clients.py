"""Third-party clients against the reference stack: the `mcp` SDK client, with a token from a scripted login."""

from __future__ import annotations

import json
import ssl
from typing import Any

import anyio
import jwt

from conformance.reference.idp.scripted import ScriptedClient, obtain_tokens, pkce_pair
from conformance.reference.stack import Stack
from tests.reference.conftest import https_client, metadata_url, rpc


async def _session_calls(
    stack: Stack, token: str | None, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[Any, list[Any]]:
    # The SDK client is imported here, not when the suite is collected.
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    verify = ssl.create_default_context(cafile=str(stack.ca_file))
    async with (
        httpx2.AsyncClient(verify=verify, headers=headers, timeout=15.0) as http,
        streamable_http_client(stack.settings["CONFORMANCE_TARGET_URL"], http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def test_sdk_client_lists_tools_and_calls_the_profile_tool(auth_stack: Stack, alice_tokens: dict[str, Any]) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [("get_profile", {}), ("get_profile", {})]
    tools, (profile, again) = anyio.run(_session_calls, auth_stack, alice_tokens["access_token"], calls)
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {"search_docs", "list_orders", "list_products", "cancel_order", "get_profile"}
    assert by_name["get_profile"].meta == {
        "openai/profile": True,
        "securitySchemes": [{"type": "oauth2", "scopes": ["tools.read"]}],
    }
    assert profile.is_error is False
    record = profile.structured_content
    assert record["name"] == "Alice Example" and record["email"] == "alice@example.test" and record["nickname"] == "ali"
    assert record["id"].strip() and "alice" not in record["id"]
    assert json.loads(profile.content[0].text) == record
    assert again.structured_content == record  # stable across calls
    claims = jwt.decode(alice_tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == auth_stack.settings["CONFORMANCE_TARGET_URL"]


def test_anonymous_list_orders_gets_the_meta_challenge(auth_stack: Stack) -> None:
    _, (orders, docs) = anyio.run(
        _session_calls, auth_stack, None, [("list_orders", {}), ("search_docs", {"query": "orders"})]
    )
    assert orders.is_error is True and orders.structured_content is None
    (challenge,) = orders.meta["mcp/www_authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{metadata_url(auth_stack.settings["CONFORMANCE_TARGET_URL"])}"' in challenge
    assert 'error="invalid_token"' in challenge and "error_description=" in challenge
    assert docs.is_error is False and docs.structured_content["results"]


def test_bad_token_gets_401_with_challenge(auth_stack: Stack, alice_tokens: dict[str, Any]) -> None:
    url = auth_stack.settings["CONFORMANCE_TARGET_URL"]
    head, payload, signature = alice_tokens["access_token"].split(".")
    tampered = f"{head}.{payload}.{signature[:-4]}AAAA"
    with https_client(auth_stack) as client:
        answer = rpc(client, url, "tools/list", {}, token=tampered)
        prm = client.get(metadata_url(url)).json()
        root_prm = client.get(url.rsplit("/", 1)[0] + "/.well-known/oauth-protected-resource").json()
    assert answer.status_code == 401
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and 'scope="tools.read tools.write"' in challenge
    assert prm == root_prm and prm["resource"] == url


def test_alt_resource_token_is_refused(auth_stack: Stack, issuer: str) -> None:
    s = auth_stack.settings
    tokens = obtain_tokens(
        issuer,
        str(auth_stack.ca_file),
        login=s["CONFORMANCE_TEST_USER_2"],
        password=s["CONFORMANCE_TEST_PASSWORD_2"],
        resource=s["CONFORMANCE_ALT_RESOURCE"],
    )
    with https_client(auth_stack) as client:
        refused = rpc(client, s["CONFORMANCE_TARGET_URL"], "tools/list", {}, token=tokens["access_token"])
    assert refused.status_code == 401 and "another resource" in refused.headers["www-authenticate"]


def test_userinfo_returns_verified_email(auth_stack: Stack, issuer: str) -> None:
    s = auth_stack.settings
    client = ScriptedClient(issuer, str(auth_stack.ca_file))
    try:
        client.register()
        verifier, challenge = pkce_pair()
        # No resource: the access token is for the UserInfo endpoint.
        answer = client.authorize(
            login=s["CONFORMANCE_TEST_USER_2"],
            password=s["CONFORMANCE_TEST_PASSWORD_2"],
            resource=None,
            scope="openid email profile",
            challenge=challenge,
        )
        assert answer.params["iss"] == issuer == client.metadata["issuer"]
        tokens = client.exchange(answer.params["code"], verifier, None)
        userinfo = client.http.get(
            client.metadata["userinfo_endpoint"], headers={"authorization": f"Bearer {tokens['access_token']}"}
        ).json()
    finally:
        client.close()
    assert userinfo["email"] == "bob@example.test" and userinfo["email_verified"] is True
    assert "nickname" not in userinfo  # bob has none: omitted, not invented
    assert client.metadata["authorization_response_iss_parameter_supported"] is True
    assert "S256" in client.metadata["code_challenge_methods_supported"]
    assert client.metadata["client_id_metadata_document_supported"] is True
