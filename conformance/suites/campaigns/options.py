"""Options of the campaigns suite (read with ``conformance_settings.get(name)``)."""

from __future__ import annotations

from conformance.config import OptionSpec, at_least

OPTIONS: list[OptionSpec] = [
    OptionSpec(
        "campaigns_conflict_audience_id",
        "a custom audience whose membership update is in progress (saving it answers 409; CAMP-14)",
    ),
    OptionSpec(
        "campaigns_conversion_event_setting_ids",
        "two active standard conversion event settings of the ad account (CAMP-10, CAMP-12)",
        kind="list",
    ),
    OptionSpec("campaigns_location_id", "a location id of the ad account, for targeting (CAMP-01, CAMP-09)"),
    OptionSpec(
        "campaigns_stateful_steps",
        "steps per example of the campaign state machine (CAMP-08)",
        kind="int",
        default=10,
        check=at_least(1),
    ),
]
