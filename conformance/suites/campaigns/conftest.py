"""Fixtures of the campaigns suite: its client, which archives everything the run created at the end of the
session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.config import Settings, Target
from conformance.core.rules import suite_of, touches
from conformance.host import fanout
from conformance.host.http import HostHTTP
from conformance.suites._order import alone_after_the_rest
from conformance.suites.campaigns.client import CAMPAIGN_LIST, CampaignsApi


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The checks that run alone after the others (``conformance.suites._order``); every campaigns check not
    alone among the campaign list moves it (it creates or changes campaigns), so those keep out of its way."""
    alone_after_the_rest(items)
    for item in items:
        if suite_of(item) == "campaigns":
            touches(item, CAMPAIGN_LIST, "creates or changes campaigns, which move the campaign list")


@pytest.fixture(scope="session")
def campaigns_api(
    host_http: HostHTTP, platform_target: Target, conformance_settings: Settings
) -> Iterator[CampaignsApi]:
    if platform_target.api_key:
        host_http.redactor.add_secret(platform_target.api_key)
    api = CampaignsApi(host_http, platform_target, str(conformance_settings.get("run_id") or "cf"))
    yield api

    # Archive everything this run created (archive is final; the contract has no delete), up to the run's
    # --concurrency at a time: each archive touches one campaign of its own, and every request still passes the pacer.
    def archive(campaign_id: str) -> None:
        try:
            api.action(campaign_id, "archive")
        except Exception:  # cleanup must not turn a verdict into an error
            return

    fanout.outcomes(dict.fromkeys(api.created), archive, limit=host_http.concurrency)
