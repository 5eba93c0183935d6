"""AUTH-TOK-08 calls a scoped tool with a token that lacks its scope, whatever the first link was granted: a scope
the linked account lacks makes its own token the probe; otherwise the host's token for every other scope
(``Linker.shared``: a link of its own unless a check already obtained one)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from conformance.suites.auth.test_tokens import scope_target, token_without


def tool(name: str, scopes: list[str], destructive: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "securitySchemes": [{"type": "oauth2", "scopes": scopes}],
        "annotations": {"readOnlyHint": not destructive, "destructiveHint": destructive},
    }


LISTING = SimpleNamespace(named=lambda: [tool("read", ["files.read"]), tool("write", ["files.write"], True)])


def test_a_scope_the_first_link_lacks_is_the_probe() -> None:
    found = scope_target(LISTING, ["files.read"])  # type: ignore[arg-type]
    assert found is not None and found[0]["name"] == "write" and found[1] == "files.write"


def test_with_every_scope_granted_the_destructive_tool_comes_first() -> None:
    found = scope_target(LISTING, ["files.read", "files.write"])  # type: ignore[arg-type]
    assert found is not None and found[0]["name"] == "write"


def test_the_linked_token_serves_when_it_lacks_the_scope() -> None:
    account = SimpleNamespace(access_token="opaque-read-only", scopes=("files.read",))
    linked: list[Any] = []
    linker = SimpleNamespace(shared=linked.append)
    token, how = token_without("files.write", None, account, linker, None)  # type: ignore[arg-type]
    assert token == "opaque-read-only" and "linked account" in how and not linked


def test_a_second_link_asks_for_every_other_scope() -> None:
    account = SimpleNamespace(access_token="opaque-all", scopes=("files.read", "files.write"))
    asked: list[list[str]] = []

    def shared(scopes: list[str]) -> SimpleNamespace:
        asked.append(scopes)
        return SimpleNamespace(scopes=tuple(scopes), access_token="opaque-second")

    scopes = SimpleNamespace(scopes=["files.read", "files.write"])
    linker = SimpleNamespace(host=SimpleNamespace(scopes=scopes), shared=shared)
    token, how = token_without("files.write", None, account, linker, None)  # type: ignore[arg-type]
    assert token == "opaque-second" and asked == [["files.read"]] and "second link" in how
