"""Fixtures of the platform suite."""

from __future__ import annotations

import pytest

from conformance.config import Settings, Target
from conformance.host.http import HostHTTP
from conformance.suites._order import alone_after_the_rest
from conformance.suites.platform.client import PlatformApi


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The checks that run alone after the others, RL-01, RL-04, RL-05 and RL-07 (judged over every response of
    their target, see ``ledger_of``) after all of them."""
    alone_after_the_rest(items)


@pytest.fixture(scope="session")
def platform_api(host_http: HostHTTP, platform_target: Target, conformance_settings: Settings) -> PlatformApi:
    if platform_target.api_key:
        host_http.redactor.add_secret(platform_target.api_key)
    for name in ("platform_throttle_api_key", "platform_fault_api_key"):
        value = conformance_settings.get(name)
        if value:
            host_http.redactor.add_secret(str(value))
    return PlatformApi(host_http, platform_target, str(conformance_settings.get("platform_model", "gpt-4o")))
