"""RL-01, RL-05 and RL-07 each add a response of every kind to their target's ledger before judging it, but only
once per target and run between them: a second round spent the throttle key's small window (3 requests against the
reference sandbox) down to the host's reserve, and the host then waited for the window's reset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance.config import Target
from conformance.suites.platform import test_ratelimits
from conformance.suites.platform.client import LEDGERS, ledger_of

URL = "https://platform-sampling.example"


@dataclass
class Api:
    """What _sample uses of PlatformApi (the run's, one per target); every request answered 200 and fed to the
    ledger, as PlatformApi does."""

    target: Target
    sampled: bool = False
    sent: list[str] = field(default_factory=list)

    def body(self, **fields: Any) -> dict[str, Any]:
        return fields

    def _answer(self, what: str) -> httpx.Response:
        self.sent.append(what)
        return ledger_of(self.target).absorb(httpx.Response(200, request=httpx.Request("GET", URL)))

    def count_raw(self, body: dict[str, Any], api_key: str | None = None) -> httpx.Response:
        return self._answer(f"count {body} with {'the default key' if api_key is None else api_key}")

    def get(self, path: str, params: dict[str, Any] | None = None) -> httpx.Response:
        return self._answer(f"GET {path}")


def test_the_ledger_is_sampled_once_per_target_and_run() -> None:
    settings = {"platform_throttle_api_key": "throttled", "platform_fault_api_key": "faulty"}
    api = Api(Target(name="platform", base_url=URL))
    try:
        test_ratelimits._sample(api, settings)  # type: ignore[arg-type]  # RL-01
        kinds = list(api.sent)
        assert len(kinds) == 6 and any("throttled" in k for k in kinds) and any("faulty" in k for k in kinds)
        test_ratelimits._sample(api, settings)  # type: ignore[arg-type]  # RL-05, judging the same ledger
        assert api.sent == kinds and ledger_of(api.target).responses == 6
        other = Api(Target(name="platform", base_url=URL + ":8443"))
        test_ratelimits._sample(other, settings)  # type: ignore[arg-type]  # a fleet's other target: its own
        assert len(other.sent) == 6
        again = Api(Target(name="platform", base_url=URL))
        test_ratelimits._sample(again, settings)  # type: ignore[arg-type]  # another run in this process: its own
        assert len(again.sent) == 6
    finally:
        LEDGERS.pop(URL, None)
        LEDGERS.pop(URL + ":8443", None)
