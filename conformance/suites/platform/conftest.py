"""Fixtures of the platform suite."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from conformance.config import Settings, Target
from conformance.host.http import HostHTTP
from conformance.suites.platform._support import LEDGER

TOKENS_PATH = "/v1/responses/input_tokens"


@dataclass
class PlatformApi:
    """The calls the platform checks make. They go out without host retries so that every answer is the target's
    own (a retried 503 would hide what RL-04 is looking at); only a throttled answer met by a check of another rule
    is waited out by the host (see ``conformance.host.Pacer``). ``pace=False``: the rate-limit checks' own window."""

    http: HostHTTP
    target: Target
    model: str

    def headers(self, api_key: str | None = None) -> dict[str, str]:
        if api_key is None:
            return dict(self.target.auth)
        return {"Authorization": f"Bearer {api_key}"}

    def count_raw(
        self, body: Any, *, api_key: str | None = None, headers: dict[str, str] | None = None, pace: bool = True
    ) -> httpx.Response:
        sent = self.headers(api_key) if headers is None else headers
        url = self.target.url(TOKENS_PATH)
        return LEDGER.absorb(self.http.post(url, json=body, headers=sent, retry=None, pace=pace))

    def post_content(self, path: str, content: str) -> httpx.Response:
        """A raw (possibly malformed) JSON body."""
        headers = {**self.headers(), "Content-Type": "application/json"}
        return LEDGER.absorb(self.http.post(self.target.url(path), content=content, headers=headers, retry=None))

    def body(self, **fields: Any) -> dict[str, Any]:
        return {"model": self.model, **fields}

    def get(self, path: str, *, api_key: str | None = None, **kwargs: Any) -> httpx.Response:
        return LEDGER.absorb(self.http.get(self.target.url(path), headers=self.headers(api_key), retry=None, **kwargs))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """RL-01, RL-04 and RL-05 judge every response of the run (see ``LEDGER``): run them after all other checks."""
    last = [item for item in items if _decides_header_rules(item)]
    if last:
        items[:] = [item for item in items if item not in last] + last


def _decides_header_rules(item: pytest.Item) -> bool:
    rules = {rule_id for mark in item.iter_markers("conformance_rule") for rule_id in mark.args}
    return bool(rules & {"RL-01", "RL-04", "RL-05"})


@pytest.fixture(scope="session")
def platform_api(host_http: HostHTTP, platform_target: Target, conformance_settings: Settings) -> PlatformApi:
    if platform_target.api_key:
        host_http.redactor.add_secret(platform_target.api_key)
    for name in ("platform_throttle_api_key", "platform_fault_api_key"):
        value = conformance_settings.get(name)
        if value:
            host_http.redactor.add_secret(str(value))
    return PlatformApi(host_http, platform_target, str(conformance_settings.get("platform_model", "gpt-4o")))
