"""Fixtures of the third-party target tests: install once (offline afterwards), one loopback PKI per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.thirdparty import install
from tests.thirdparty._support import Pki, make_pki


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("thirdparty-pki"))


@pytest.fixture(scope="session")
def node() -> str:
    return install.node()


@pytest.fixture(scope="session")
def ts_sdk_example() -> Path:
    return install.ensure_ts_sdk()


@pytest.fixture(scope="session")
def fastmcp_python() -> Path:
    return install.ensure_fastmcp_venv()


@pytest.fixture(scope="session")
def oidc_provider_module() -> Path:
    return install.oidc_provider_module()


@pytest.fixture(scope="session")
def better_auth_server() -> Path:
    return install.ensure_better_auth()
