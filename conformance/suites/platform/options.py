"""Options of the platform suite (read with ``conformance_settings.get(name)``)."""

from __future__ import annotations

from typing import Any

from conformance.config import OptionSpec, at_least, non_negative

KEY_ROLES = ("main", "throttle", "fault")  # the platform keys a run may configure, by what they are for


def key_roles(value: Any) -> None:
    """A list of KEY_ROLES, or ``none``."""
    roles = [str(v) for v in value]
    if roles == ["none"]:
        return
    unknown = [r for r in roles if r not in KEY_ROLES]
    if unknown or not roles:
        raise ValueError(f"{', '.join(unknown) or 'nothing'}: name main, throttle, fault (comma-separated) or none")


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
        "platform_project_token_limit_keys",
        "which configured platform keys have a project-scoped token limit: main, throttle, fault (comma-separated) "
        "or none; the answers of the others must carry no project-token headers (RL-05)",
        kind="list",
        check=key_roles,
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
