"""Fixtures of the campaigns suite: a small campaigns client that remembers what the run created and archives it
all at the end of the session."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from conformance import fail
from conformance.config import Settings, Target
from conformance.host.fields import json_field
from conformance.host.http import HostHTTP
from conformance.suites.platform._support import LEDGER, describe, json_body

BUDGET = {"lifetime_spend_limit_micros": 5_000_000}


@dataclass
class CampaignsApi:
    http: HostHTTP
    target: Target
    run_id: str
    created: list[str] = field(default_factory=list)
    _serial: int = 0

    def name(self, label: str) -> str:
        """A name carrying the run prefix (so a person can find and clean up what a run made)."""
        self._serial += 1
        return f"{self.run_id}-{label}-{self._serial}"

    def body(self, **fields: Any) -> dict[str, Any]:
        """A valid create body; ``fields`` override or add (a value of ``...`` removes the field)."""
        body: dict[str, Any] = {"name": self.name("campaign"), "status": "paused", "budget": dict(BUDGET)}
        body.update(fields)
        return {k: v for k, v in body.items() if v is not ...}

    def url(self, path: str = "") -> str:
        return self.target.url("/v1/campaigns" + path)

    def send(self, method: str, path: str = "", **kwargs: Any) -> httpx.Response:
        return self.request(method, self.url(path), **kwargs)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Every call of the campaigns checks: the target's auth unless ``headers`` is given; the response is
        also handed to the rate-limit ledger (RL-01, RL-05)."""
        headers = kwargs.pop("headers", None)
        sent = self.target.auth if headers is None else headers
        return LEDGER.absorb(self.http.request(method, url, headers=sent, **kwargs))

    def create(self, body: dict[str, Any], **kwargs: Any) -> httpx.Response:
        response = self.send("POST", json=body, **kwargs)
        data = json_body(response)
        if response.status_code < 300 and isinstance(data, dict) and isinstance(data.get("id"), str):
            self.created.append(data["id"])
        return response

    def create_ok(self, **fields: Any) -> dict[str, Any]:
        """Create a campaign that must be accepted; returns it."""
        response = self.create(self.body(**fields))
        if response.status_code not in (200, 201) or not isinstance(json_body(response), dict):
            fail(f"creating a valid campaign failed: {describe(response)}")
        json_field(response, "id", type=str, what=f"the created campaign ({describe(response)})")
        result: dict[str, Any] = json_body(response)
        return result

    def get(self, campaign_id: str) -> httpx.Response:
        return self.send("GET", f"/{campaign_id}")

    def update(self, campaign_id: str, body: Any) -> httpx.Response:
        return self.send("POST", f"/{campaign_id}", json=body)

    def action(self, campaign_id: str, action: str) -> httpx.Response:
        return self.send("POST", f"/{campaign_id}/{action}")

    def list(self, **params: Any) -> httpx.Response:
        return self.send("GET", params={k: v for k, v in params.items() if v is not None})


@pytest.fixture(scope="session")
def campaigns_api(
    host_http: HostHTTP, platform_target: Target, conformance_settings: Settings
) -> Iterator[CampaignsApi]:
    if platform_target.api_key:
        host_http.redactor.add_secret(platform_target.api_key)
    api = CampaignsApi(host_http, platform_target, str(conformance_settings.get("run_id") or "cf"))
    yield api
    # Archive everything this run created (archive is final; the contract has no delete).
    for campaign_id in dict.fromkeys(api.created):
        try:
            api.action(campaign_id, "archive")
        except Exception:  # cleanup must not turn a verdict into an error
            continue
