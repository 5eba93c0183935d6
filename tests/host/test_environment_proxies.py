"""The environment's proxies, read once per process (``conformance.host.http.environment_proxies``): the host's
clients are made while checks run at once, and the environment is not read again under them."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator

import httpx
import pytest

from conformance.host.http import HostHTTP, environment_proxies

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in (*PROXY_VARIABLES, "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
    environment_proxies.cache_clear()
    yield monkeypatch
    environment_proxies.cache_clear()


def test_proxies_and_exclusions_become_mounts_as_httpx_makes_them(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv("HTTPS_PROXY", "proxy.example:3128")
    fresh.setenv("HTTP_PROXY", "http://proxy.example:3128")
    fresh.setenv("NO_PROXY", "localhost, 127.0.0.1,::1,.internal.example,https://exact.example")
    assert dict(environment_proxies()) == {
        "http://": "http://proxy.example:3128",
        "https://": "http://proxy.example:3128",
        "all://localhost": None,
        "all://127.0.0.1": None,
        "all://[::1]": None,
        "all://*.internal.example": None,
        "https://exact.example": None,
    }


def test_no_proxy_star_means_no_proxy_at_all(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    fresh.setenv("NO_PROXY", "*")
    assert environment_proxies() == ()


def test_read_once_whatever_the_environment_does_later(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv("HTTPS_PROXY", "http://first.example:3128")
    first = environment_proxies()
    fresh.setenv("HTTPS_PROXY", "http://second.example:3128")
    assert environment_proxies() == first


def test_clients_made_later_never_read_the_environment(fresh: pytest.MonkeyPatch) -> None:
    """Clients made while checks run at once (pytest sets and removes a variable around each check) read nothing
    of the environment: neither the proxies again nor anything else through httpx."""
    HostHTTP().close()  # the first client reads the proxies, as the run's first fixture does

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the environment was read again")

    fresh.setattr(urllib.request, "getproxies", refuse)
    fresh.setattr(os.environ, "items", refuse)  # httpx's own reading of the environment's proxies goes through it
    for _ in range(3):
        HostHTTP().close()
        HostHTTP(client_cert=None, user_agent=True).close()


def test_a_client_given_its_transport_uses_no_proxy(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv("HTTPS_PROXY", "http://proxy.invalid:1")
    http = HostHTTP(transport=httpx.MockTransport(lambda request: httpx.Response(204)))
    try:
        assert http.get("https://target.example/").status_code == 204
    finally:
        http.close()
