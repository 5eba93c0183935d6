"""A tool server built as the Python MCP SDK documents it (``pysdk_server.py``): the SDK's auth routes over an
in-memory provider with a sign-in page, ``AuthSettings``, and an introspecting ``TokenVerifier``; over TLS on
127.0.0.1 with a throwaway CA. Dynamic client registration is its only client identity.

Two configurations: ``validate_token_resource=True`` (audience checked) and the SDK's default (unset: no check).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
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
from tests.thirdparty.verdicts import PYSDK_AUDIENCE, PYSDK_DEFAULT


@dataclass(frozen=True)
class PySdkTarget:
    url: str
    alt_resource: str
    check_audience: bool


@pytest.fixture(scope="module", params=["audience", "default"])
def pysdk_target(
    request: pytest.FixtureRequest, pki: Pki, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PySdkTarget]:
    as_port, rs_port, other_port = free_port(), free_port(), free_port()
    url, alt = f"https://127.0.0.1:{rs_port}/mcp", f"https://127.0.0.1:{other_port}/mcp"
    argv = [sys.executable, str(HERE / "pysdk_server.py"), "--as-port", str(as_port), "--rs-port", str(rs_port)]
    argv += ["--resource", url, "--resource", alt]
    argv += ["--certfile", str(pki.cert), "--keyfile", str(pki.key), "--cafile", str(pki.ca)]
    check = request.param == "audience"
    if check:
        argv.append("--check-audience")
    env = {"VENDOR_USER": TEST_USER, "VENDOR_PASSWORD": TEST_PASSWORD}
    log = tmp_path_factory.mktemp("pysdk") / "server.log"
    with running(argv, ports=[as_port, rs_port], log=log, env=env):
        yield PySdkTarget(url, alt, check)


def test_python_sdk_server_verdicts(pysdk_target: PySdkTarget, pki: Pki, tmp_path: Path) -> None:
    run = run_harness(
        tmp_path,
        [
            "--target-url",
            pysdk_target.url,
            "--ca-bundle",
            str(pki.ca),
            "--login-steps",
            str(HERE / "pysdk_login.toml"),
            "--alt-resource",
            pysdk_target.alt_resource,
        ],
    )
    assert_pinned(run, PYSDK_AUDIENCE if pysdk_target.check_audience else PYSDK_DEFAULT)
