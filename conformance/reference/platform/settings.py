"""Sandbox configuration: API keys, the organization/project/ad account each belongs to, and its limits.

Limits are configured per key (``--config FILE``, JSON ``{"keys": [...]}`` with the fields of
:class:`KeySpec`) so tests can hit them quickly; keys of the same organization and project share one
rate-limit window. The fault switch (``fault_rate``) is configuration, never a public endpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class KeySpec:
    key: str
    organization: str = "org_sandbox"
    project: str = "proj_main"
    account: str = "act_sandbox"  # the ad account campaigns of this key live in
    rpm: int = 100_000  # requests per window
    tpm: int = 50_000_000  # estimated tokens per window
    project_tpm: int | None = None  # optional project-scoped token limit (adds the three project headers)
    window_s: float = 60.0  # length of the rate-limit window (a minute in production, shorter in tests)
    spend_cap_micros: int | None = None  # hard spend cap: 429 without Retry-After once reached
    micros_per_token: int = 1  # what one counted input token adds to the project's tracked spend
    fault_rate: float = 0.0  # share of requests answered 503 server_is_overloaded (deterministic spacing)
    fault_retry_after_s: int | None = 1  # None: the 503 carries no Retry-After


# Documented sandbox keys (printed by `conformance up`); values are not secrets of any real service.
MAIN_KEY = "sk-sandbox-main-4f1c2a"
THROTTLE_KEY = "sk-sandbox-throttle-9b7d"
FAULT_KEY = "sk-sandbox-fault-c3e8"
CAPPED_KEY = "sk-sandbox-capped-71aa"

DEFAULT_KEYS: tuple[KeySpec, ...] = (
    KeySpec(MAIN_KEY, project_tpm=100_000_000),
    # Three requests per one-second window: the fourth within a second is throttled, with Retry-After: 1.
    KeySpec(THROTTLE_KEY, project="proj_throttle", rpm=3, window_s=1.0),
    KeySpec(FAULT_KEY, project="proj_fault", fault_rate=0.5),
    KeySpec(CAPPED_KEY, project="proj_capped", spend_cap_micros=0),
)


CAMPAIGN_ID_SCHEMES = ("random", "sequential")


@dataclass(frozen=True)
class SandboxSettings:
    keys: tuple[KeySpec, ...] = DEFAULT_KEYS
    max_body_bytes: int = 4 * 1024 * 1024
    audience_minimum: int = 1000  # minimum remaining population of an audience-targeted campaign
    # How campaign ids are made: "random" (`cmp_` + 24 hex digits) or "sequential" (`cmp_000001`, `cmp_000002`, ...),
    # the scheme of sandboxes whose neighbouring ids are real campaigns.
    campaign_ids: str = "random"

    def __post_init__(self) -> None:
        if self.campaign_ids not in CAMPAIGN_ID_SCHEMES:
            raise ValueError(
                f"campaign_ids must be one of {', '.join(CAMPAIGN_ID_SCHEMES)} (got {self.campaign_ids!r})"
            )

    def key(self, value: str) -> KeySpec | None:
        for spec in self.keys:
            if spec.key == value:
                return spec
        return None

    def with_request_limit(self, rpm: int, window_s: float = 60.0) -> SandboxSettings:
        """The same sandbox under a low request limit, as real sandboxes have (e.g. 120 requests per minute): every
        key that is not a deliberately throttled one gets ``rpm`` requests per ``window_s`` window."""
        if rpm < 1 or window_s <= 0:
            raise ValueError(f"a request limit needs rpm ≥ 1 and a window > 0 (got {rpm}, {window_s})")
        keys = tuple(k if k.rpm < rpm else replace(k, rpm=rpm, window_s=window_s) for k in self.keys)
        return replace(self, keys=keys)


def load_settings(path: Path | None) -> SandboxSettings:
    if path is None:
        return SandboxSettings()
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    known = {f.name for f in fields(KeySpec)}
    keys = []
    for entry in raw.get("keys", []):
        unknown = set(entry) - known
        if unknown:
            raise ValueError(f"unknown key settings {sorted(unknown)} in {path}")
        keys.append(KeySpec(**entry))
    extra = {k: v for k, v in raw.items() if k != "keys"}
    return SandboxSettings(keys=tuple(keys) or DEFAULT_KEYS, **extra)
