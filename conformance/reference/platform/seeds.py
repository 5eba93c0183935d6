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

# status: ready or processing. Includable: ready and at least the minimum size. Excludable: ready, any size.
AUDIENCES: dict[str, dict[str, Any]] = {
    str(a["id"]): a
    for a in (
        {
            "id": "aud_ready_large",
            "name": "Newsletter subscribers",
            "status": "ready",
            "approximate_size": 50_000,
        },
        {"id": "aud_ready_medium", "name": "Past purchasers", "status": "ready", "approximate_size": 20_000},
        {
            "id": "aud_overlap_large",
            "name": "Site visitors (90 days)",
            "status": "ready",
            "approximate_size": 49_500,
        },
        {"id": "aud_ready_small", "name": "Beta testers", "status": "ready", "approximate_size": 40},
        {"id": "aud_ready_empty", "name": "Churned (new list)", "status": "ready", "approximate_size": 0},
        {
            "id": "aud_not_ready",
            "name": "CRM import (processing)",
            "status": "processing",
            "approximate_size": 0,
        },
        {
            "id": CONFLICT_AUDIENCE_ID,
            "name": "Loyalty members (membership update in progress)",
            "status": "ready",
            "approximate_size": 30_000,
        },
    )
}

# Only an active standard setting connected to one active conversion source can be an optimization goal.
CONVERSION_EVENT_SETTINGS: dict[str, dict[str, Any]] = {
    str(c["id"]): c
    for c in (
        {
            "id": "ces_purchase",
            "name": "Purchase",
            "kind": "standard",
            "status": "active",
            "active_sources": 1,
        },
        {"id": "ces_signup", "name": "Sign up", "kind": "standard", "status": "active", "active_sources": 1},
        {
            "id": "ces_lead_inactive",
            "name": "Lead",
            "kind": "standard",
            "status": "inactive",
            "active_sources": 1,
        },
        {
            "id": "ces_custom_wishlist",
            "name": "Wishlist",
            "kind": "custom",
            "status": "active",
            "active_sources": 1,
        },
        {
            "id": "ces_no_source",
            "name": "Add to cart",
            "kind": "standard",
            "status": "active",
            "active_sources": 0,
        },
    )
}

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
