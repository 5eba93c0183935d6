"""Options of the platform suite (read with ``conformance_settings.get(name)``)."""

from __future__ import annotations

from conformance.config import OptionSpec, at_least, non_negative

OPTIONS: list[OptionSpec] = [
    OptionSpec("platform_model", "model named in token-count requests", default="gpt-4o"),
    OptionSpec(
        "platform_throttle_api_key",
        "a platform key with a low request limit, to provoke 429 within the budget (default: the main key)",
        secret=True,
    ),
    OptionSpec(
        "platform_fault_api_key",
        "a platform key whose requests the sandbox's fault switch answers 503 (RL-04)",
        secret=True,
    ),
    OptionSpec(
        "platform_rl_budget",
        "most requests spent to provoke a 429 (RL-03 is skipped when the limit is beyond it)",
        kind="int",
        default=60,
        check=at_least(1),
    ),
    OptionSpec(
        "platform_max_retry_after",
        "longest Retry-After (seconds) the rate-limit checks wait for",
        kind="float",
        default=65.0,
        check=non_negative,
    ),
]
