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

from tests.thirdparty._support import HERE, Pki, assert_pinned, assert_spoken, free_port, run_harness, running
from tests.thirdparty.verdicts import FASTMCP_AUDIENCE, FASTMCP_NO_AUDIENCE, FASTMCP_PATHLESS

TABLES = {"audience": FASTMCP_AUDIENCE, "no-audience": FASTMCP_NO_AUDIENCE, "pathless": FASTMCP_PATHLESS}


@dataclass(frozen=True)
class FastMcpTarget:
    url: str
    alt_resource: str
    config: str


@pytest.fixture(scope="module")
def fastmcp_targets(
    pki: Pki,
    node: str,
    fastmcp_python: Path,
    oidc_provider_module: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, FastMcpTarget]]:
    """Each configuration's own provider and FastMCP server, the three servers served by one process (``--serve``:
    each its own app, verifier and port; one interpreter importing fastmcp instead of three). Each provider serves
    only its configuration's run, as when each configuration was started apart."""
    logs = tmp_path_factory.mktemp("fastmcp")
    server = [str(fastmcp_python), str(HERE / "fastmcp" / "fastmcp_server.py")]
    server += ["--certfile", str(pki.cert), "--keyfile", str(pki.key)]
    targets: dict[str, FastMcpTarget] = {}
    mcp_ports: list[int] = []
    ports: list[int] = []  # every port handed out here, all distinct (the servers bind theirs after the providers)

    def port() -> int:
        while (found := free_port()) in ports:
            pass
        ports.append(found)
        return found

    with contextlib.ExitStack() as stack:
        for config in TABLES:
            op_port, mcp_port, other_port = port(), port(), port()
            issuer = f"https://127.0.0.1:{op_port}" + ("" if config == "pathless" else "/oidc")
            url, alt = f"https://127.0.0.1:{mcp_port}/mcp", f"https://127.0.0.1:{other_port}/mcp"
            provider = [node, str(HERE / "fastmcp" / "stock_provider.mjs"), "--issuer", issuer, "--port", str(op_port)]
            provider += ["--certfile", str(pki.cert), "--keyfile", str(pki.key), "--resource", url, "--resource", alt]
            provider += ["--module", str(oidc_provider_module)]
            # The provider fetches CIMD documents from the harness's publisher (certificate of the same CA).
            log = logs / f"provider-{config}.log"
            stack.enter_context(running(provider, ports=[op_port], log=log, env={"NODE_EXTRA_CA_CERTS": str(pki.ca)}))
            server += ["--serve", str(mcp_port), issuer, *([url] if config != "no-audience" else [])]
            targets[config] = FastMcpTarget(url, alt, config)
            mcp_ports.append(mcp_port)
        # FastMCP fetches the providers' JWKS over TLS (httpx honours SSL_CERT_FILE).
        log = logs / "fastmcp.log"
        stack.enter_context(running(server, ports=mcp_ports, log=log, env={"SSL_CERT_FILE": str(pki.ca)}))
        yield targets


@pytest.mark.parametrize("config", list(TABLES))
def test_fastmcp_verdicts(fastmcp_targets: dict[str, FastMcpTarget], config: str, pki: Pki, tmp_path: Path) -> None:
    fastmcp_target = fastmcp_targets[config]
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
    # No server/discover: legacy only. Pathless: every call after discovery is blocked (AUTH-ASM-02), and an
    # anonymous 401 settles no era, so none was spoken.
    spoken = [] if fastmcp_target.config == "pathless" else ["legacy (2025-06-18)"]
    assert_spoken(run, spoken)
    assert_pinned(run, TABLES[fastmcp_target.config])
