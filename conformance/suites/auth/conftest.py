"""Shared prerequisites of the auth suite. A failed prerequisite blocks the rules that need it."""

from __future__ import annotations

import pytest

from conformance import Blocked, Failure, TargetError
from conformance.config import Target
from conformance.host.discovery import PrmDiscovery, discover_prm
from conformance.host.http import HostHTTP


@pytest.fixture(scope="session")
def prm_discovery(host_http: HostHTTP, tool_server_target: Target) -> PrmDiscovery:
    try:
        return discover_prm(host_http, tool_server_target.base_url)
    except (Failure, TargetError) as exc:
        raise Blocked("AUTH-PRM-01", str(exc)) from None
