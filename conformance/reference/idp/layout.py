"""Where the authorization pieces of one stack live: ports, issuer, resources, test accounts, test issuer key.

The IdP, the tool server and the rewriting proxy each need the others' URLs, while the stack asks each service
package separately for its specs. So the first package to ask writes the layout into the stack's data directory
and the others read it back: one source of truth per stack, no global state.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conformance.reference._service import StackContext, free_port

LAYOUT_FILE = "auth-layout.json"
TEST_ISSUER = "https://test-issuer.conformance.invalid"


@dataclass(frozen=True)
class Account:
    sub: str
    login: str
    password: str
    email: str
    name: str
    nickname: str | None = None


@dataclass(frozen=True)
class AuthLayout:
    host: str
    idp_port: int
    toolserver_port: int
    proxy_port: int | None  # set when a proxy mutant puts the rewriting proxy in front of the IdP
    admin_key: str
    accounts: tuple[Account, ...]

    @property
    def idp_url(self) -> str:
        return f"https://{self.host}:{self.idp_port}"

    @property
    def proxy_url(self) -> str | None:
        return f"https://{self.host}:{self.proxy_port}" if self.proxy_port else None

    @property
    def issuer(self) -> str:
        """What clients see as the issuer: the proxy when there is one (it forwards Host, so URLs match)."""
        return self.proxy_url or self.idp_url

    @property
    def toolserver_url(self) -> str:
        return f"https://{self.host}:{self.toolserver_port}"

    @property
    def resource(self) -> str:
        return self.toolserver_url + "/mcp"

    @property
    def alt_resource(self) -> str:
        """A second resource the IdP issues tokens for and the tool server refuses (wrong-audience checks)."""
        return self.toolserver_url + "/alt"

    @property
    def test_issuer_key_file(self) -> str:
        return "test-issuer-key.pem"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["accounts"] = [asdict(a) for a in self.accounts]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuthLayout:
        accounts = tuple(Account(**a) for a in data.pop("accounts"))
        return cls(accounts=accounts, **data)


def _new_accounts() -> tuple[Account, ...]:
    # Distinct subjects, emails and names; only the first has a nickname (so omission is exercised).
    return (
        Account("248289761001", "alice", secrets.token_urlsafe(12), "alice@example.test", "Alice Example", "ali"),
        Account("248289761002", "bob", secrets.token_urlsafe(12), "bob@example.test", "Bob Example"),
    )


def needs_proxy(mutants: frozenset[str]) -> bool:
    from conformance.reference.proxy.mutants import MUTANTS

    return any(m.name in mutants for m in MUTANTS)


def auth_layout(ctx: StackContext) -> AuthLayout:
    """The layout of this stack, made on first call (ports picked now, passwords random)."""
    path = ctx.data_dir / LAYOUT_FILE
    if path.is_file():
        return AuthLayout.from_json(json.loads(path.read_text()))
    layout = AuthLayout(
        host=ctx.host,
        idp_port=free_port(ctx.host),
        toolserver_port=free_port(ctx.host),
        proxy_port=free_port(ctx.host) if needs_proxy(ctx.mutants) else None,
        admin_key=secrets.token_urlsafe(18),
        accounts=_new_accounts(),
    )
    write_private(path, json.dumps(layout.to_json(), indent=2))
    return layout


def write_private(path: Path, text: str) -> None:
    """Write a file only the owner can read (it holds test passwords or keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def load_layout(data_dir: Path) -> AuthLayout:
    """The layout a running stack wrote into its data directory."""
    return AuthLayout.from_json(json.loads((data_dir / LAYOUT_FILE).read_text()))
