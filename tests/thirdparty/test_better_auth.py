"""better-auth in front of an MCP TypeScript SDK server (``better_auth/server.mjs``), as better-auth's documentation
tells a vendor: ``betterAuth`` with the JWT plugin and ``@better-auth/mcp``'s ``mcp()`` (the OAuth 2.1 provider of
``@better-auth/oauth-provider`` bound to the MCP resource) with open dynamic client registration, its own sign-in and
consent pages (JavaScript: certified with --login-driver browser), the RFC 8414 document served with
``oauthProviderAuthServerMetadata``, and the SDK's ``McpServer`` behind ``requireMcpAuth``. Over TLS on 127.0.0.1 with
a throwaway CA; certified once per session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.thirdparty._support import (
    TEST_PASSWORD,
    TEST_USER,
    Pki,
    assert_pinned,
    free_port,
    run_harness,
    running,
)
from tests.thirdparty.verdicts import BETTER_AUTH


@dataclass(frozen=True)
class BetterAuthTarget:
    url: str
    login_steps: Path


@pytest.fixture(scope="module")
def better_auth_target(
    pki: Pki, node: str, better_auth_server: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BetterAuthTarget]:
    port = free_port()
    env = {
        "PORT": str(port),
        "CERT_FILE": str(pki.cert),
        "KEY_FILE": str(pki.key),
        # the server fetches its own JWKS over HTTPS (requireMcpAuth): Node trusts the throwaway CA as a deployment
        # trusts its certificate authority
        "NODE_EXTRA_CA_CERTS": str(pki.ca),
        "VENDOR_USER": TEST_USER,
        "VENDOR_PASSWORD": TEST_PASSWORD,
    }
    log = tmp_path_factory.mktemp("better-auth") / "server.log"
    with running([node, str(better_auth_server)], ports=[port], log=log, env=env):
        yield BetterAuthTarget(f"https://127.0.0.1:{port}/mcp", better_auth_server.parent / "login.toml")


def test_better_auth_stack_verdicts(better_auth_target: BetterAuthTarget, pki: Pki, tmp_path: Path) -> None:
    args = ["--target-url", better_auth_target.url, "--ca-bundle", str(pki.ca)]
    args += ["--login-steps", str(better_auth_target.login_steps), "--login-driver", "browser"]
    run = run_harness(tmp_path, args)
    assert_pinned(run, BETTER_AUTH)
