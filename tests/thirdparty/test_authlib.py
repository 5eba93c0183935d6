"""authlib as the authorization server in front of an MCP Python SDK tool server (``authlib_server.py``), both as
their documentation tells a vendor: authlib's Flask ``AuthorizationServer`` with the authorization code grant and
PKCE S256, RFC 8414 metadata, RFC 9207 ``IssuerParameter``, RFC 9068 JWT access tokens, its own sign-in and consent
pages; the SDK's ``MCPServer`` with ``AuthSettings`` and a ``TokenVerifier`` built on authlib's RFC 9068 validator.
Over TLS on 127.0.0.1 with a throwaway CA; the issuer has no path.

Configurations: ``predefined`` (the vendor configured one client for the host: --client-registration predefined,
--client-id and CONFORMANCE_CLIENT_SECRET) and ``dcr`` (open RFC 7591 registration, the host registers itself),
both with the issuer ``https://127.0.0.1:PORT/oauth``; and ``pathless``: ``dcr`` with the issuer
``https://127.0.0.1:PORT``, which the SDK's ``AuthSettings`` (pydantic ``AnyHttpUrl``) lists in
``authorization_servers`` as ``https://127.0.0.1:PORT/``. Each is certified once per session.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.thirdparty._support import (
    HERE,
    TEST_PASSWORD,
    TEST_USER,
    Pki,
    assert_pinned,
    free_port,
    run_harness,
    running,
)
from tests.thirdparty.test_pysdk import PREDEFINED_REDIRECTS
from tests.thirdparty.verdicts import AUTHLIB_DCR, AUTHLIB_PATHLESS, AUTHLIB_PREDEFINED

TABLES = {"predefined": AUTHLIB_PREDEFINED, "dcr": AUTHLIB_DCR, "pathless": AUTHLIB_PATHLESS}


@dataclass(frozen=True)
class AuthlibTarget:
    url: str
    config: str
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)


@pytest.fixture(scope="module", params=list(TABLES))
def authlib_target(
    request: pytest.FixtureRequest, pki: Pki, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AuthlibTarget]:
    as_port, rs_port = free_port(), free_port()
    url = f"https://127.0.0.1:{rs_port}/mcp"
    argv = [sys.executable, str(HERE / "authlib_server.py"), "--as-port", str(as_port), "--rs-port", str(rs_port)]
    argv += ["--resource", url, "--certfile", str(pki.cert), "--keyfile", str(pki.key), "--cafile", str(pki.ca)]
    env = {"VENDOR_USER": TEST_USER, "VENDOR_PASSWORD": TEST_PASSWORD}
    harness_env: dict[str, str] = {}
    harness_args: list[str] = []
    if request.param != "pathless":
        argv += ["--issuer-path", "/oauth"]
    if request.param != "predefined":
        argv.append("--dcr")
    else:
        client_id, secret = "assistant-host", secrets.token_urlsafe(24)
        for uri in PREDEFINED_REDIRECTS:
            argv += ["--redirect-uri", uri]
        env |= {"VENDOR_CLIENT_ID": client_id, "VENDOR_CLIENT_SECRET": secret}
        harness_args = ["--client-registration", "predefined", f"--client-id={client_id}"]
        harness_args += ["--client-auth-method", "client_secret_post"]
        harness_env = {"CONFORMANCE_CLIENT_SECRET": secret}
    log = tmp_path_factory.mktemp("authlib") / "server.log"
    with running(argv, ports=[as_port, rs_port], log=log, env=env, module="tests.thirdparty.authlib_server"):
        yield AuthlibTarget(url, request.param, harness_env, harness_args)


def test_authlib_stack_verdicts(authlib_target: AuthlibTarget, pki: Pki, tmp_path: Path) -> None:
    args = ["--target-url", authlib_target.url, "--ca-bundle", str(pki.ca)]
    args += ["--login-steps", str(HERE / "authlib_login.toml"), *authlib_target.args]
    run = run_harness(tmp_path, args, authlib_target.env)
    assert_pinned(run, TABLES[authlib_target.config])
