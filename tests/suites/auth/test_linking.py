"""The shared linking fixtures' pure parts: when a host refuses to start linking, and which rule it names."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.config import Target
from conformance.host.asmeta import AsMetadata
from conformance.host.discovery import PrmDiscovery
from conformance.suites._linking import host_refusal

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
