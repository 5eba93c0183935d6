"""Where the reference IdP's Node processes keep their compile cache: with the modules they compile."""

from __future__ import annotations

import pytest

from conformance.core._cache import cache_dir
from conformance.reference.idp import HERE, compile_cache_env, node_env


@pytest.fixture
def no_node_cache_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NODE_COMPILE_CACHE", raising=False)
    monkeypatch.delenv("NODE_DISABLE_COMPILE_CACHE", raising=False)


@pytest.mark.usefixtures("no_node_cache_settings")
def test_the_cache_lives_in_the_installation_s_node_modules_not_in_the_user_s_cache() -> None:
    directory = compile_cache_env()["NODE_COMPILE_CACHE"]
    assert directory.startswith(str(HERE / "node_modules") + "/")
    assert not directory.startswith(str(cache_dir()))
    assert node_env(HERE / "ca.pem")["NODE_COMPILE_CACHE"] == directory


@pytest.mark.parametrize("variable", ["NODE_COMPILE_CACHE", "NODE_DISABLE_COMPILE_CACHE"])
def test_a_node_cache_setting_of_the_caller_wins(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.delenv("NODE_COMPILE_CACHE", raising=False)
    monkeypatch.delenv("NODE_DISABLE_COMPILE_CACHE", raising=False)
    monkeypatch.setenv(variable, "1")
    assert compile_cache_env() == {}
    assert "NODE_COMPILE_CACHE" not in node_env(HERE / "ca.pem")
