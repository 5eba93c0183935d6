"""The shared linking fixtures' pure parts: when a host refuses to start linking, and which rule it names."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from conformance._verdicts import NeedsUnmet
from conformance.config import Target, resolve
from conformance.host._guard import UrlGuard
from conformance.host.asmeta import AsMetadata
from conformance.host.discovery import PrmDiscovery
from conformance.host.http import HostHTTP
from conformance.host.identity import HostIdentity
from conformance.host.oauth import ClientRegistry, OAuthClient, RedirectChoice, ScopeChoice, TokenEndpoint
from conformance.suites._linking import HostClient, Linker, host_refusal, register_connection_client
from tests.host.test_login import PASSWORD, REDIRECT, USER, FakeAS

ISSUER = "https://as.example"
RESOURCE = "https://tools.example/mcp"
GOOD: dict[str, Any] = {
    "issuer": ISSUER,
    "authorization_endpoint": f"{ISSUER}/auth",
    "token_endpoint": f"{ISSUER}/token",
    "code_challenge_methods_supported": ["S256"],
}


def refusal(prm: dict[str, Any], meta: dict[str, Any]) -> tuple[str, str] | None:
    discovery = PrmDiscovery(url=f"{RESOURCE}/.well-known", document=prm, via="root", challenge=None)
    as_meta = AsMetadata(expected_issuer=ISSUER, url=f"{ISSUER}/.well-known", via="oauth", document=meta)
    return host_refusal(discovery, as_meta, Target("tool_server", RESOURCE))


def test_a_conforming_server_is_not_refused() -> None:
    assert refusal({"resource": RESOURCE}, GOOD) is None


@pytest.mark.parametrize(
    ("prm", "meta", "rule", "words"),
    [
        ({"resource": "https://tools.example"}, GOOD, "AUTH-PRM-02", "not the URL the host connects to"),
        ({"resource": RESOURCE}, {**GOOD, "issuer": ISSUER + "/"}, "AUTH-ASM-02", "differs"),
        ({"resource": RESOURCE}, {**GOOD, "code_challenge_methods_supported": ["plain"]}, "AUTH-ASM-03", "no S256"),
        ({"resource": RESOURCE}, {**GOOD, "token_endpoint": "http://as.example/token"}, "AUTH-ASM-04", "https"),
    ],
)
def test_refusals_name_the_rule(prm: dict[str, Any], meta: dict[str, Any], rule: str, words: str) -> None:
    found = refusal(prm, meta)
    assert found is not None and found[0] == rule and words in found[1], found


# -- declining consent (AUTH-ISS-02/03) ------------------------------------------------------------------------


@dataclass
class RememberingAS(FakeAS):
    """Consent remembered for the client: a code at once, unless the request asks for consent (``prompt=consent``);
    ``honours_prompt=False``: never a page to decline."""

    honours_prompt: bool = True
    prompts: list[str | None] = field(default_factory=list)

    def respond(self, method: str, path: str, query: dict[str, str], form: dict[str, str], cookie: str | None):
        if path == "/auth":
            self.prompts.append(query.get("prompt"))
            if query.get("prompt") != "consent" or not self.honours_prompt:
                answer = urlencode({"code": "remembered", "state": query.get("state", ""), "iss": self.base})
                return 302, {"Location": f"{query['redirect_uri']}?{answer}"}, ""
        return super().respond(method, path, query, form, cookie)


def consent_linker(fake: RememberingAS, prompt_values: list[str] | None) -> Linker:
    http = HostHTTP(transport=httpx.MockTransport(fake.handler), guard=UrlGuard(allow_private_network=True))
    document = {**GOOD, "issuer": fake.base, "authorization_endpoint": f"{fake.base}/auth"}
    if prompt_values is not None:
        document["prompt_values_supported"] = prompt_values
    meta = AsMetadata(expected_issuer=fake.base, url=f"{fake.base}/.well-known", via="oauth", document=document)
    client = OAuthClient("dcr", "client-1", "none", (REDIRECT,))
    identity = HostIdentity(base_url="https://conformance-host.invalid", redirect_base=REDIRECT)
    redirect = RedirectChoice("stable", "test", identity.stable_document_url, REDIRECT, None)
    host = HostClient(
        client, redirect, identity, meta, RESOURCE, ScopeChoice((), "none"), TokenEndpoint(http, meta, client)
    )
    settings = resolve(cli={}, env={"CONFORMANCE_TEST_USER": USER, "CONFORMANCE_TEST_PASSWORD": PASSWORD})
    return Linker(http, settings, host, None)


def test_declining_asks_for_consent_when_the_metadata_lists_it() -> None:
    fake = RememberingAS()
    request, login, callback = consent_linker(fake, ["login", "consent"]).decline()
    assert fake.prompts == ["consent"] and request.params()["prompt"] == "consent"
    assert callback.error == "access_denied" and login.steps == ["login", "deny consent"]


def test_a_remembered_consent_is_asked_again_with_prompt_consent() -> None:
    fake = RememberingAS()
    _, _, callback = consent_linker(fake, None).decline()
    assert fake.prompts == [None, "consent"] and callback.error == "access_denied"


def test_a_server_that_never_asks_for_consent_says_what_would_reach_the_case() -> None:
    fake = RememberingAS(honours_prompt=False)
    with pytest.raises(NeedsUnmet) as caught:
        consent_linker(fake, ["consent"]).decline()
    assert fake.prompts == ["consent"]
    assert "prompt=consent was sent" in caught.value.need and "prompt_values_supported" in str(caught.value.option)


# -- registration refused in both forms (AUTH-DCR-01) ----------------------------------------------------------


def test_a_registration_refused_in_both_forms_is_a_need_not_a_failure() -> None:
    refused: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        refused.append(json.loads(request.content)["redirect_uris"][0])
        return httpx.Response(400, json={"error": "invalid_client_metadata", "error_description": "not accepted"})

    http = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True))
    host = consent_linker(RememberingAS(), None).host
    host.as_metadata.document["registration_endpoint"] = f"{host.as_metadata.expected_issuer}/register"
    host.redirect = RedirectChoice("stable", "test", "unused", "http://127.0.0.1/oauth/callback", None)
    with pytest.raises(NeedsUnmet) as caught:
        register_connection_client(http, host, ClientRegistry(), resolve(cli={}, env={}))
    assert refused == ["http://127.0.0.1/oauth/callback", "https://conformance-host.invalid/oauth/callback"]
    assert "--redirect-base" in str(caught.value.option) and "invalid_client_metadata" in caught.value.need
