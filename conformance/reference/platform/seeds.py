"""Read-only fixtures every ad account of the sandbox has: locations, custom audiences, conversion event
settings, product feeds. The contract does not show these records; their fields here are the sandbox's choice.

Sandbox fixture: ``aud_membership_updating`` is a ready, includable audience whose membership update is always
"in progress": saving a campaign whose targeting names it answers ``409 custom_audience_mutation_conflict``
and applies nothing. Conformance runs against the reference stack pass it as the conflict trigger (CAMP-14).
"""

from __future__ import annotations

from typing import Any

LOCATIONS: dict[str, dict[str, Any]] = {
    "loc_us_ca": {
        "id": "loc_us_ca",
        "type": "region",
        "country_code": "US",
        "name": "California",
        "region_code": "CA",
    },
    "loc_us_ny": {
        "id": "loc_us_ny",
        "type": "region",
        "country_code": "US",
        "name": "New York",
        "region_code": "NY",
    },
    "loc_us_tx": {
        "id": "loc_us_tx",
        "type": "region",
        "country_code": "US",
        "name": "Texas",
        "region_code": "TX",
    },
    "dma_807": {
        "id": "dma_807",
        "type": "dma",
        "country_code": "US",
        "name": "San Francisco-Oakland-San Jose",
        "region_code": "CA",
    },
    "dma_501": {
        "id": "dma_501",
        "type": "dma",
        "country_code": "US",
        "name": "New York",
        "region_code": "NY",
    },
}

CONFLICT_AUDIENCE_ID = "aud_membership_updating"


def _table(fields: tuple[str, ...], *rows: tuple[Any, ...]) -> dict[str, dict[str, Any]]:
    """Records by id, from one tuple per record holding the values of ``fields`` (the first is the id)."""
    return {str(row[0]): dict(zip(fields, row, strict=True)) for row in rows}


# status: ready or processing. Includable: ready and at least the minimum size. Excludable: ready, any size.
AUDIENCES: dict[str, dict[str, Any]] = _table(
    ("id", "name", "status", "approximate_size"),
    ("aud_ready_large", "Newsletter subscribers", "ready", 50_000),
    ("aud_ready_medium", "Past purchasers", "ready", 20_000),
    ("aud_overlap_large", "Site visitors (90 days)", "ready", 49_500),
    ("aud_ready_small", "Beta testers", "ready", 40),
    ("aud_ready_empty", "Churned (new list)", "ready", 0),
    ("aud_not_ready", "CRM import (processing)", "processing", 0),
    (CONFLICT_AUDIENCE_ID, "Loyalty members (membership update in progress)", "ready", 30_000),
)

# Only an active standard setting connected to one active conversion source can be an optimization goal.
CONVERSION_EVENT_SETTINGS: dict[str, dict[str, Any]] = _table(
    ("id", "name", "kind", "status", "active_sources"),
    ("ces_purchase", "Purchase", "standard", "active", 1),
    ("ces_signup", "Sign up", "standard", "active", 1),
    ("ces_lead_inactive", "Lead", "standard", "inactive", 1),
    ("ces_custom_wishlist", "Wishlist", "custom", "active", 1),
    ("ces_no_source", "Add to cart", "standard", "active", 0),
)

PRODUCT_FEEDS: dict[str, dict[str, Any]] = {"pf_main": {"id": "pf_main", "name": "Main catalog"}}

FINE_TUNING_MODEL_LIMITS: list[dict[str, Any]] = [
    {
        "object": "fine_tuning.model_limits",
        "model": "gpt-4o-mini-2024-07-18",
        "max_concurrent_jobs": 3,
        "max_jobs_per_day": 48,
        "max_training_tokens_per_job": 50_000_000,
    },
    {
        "object": "fine_tuning.model_limits",
        "model": "gpt-4.1-2025-04-14",
        "max_concurrent_jobs": 2,
        "max_jobs_per_day": 24,
        "max_training_tokens_per_job": 20_000_000,
    },
]


def audience_record(audience: dict[str, Any], minimum: int) -> dict[str, Any]:
    ready = audience["status"] == "ready"
    uses = []
    if ready and audience["approximate_size"] >= minimum:
        uses.append("inclusion")
    if ready:
        uses.append("exclusion")
    return {"object": "custom_audience", **audience, "eligible_uses": uses}
