"""Fixtures of the platform suite."""

from __future__ import annotations

import pytest

from conformance.config import Settings, Target
from conformance.host.http import HostHTTP
from conformance.suites.platform.client import PlatformApi


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """RL-01, RL-04, RL-05 and RL-07 judge every response of their target (see ``ledger_of``): run them after all
    other checks."""
    last = [item for item in items if _decides_header_rules(item)]
    if last:
        items[:] = [item for item in items if item not in last] + last


def _decides_header_rules(item: pytest.Item) -> bool:
    rules = {rule_id for mark in item.iter_markers("conformance_rule") for rule_id in mark.args}
    return bool(rules & {"RL-01", "RL-04", "RL-05", "RL-07"})


@pytest.fixture(scope="session")
def platform_api(host_http: HostHTTP, platform_target: Target, conformance_settings: Settings) -> PlatformApi:
    if platform_target.api_key:
        host_http.redactor.add_secret(platform_target.api_key)
    for name in ("platform_throttle_api_key", "platform_fault_api_key"):
        value = conformance_settings.get(name)
        if value:
            host_http.redactor.add_secret(str(value))
    return PlatformApi(host_http, platform_target, str(conformance_settings.get("platform_model", "gpt-4o")))
