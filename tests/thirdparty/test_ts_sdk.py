"""The TypeScript MCP SDK's own example server, unmodified: ``simpleStreamableHttp.js --oauth`` (and
``--oauth-strict``) with its demo in-memory OAuth provider, over plain HTTP on loopback as its README runs it.

The example hard-codes ``http://localhost:{MCP_PORT}/mcp`` and ``http://localhost:{MCP_AUTH_PORT}``; its
authorization server has no login or consent page (``/authorize`` redirects straight back with a code). Node is
preloaded with ``loopback.mjs`` so that its listeners bind 127.0.0.1 rather than every interface.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.thirdparty._support import HERE, assert_pinned, assert_spoken, free_port, run_harness, running
from tests.thirdparty.verdicts import TS_SDK_OAUTH, TS_SDK_OAUTH_STRICT


@dataclass(frozen=True)
class TsTarget:
    url: str
    alt_resource: str
    flag: str


@pytest.fixture(scope="module", params=["--oauth", "--oauth-strict"])
def ts_target(
    request: pytest.FixtureRequest, node: str, ts_sdk_example: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TsTarget]:
    mcp_port, auth_port = free_port(), free_port()
    flags = ["--oauth"] if request.param == "--oauth" else ["--oauth", "--oauth-strict"]
    argv = [node, "--import", str(HERE / "ts_sdk" / "loopback.mjs"), str(ts_sdk_example), *flags]
    env = {"MCP_PORT": str(mcp_port), "MCP_AUTH_PORT": str(auth_port)}
    log = tmp_path_factory.mktemp("ts-sdk") / "server.log"
    with running(argv, ports=[mcp_port, auth_port], log=log, env=env):
        # The demo AS issues a token for any `resource` (unless --oauth-strict): another server's URL serves for
        # AUTH-TOK-06.
        yield TsTarget(f"http://localhost:{mcp_port}/mcp", f"http://localhost:{free_port()}/mcp", request.param)


def test_ts_sdk_example_verdicts(ts_target: TsTarget, tmp_path: Path) -> None:
    run = run_harness(
        tmp_path,
        [
            "--target-url",
            ts_target.url,
            "--allow-insecure-loopback",
            "--alt-resource",
            ts_target.alt_resource,
        ],
    )
    assert_spoken(run, ["legacy (2025-06-18)"])  # no server/discover: legacy only
    assert_pinned(run, TS_SDK_OAUTH if ts_target.flag == "--oauth" else TS_SDK_OAUTH_STRICT)
