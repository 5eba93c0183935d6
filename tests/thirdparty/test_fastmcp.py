"""FastMCP 2.x (``fastmcp/fastmcp_server.py`` in ``.venv-thirdparty``): ``JWTVerifier`` + ``RemoteAuthProvider``
over a stock node-oidc-provider (``fastmcp/stock_provider.mjs``: devInteractions login and consent pages, DCR,
resource indicators with JWT access tokens, CIMD), both over TLS on 127.0.0.1 with a throwaway CA.

The provider is mounted at ``/oidc`` (issuer ``https://127.0.0.1:PORT/oidc``): FastMCP lists its authorization
servers as pydantic URLs, which turn a path-less issuer into ``https://host:port/`` (trailing slash) and so never
equal node-oidc-provider's ``issuer`` (see the ``pathless`` configuration, where that is the verdict).

Configurations: ``audience`` (``JWTVerifier(audience=resource)``), ``no-audience`` (its default: none), and
``pathless`` (audience checked, issuer without a path).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.thirdparty._support import HERE, Pki, assert_pinned, free_port, run_harness, running
from tests.thirdparty.verdicts import FASTMCP_AUDIENCE, FASTMCP_NO_AUDIENCE, FASTMCP_PATHLESS

TABLES = {"audience": FASTMCP_AUDIENCE, "no-audience": FASTMCP_NO_AUDIENCE, "pathless": FASTMCP_PATHLESS}


@dataclass(frozen=True)
class FastMcpTarget:
    url: str
    alt_resource: str
    config: str


@pytest.fixture(scope="module", params=list(TABLES))
def fastmcp_target(
    request: pytest.FixtureRequest,
    pki: Pki,
    node: str,
    fastmcp_python: Path,
    oidc_provider_module: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[FastMcpTarget]:
    op_port, mcp_port, other_port = free_port(), free_port(), free_port()
    issuer = f"https://127.0.0.1:{op_port}" + ("" if request.param == "pathless" else "/oidc")
    url, alt = f"https://127.0.0.1:{mcp_port}/mcp", f"https://127.0.0.1:{other_port}/mcp"
    logs = tmp_path_factory.mktemp("fastmcp")
    provider = [node, str(HERE / "fastmcp" / "stock_provider.mjs"), "--issuer", issuer, "--port", str(op_port)]
    provider += ["--certfile", str(pki.cert), "--keyfile", str(pki.key), "--resource", url, "--resource", alt]
    provider += ["--module", str(oidc_provider_module)]
    server = [str(fastmcp_python), str(HERE / "fastmcp" / "fastmcp_server.py"), "--port", str(mcp_port)]
    server += ["--issuer", issuer, "--certfile", str(pki.cert), "--keyfile", str(pki.key)]
    if request.param != "no-audience":
        server += ["--audience", url]
    with contextlib.ExitStack() as stack:
        # The provider fetches CIMD documents from the harness's publisher (certificate of the same CA).
        stack.enter_context(
            running(provider, ports=[op_port], log=logs / "provider.log", env={"NODE_EXTRA_CA_CERTS": str(pki.ca)})
        )
        # FastMCP fetches the provider's JWKS over TLS (httpx honours SSL_CERT_FILE).
        stack.enter_context(
            running(server, ports=[mcp_port], log=logs / "fastmcp.log", env={"SSL_CERT_FILE": str(pki.ca)})
        )
        yield FastMcpTarget(url, alt, request.param)


def test_fastmcp_verdicts(fastmcp_target: FastMcpTarget, pki: Pki, tmp_path: Path) -> None:
    run = run_harness(
        tmp_path,
        [
            "--target-url",
            fastmcp_target.url,
            "--ca-bundle",
            str(pki.ca),
            "--alt-resource",
            fastmcp_target.alt_resource,
            # The provider fetches the harness's CIMD documents from its publisher on 127.0.0.1.
            "--publisher-certfile",
            str(pki.cert),
            "--publisher-keyfile",
            str(pki.key),
        ],
        # devInteractions signs in any login: a second account for PROF-09 costs nothing.
        env={"CONFORMANCE_TEST_USER_2": "second.tester@example.com", "CONFORMANCE_TEST_PASSWORD_2": "another one"},
    )
    assert_pinned(run, TABLES[fastmcp_target.config])
