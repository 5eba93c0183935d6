"""Campaign validation and rendering. Pure functions over JSON values; storage is in ``store.py``.

Choices where the contract is silent (documented in the README of the sandbox):
- unknown fields are refused (``400 unknown_parameter``), as the real platform does;
- ``end_time`` before ``start_time`` is refused;
- an archived campaign is read-only: updates, ``activate`` and ``pause`` answer ``400 campaign_archived``;
  ``archive`` again is an idempotent 200;
- ``mode`` and ``product_feed_id`` are fixed at creation like ``bidding_type``;
- an empty ``custom_audiences.ids`` list is the same as omitting it (the campaign is exclusion-only or
  untargeted);
- the audience population check subtracts excluded sizes from included sizes (no overlap data in the sandbox).
"""

from __future__ import annotations

from typing import Any

from conformance.core._values import is_int
from conformance.reference.platform import seeds
from conformance.reference.platform.errors import ApiError, invalid, missing, unknown_parameter, wrong_type

NAME_MIN, NAME_MAX = 3, 1000
BUDGET_MIN = 1_000_000
INT64_MAX = 2**63 - 1
TIME_MIN, TIME_MAX = 946_684_800, 4_102_444_800
BIDDING_TYPES = ("impressions", "clicks", "conversions")

CREATE_FIELDS = {
    "name",
    "description",
    "start_time",
    "end_time",
    "status",
    "budget",
    "mode",
    "product_feed_id",
    "bidding_type",
    "conversion_event_setting_ids",
    "targeting",
}
UPDATE_FIELDS = CREATE_FIELDS


def check_name(value: Any, mutants: frozenset[str]) -> str:
    if not isinstance(value, str):
        raise wrong_type("name", "a string")
    minimum = NAME_MIN - 1 if "name-min-off-by-one" in mutants else NAME_MIN
    if not minimum <= len(value) <= NAME_MAX:
        raise invalid("name", f"'name' must be {NAME_MIN} to {NAME_MAX} characters")
    if not value.strip():
        raise invalid("name", "'name' must contain a non-space character")
    return value


def check_time(param: str, value: Any, mutants: frozenset[str] = frozenset()) -> int | None:
    if value is None:
        return None
    if "time-numeric-string-coerced" in mutants and isinstance(value, str) and value.isdigit():
        value = int(value)  # a lenient parser: "946684800" becomes 946684800
    if not is_int(value):
        raise wrong_type(param, "an integer Unix timestamp")
    lowest = 0 if "time-lower-bound-unenforced" in mutants else TIME_MIN
    if not lowest <= value <= TIME_MAX:
        raise invalid(param, f"'{param}' must be between {TIME_MIN} and {TIME_MAX}")
    return int(value)


def check_budget(value: Any, mutants: frozenset[str]) -> dict[str, int]:
    if not isinstance(value, dict):
        raise wrong_type("budget", "an object")
    for key in value:
        if key != "lifetime_spend_limit_micros":
            raise unknown_parameter(f"budget.{key}")
    if "lifetime_spend_limit_micros" not in value:
        raise missing("budget.lifetime_spend_limit_micros")
    micros = value["lifetime_spend_limit_micros"]
    if "budget-fraction-truncated" in mutants and isinstance(micros, float):
        micros = int(micros)  # a lenient parser: 1000000.5 becomes 1000000
    if not is_int(micros):
        raise wrong_type("budget.lifetime_spend_limit_micros", "an integer")
    minimum = 1 if "budget-minimum-unenforced" in mutants else BUDGET_MIN
    if not minimum <= micros <= INT64_MAX:
        raise invalid("budget.lifetime_spend_limit_micros", f"must be at least {BUDGET_MIN} (and fit in 64 bits)")
    return {"lifetime_spend_limit_micros": int(micros)}


def _id_list(param: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise wrong_type(param, "an array of strings")
    if len(set(value)) != len(value):
        raise invalid(param, f"'{param}' lists an id twice")
    return list(value)


def check_targeting(
    value: Any, minimum: int, mutants: frozenset[str], *, eligibility: bool = True
) -> dict[str, Any] | None:
    """Validate targeting input; return its stored form (ids only) or None. ``eligibility`` False: only the
    audience-eligibility-create-only mutant, whose updates skip the inclusion checks."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise wrong_type("targeting", "an object")
    stored: dict[str, Any] = {}
    for key in value:
        if key not in ("locations", "custom_audiences", "excluded_custom_audiences"):
            raise unknown_parameter(f"targeting.{key}")
    locations = value.get("locations")
    if locations is not None:
        if not isinstance(locations, dict):
            raise wrong_type("targeting.locations", "an object")
        for key in locations:
            if key != "include":
                raise unknown_parameter(f"targeting.locations.{key}")
        include = locations.get("include")
        if not isinstance(include, list):
            raise wrong_type("targeting.locations.include", "an array of objects")
        ids: list[str] = []
        for i, loc in enumerate(include):
            param = f"targeting.locations.include[{i}]"
            if not isinstance(loc, dict) or not isinstance(loc.get("id"), str):
                raise wrong_type(param, "an object with a string 'id'")
            if loc["id"] not in seeds.LOCATIONS:
                raise invalid(f"{param}.id", f"unknown location '{loc['id']}'")
            if loc["id"] in ids:
                raise invalid(f"{param}.id", f"location '{loc['id']}' is listed twice")
            ids.append(loc["id"])
        stored["locations"] = {"include": [{"id": i} for i in ids]}
    included = _audiences(value, "custom_audiences")
    excluded = _audiences(value, "excluded_custom_audiences")
    both = set(included) & set(excluded)
    if both:
        raise invalid(
            "targeting.excluded_custom_audiences.ids",
            f"audience '{sorted(both)[0]}' is both included and excluded",
            "audience_included_and_excluded",
        )
    for aud_id in included:
        audience = _audience(aud_id, "targeting.custom_audiences.ids")
        if eligibility and (audience["status"] != "ready" or audience["approximate_size"] < minimum):
            raise invalid(
                "targeting.custom_audiences.ids",
                f"audience '{aud_id}' is not eligible for inclusion (not ready or below {minimum} people)",
                "audience_not_eligible",
            )
    for aud_id in excluded:
        if _audience(aud_id, "targeting.excluded_custom_audiences.ids")["status"] != "ready":
            raise invalid(
                "targeting.excluded_custom_audiences.ids",
                f"audience '{aud_id}' is not ready",
                "audience_not_eligible",
            )
    if included:
        population = sum(seeds.AUDIENCES[a]["approximate_size"] for a in included) - sum(
            seeds.AUDIENCES[a]["approximate_size"] for a in excluded
        )
        if population < minimum and eligibility:
            raise invalid(
                "targeting",
                f"the targeted population after exclusions is below the minimum of {minimum} people",
                "audience_too_small",
            )
        stored["custom_audiences"] = {"ids": included}
    if excluded:
        stored["excluded_custom_audiences"] = {"ids": excluded}
    return stored


def _audiences(value: dict[str, Any], key: str) -> list[str]:
    block = value.get(key)
    if block is None:
        return []
    if not isinstance(block, dict):
        raise wrong_type(f"targeting.{key}", "an object")
    for sub in block:
        if sub != "ids":
            raise unknown_parameter(f"targeting.{key}.{sub}")
    return _id_list(f"targeting.{key}.ids", block.get("ids", []))


def _audience(aud_id: str, param: str) -> dict[str, Any]:
    audience = seeds.AUDIENCES.get(aud_id)
    if audience is None:
        raise invalid(param, f"unknown custom audience '{aud_id}'", "audience_not_found")
    return audience


def touches_conflict_audience(targeting: dict[str, Any] | None) -> bool:
    if not targeting:
        return False
    ids = targeting.get("custom_audiences", {}).get("ids", []) + targeting.get("excluded_custom_audiences", {}).get(
        "ids", []
    )
    return seeds.CONFLICT_AUDIENCE_ID in ids


def check_conversions(bidding_type: str, ids: list[str], mutants: frozenset[str]) -> None:
    param = "conversion_event_setting_ids"
    if bidding_type != "conversions":
        if ids:
            raise invalid(param, "conversion event settings apply only with bidding_type 'conversions'")
        return
    if len(ids) != 1 and not ("conversions-any-count" in mutants and ids):
        raise invalid(param, "bidding_type 'conversions' needs exactly one conversion event setting id")
    for ces_id in ids:
        setting = seeds.CONVERSION_EVENT_SETTINGS.get(ces_id)
        if setting is None:
            raise invalid(param, f"unknown conversion event setting '{ces_id}'", "conversion_event_setting_not_found")
        if setting["kind"] != "standard":
            raise invalid(param, "custom event settings cannot be optimization goals", "conversion_event_not_eligible")
        if setting["status"] != "active" or setting["active_sources"] != 1:
            raise invalid(
                param,
                "the conversion event setting must be active and connected to one active conversion source",
                "conversion_event_not_eligible",
            )


def _body(value: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise wrong_type("body", "a JSON object")
    for key in value:
        if key not in allowed:
            raise unknown_parameter(key)
    return value


def _check_window(doc: dict[str, Any]) -> None:
    start, end = doc.get("start_time"), doc.get("end_time")
    if start is not None and end is not None and end < start:
        raise invalid("end_time", "'end_time' must not be before 'start_time'")


def _mode(body: dict[str, Any]) -> tuple[str | None, str | None]:
    mode = body.get("mode")
    feed = body.get("product_feed_id")
    if mode is not None and mode != "product_feed":
        raise invalid("mode", "'mode' must be 'product_feed' or null")
    if mode == "product_feed":
        if feed is None:
            raise missing("product_feed_id")
        if not isinstance(feed, str):
            raise wrong_type("product_feed_id", "a string")
        if feed not in seeds.PRODUCT_FEEDS:
            raise invalid("product_feed_id", f"unknown product feed '{feed}'", "product_feed_not_found")
    elif feed is not None:
        raise invalid("product_feed_id", "'product_feed_id' needs mode 'product_feed'")
    return mode, feed


def validate_create(value: Any, minimum: int, mutants: frozenset[str]) -> dict[str, Any]:
    body = _body(value, CREATE_FIELDS)
    for required in ("name", "status", "budget"):
        if required not in body:
            raise missing(required)
    status = body["status"]
    if "status-case-insensitive" in mutants and isinstance(status, str):
        status = status.strip().lower()  # a lenient parser: "Active" and "active " become "active"
    allowed_status = ("active", "paused", "archived") if "create-archived-accepted" in mutants else ("active", "paused")
    if status not in allowed_status:
        raise invalid("status", "'status' on create must be 'active' or 'paused'")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise wrong_type("description", "a string")
    bidding_type = body.get("bidding_type", "impressions")
    if bidding_type not in BIDDING_TYPES:
        raise invalid("bidding_type", f"'bidding_type' must be one of {', '.join(BIDDING_TYPES)}")
    ces_value = body.get("conversion_event_setting_ids", [])
    if "conversion-id-string-accepted" in mutants and isinstance(ces_value, str):
        ces_value = [ces_value]  # a lenient parser: one id given bare is taken as a one-element list
    ces_ids = _id_list("conversion_event_setting_ids", ces_value)
    check_conversions(bidding_type, ces_ids, mutants)
    mode, feed = _mode(body)
    doc = {
        "name": check_name(body["name"], mutants),
        "description": description,
        "status": status,
        "start_time": check_time("start_time", body.get("start_time"), mutants),
        "end_time": check_time("end_time", body.get("end_time"), mutants),
        "budget": check_budget(body["budget"], mutants),
        "bidding_type": "clicks" if "wrong-bidding-default" in mutants and "bidding_type" not in body else bidding_type,
        "conversion_event_setting_ids": ces_ids,
        "mode": mode,
        "product_feed_id": feed,
        "targeting": check_targeting(body.get("targeting"), minimum, mutants),
    }
    _check_window(doc)
    return doc


def apply_update(doc: dict[str, Any], value: Any, minimum: int, mutants: frozenset[str]) -> dict[str, Any]:
    """The stored document after an update body, or ApiError. Omitted fields are kept."""
    body = _body(value, UPDATE_FIELDS)
    if doc["status"] == "archived" and "archive-reversible" not in mutants:
        raise invalid(None, "the campaign is archived and can no longer be changed", "campaign_archived")
    new = dict(doc)
    if "name" in body:
        new["name"] = check_name(body["name"], mutants)
    if "description" in body:
        if body["description"] is not None and not isinstance(body["description"], str):
            raise wrong_type("description", "a string or null")
        new["description"] = body["description"]
    for key in ("start_time", "end_time"):
        if key in body:
            new[key] = check_time(key, body[key], mutants)
    if "budget" in body:
        # The mutant: an update parses the budget leniently (a fraction truncated), unlike create.
        lenient = mutants | {"budget-fraction-truncated"} if "update-budget-fraction-truncated" in mutants else mutants
        new["budget"] = check_budget(body["budget"], lenient)
    if "status" in body:
        if body["status"] not in ("active", "paused", "archived"):
            raise invalid("status", "'status' must be 'active', 'paused' or 'archived'")
        new["status"] = body["status"]
    if "bidding_type" in body and body["bidding_type"] != doc["bidding_type"]:
        if "bidding-type-mutable" not in mutants:
            raise invalid("bidding_type", "'bidding_type' cannot be changed after creation", "field_immutable")
        if body["bidding_type"] not in BIDDING_TYPES:
            raise invalid("bidding_type", f"'bidding_type' must be one of {', '.join(BIDDING_TYPES)}")
        new["bidding_type"] = body["bidding_type"]
    if "conversion_event_setting_ids" in body:
        ids = _id_list("conversion_event_setting_ids", body["conversion_event_setting_ids"])
        if "conversion-ids-clearable" in mutants and not ids:
            new["conversion_event_setting_ids"] = []  # the mutant: emptying is not taken for a change
        elif ids != doc["conversion_event_setting_ids"]:
            if doc["bidding_type"] == "conversions":
                raise invalid(
                    "conversion_event_setting_ids",
                    "the conversion event of a conversion-optimized campaign cannot be changed",
                    "field_immutable",
                )
            check_conversions(new["bidding_type"], ids, mutants)
            new["conversion_event_setting_ids"] = ids
    for key in ("mode", "product_feed_id"):
        if key in body and body[key] != doc[key]:
            raise invalid(key, f"'{key}' cannot be changed after creation", "field_immutable")
    if "targeting" in body:
        recheck = "audience-eligibility-create-only" not in mutants
        new["targeting"] = check_targeting(body["targeting"], minimum, mutants, eligibility=recheck)
    _check_window(new)
    if "status-update-drops-other-fields" in mutants and "status" in body:
        return {**doc, "status": new["status"]}  # the mutant: an update carrying a status applies the status alone
    return new


def render(row: dict[str, Any]) -> dict[str, Any]:
    doc = row["doc"]
    targeting = doc.get("targeting")
    if targeting is not None:
        targeting = dict(targeting)
        if "locations" in targeting:
            targeting["locations"] = {
                "include": [dict(seeds.LOCATIONS[loc["id"]]) for loc in targeting["locations"]["include"]]
            }
    return {
        "id": row["id"],
        "object": "campaign",
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        **{k: v for k, v in doc.items() if k != "targeting"},
        "targeting": targeting,
    }


def conflict(mutants: frozenset[str] = frozenset()) -> ApiError:
    return ApiError(
        409,
        None if "conflict-code-missing" in mutants else "custom_audience_mutation_conflict",
        "A membership update of a targeted custom audience is in progress; the edit was not applied. "
        "Wait for it to finish, retrieve the campaign and retry if still appropriate.",
        param="targeting",
        type_="invalid_request_error",
    )
