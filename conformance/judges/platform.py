"""Offline judging of platform documents: token-count answers, rate-limit header sets, error bodies, campaigns and
campaign list pages. The rules' shape parts are judged here by the functions the live checks call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from conformance.core._values import is_int
from conformance.host import parse_duration
from conformance.judges._core import Verdict, judged, noted

PAIRS = (
    ("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
)
PROJECT = (
    "x-ratelimit-limit-project-tokens",
    "x-ratelimit-remaining-project-tokens",
    "x-ratelimit-reset-project-tokens",
)


NAME_CHARS = (3, 1000)
MIN_BUDGET_MICROS = 1_000_000
TIME_RANGE = (946_684_800, 4_102_444_800)


def count_answer_problems(body: Any) -> list[str]:
    """TOK-01 on the answer: ``{object: "response.input_tokens", input_tokens: integer ≥ 0}``."""
    if not isinstance(body, Mapping):
        return ["the answer is not a JSON object"]
    problems = []
    if body.get("object") != "response.input_tokens":
        problems.append(f"object is {body.get('object')!r}, expected 'response.input_tokens'")
    value = body.get("input_tokens")
    if not (is_int(value) and value >= 0):
        problems.append(f"input_tokens is {value!r}, expected an integer ≥ 0")
    return problems


def token_count(document: Any) -> list[Verdict]:
    return [judged("TOK-01", count_answer_problems(document))]


# The error.code the contract lists for a status: a 409 and a 503 have one each; a 429 lists `slow_down` for a rate
# raised too quickly and none for a temporary limit or a hard spend limit, so no code is wrong on a 429.
LISTED_CODES: dict[int, str] = {409: "custom_audience_mutation_conflict", 503: "server_is_overloaded"}


def listed_code_problems(status: int, body: Any) -> list[str]:
    """CAMP-15: a status whose error the contract lists carries its listed ``error.code``."""
    listed = LISTED_CODES.get(status)
    if listed is None:
        return []
    error = body.get("error") if isinstance(body, Mapping) else None
    code = error.get("code") if isinstance(error, Mapping) else None
    return [] if code == listed else [f"a {status} carries error.code {code!r}, expected {listed}"]


def platform_error(document: Any, *, status: int | None = None) -> list[Verdict]:
    """An error body, given its HTTP ``status``: the listed ``error.code`` of a 409 or 503 (CAMP-15; other codes and
    body shapes are reported, not judged). TOK-07 is not judged on a body: a refused count is any non-2xx answer."""
    if status is None:
        return [judged("CAMP-15", [], unjudged="the HTTP status (only 409 and 503 list one error.code)")]
    return [judged("CAMP-15", listed_code_problems(status, document))]


def header_values(response: httpx.Response) -> dict[str, str]:
    """The response's headers by lower-case name, a repeated one joined by ", " as ``Headers.get`` answers it. Read
    once per response: each lookup in httpx's ``Headers`` scans and decodes every header, and the ledger looks up a
    dozen names in every answer of a run."""
    return dict(response.headers.items())


def rate_limit_problems(response: httpx.Response | Mapping[str, str]) -> list[str]:
    """RL-01 on one response (or its :func:`header_values`): integers, remaining ≤ limit, reset values are Go
    durations."""
    problems: list[str] = []
    headers = header_values(response) if isinstance(response, httpx.Response) else response
    for group in (*PAIRS, PROJECT):
        limit_name, remaining_name, reset_name = group
        values: dict[str, int] = {}
        for name in (limit_name, remaining_name):
            raw = headers.get(name)
            if raw is None:
                continue
            if not raw.strip().isdigit():
                problems.append(f"{name}: {raw!r} is not a non-negative integer")
            else:
                values[name] = int(raw)
        if limit_name in values and remaining_name in values and values[remaining_name] > values[limit_name]:
            problems.append(f"{remaining_name} {values[remaining_name]} exceeds {limit_name} {values[limit_name]}")
        reset = headers.get(reset_name)
        if reset is not None and parse_duration(reset) is None:
            problems.append(f"{reset_name}: {reset!r} is not duration text like 1s, 6m0s, 20ms")
    return problems


def project_header_problems(response: httpx.Response | Mapping[str, str]) -> list[str]:
    """RL-05's reported form on one response (or its :func:`header_values`): the three project-token headers
    appear together or not at all."""
    headers = header_values(response) if isinstance(response, httpx.Response) else response
    present = [name for name in PROJECT if name in headers]
    if present and len(present) != len(PROJECT):
        return [f"project-token headers without {', '.join(sorted(set(PROJECT) - set(present)))}"]
    return []


def ratelimit_headers(document: Any, *, project_token_limit: bool | None = None) -> list[Verdict]:
    """One response's headers (a JSON object name → value): RL-01, and RL-05 given ``project_token_limit`` (whether
    a project-scoped token limit applies to the key that got them); the project headers not appearing together is
    reported in RL-05's message, not judged."""
    if not isinstance(document, Mapping) or not all(isinstance(v, str) for v in document.values()):
        bad = ["a header set must be a JSON object of string values"]
        return [judged("RL-01", bad), judged("RL-05", bad)]
    response = httpx.Response(200, headers=dict(document))
    present = [name for name in PROJECT if name in response.headers]
    rl05 = judged(
        "RL-05",
        [f"{', '.join(present)} without a project-scoped token limit"]
        if present and project_token_limit is False
        else [],
        unjudged=None
        if project_token_limit is not None
        else "whether a project-scoped token limit applies (context project_token_limit)",
    )
    apart = project_header_problems(response)
    if apart:
        rl05 = noted(rl05, f"reported: {'; '.join(apart)}")
    return [judged("RL-01", rate_limit_problems(response)), rl05]


# ---------------------------------------------------------------------------------------------- campaigns

STATUSES = ("active", "paused", "archived")
BIDDING_TYPES = ("impressions", "clicks", "conversions")


def campaign_shape_problems(campaign: Any, *, listed: bool = False) -> list[str]:
    """CAMP-01 (the live check's function too): every documented field present with its documented type.
    ``conversion_event_setting_ids`` is documented as present in list output (``listed``: a list item); elsewhere
    it is judged only when the campaign carries it."""
    if not isinstance(campaign, dict):
        return [f"the campaign is not a JSON object: {campaign!r:.80}"]
    problems: list[str] = []

    def check(name: str, ok: bool, wanted: str) -> None:
        if name not in campaign:
            problems.append(f"'{name}' is missing")
        elif not ok:
            problems.append(f"'{name}' is {campaign[name]!r:.60}, expected {wanted}")

    value = campaign.get
    check("id", isinstance(value("id"), str) and bool(value("id")), "a non-empty string")
    check("created_at", is_int(value("created_at")), "an integer Unix timestamp")
    check("updated_at", is_int(value("updated_at")), "an integer Unix timestamp")
    check("name", isinstance(value("name"), str), "a string")
    check("description", value("description") is None or isinstance(value("description"), str), "a string or null")
    check("status", value("status") in STATUSES, " / ".join(STATUSES))
    for name in ("start_time", "end_time"):
        check(name, value(name) is None or is_int(value(name)), "an integer or null")
    budget = value("budget")
    check(
        "budget",
        isinstance(budget, dict) and is_int(budget.get("lifetime_spend_limit_micros")),
        "an object with integer lifetime_spend_limit_micros",
    )
    check("bidding_type", value("bidding_type") in BIDDING_TYPES, " / ".join(BIDDING_TYPES))
    ids = value("conversion_event_setting_ids")
    if listed or "conversion_event_setting_ids" in campaign:
        check(
            "conversion_event_setting_ids",
            isinstance(ids, list) and all(isinstance(i, str) for i in ids),
            "an array of strings",
        )
    check("mode", value("mode") is None or isinstance(value("mode"), str), "a string or null")
    # targeting is an object; null is accepted too because an update may clear it.
    check("targeting", value("targeting") is None or isinstance(value("targeting"), dict), "an object")
    return problems


def campaign_bounds(campaign: Mapping[str, Any]) -> dict[str, list[str]]:
    """What a stored campaign shows of the create rules: a name, budget, times or conversion setup the server
    should have refused (CAMP-02, 03, 04, 05, 12)."""
    found: dict[str, list[str]] = {r: [] for r in ("CAMP-02", "CAMP-03", "CAMP-04", "CAMP-05", "CAMP-12")}
    name = campaign.get("name")
    if isinstance(name, str) and not (NAME_CHARS[0] <= len(name) <= NAME_CHARS[1] and name.strip(" ")):
        found["CAMP-02"].append(f"name {name[:40]!r} ({len(name)} characters) is outside 3…1000 or spaces only")
    if campaign.get("status") not in ("active", "paused", "archived"):
        found["CAMP-03"].append(f"status {campaign.get('status')!r} is not active, paused or archived")
    budget = campaign.get("budget")
    micros = budget.get("lifetime_spend_limit_micros") if isinstance(budget, Mapping) else None
    if is_int(micros) and micros < MIN_BUDGET_MICROS:
        found["CAMP-04"].append(f"budget.lifetime_spend_limit_micros {micros} is below 1000000")
    for key in ("start_time", "end_time"):
        value = campaign.get(key)
        if is_int(value) and not TIME_RANGE[0] <= value <= TIME_RANGE[1]:
            found["CAMP-05"].append(f"{key} {value} is outside 946684800…4102444800")
    ids = campaign.get("conversion_event_setting_ids")
    if campaign.get("bidding_type") == "conversions" and not (isinstance(ids, list) and len(ids) == 1):
        found["CAMP-12"].append(f"bidding_type conversions with conversion_event_setting_ids {ids!r} (exactly one)")
    return found


def campaign(document: Any) -> list[Verdict]:
    verdicts = [judged("CAMP-01", campaign_shape_problems(document))]
    bounds = campaign_bounds(document) if isinstance(document, Mapping) else {}
    return verdicts + [judged(rule, problems) for rule, problems in bounds.items()]


def list_page_problems(body: Any, limit: int | None = None) -> list[str]:
    """CAMP-07 on one page: the envelope, first/last ids of the first and last items, at most ``limit`` items."""
    if not isinstance(body, Mapping) or not isinstance(body.get("data"), list):
        return ["not a list envelope ({object: list, data: [...], ...})"]
    data = body["data"]
    ids = [item.get("id") if isinstance(item, Mapping) else None for item in data]
    problems = []
    if not all(isinstance(i, str) for i in ids):
        problems.append("an item has no string id")
    if body.get("object") != "list":
        problems.append(f"object is {body.get('object')!r}, not 'list'")
    if not isinstance(body.get("has_more"), bool):
        problems.append(f"has_more is {body.get('has_more')!r}")
    if data and (body.get("first_id") != ids[0] or body.get("last_id") != ids[-1]):
        problems.append(
            f"first_id/last_id {body.get('first_id')}/{body.get('last_id')} are not the first and last items "
            f"{ids[0]}/{ids[-1]}"
        )
    if limit is not None and len(data) > limit:
        problems.append(f"{len(data)} items exceed the limit {limit}")
    return problems


def campaign_list(document: Any, *, limit: int = 500) -> list[Verdict]:
    """A list page (``limit``: the one requested; 500, the maximum, by default)."""
    items = document.get("data") if isinstance(document, Mapping) else None
    shapes = [
        f"data[{i}]: {'; '.join(p)}"
        for i, item in enumerate(items if isinstance(items, list) else [])
        if (p := campaign_shape_problems(item, listed=True))
    ]
    return [judged("CAMP-07", list_page_problems(document, limit)), judged("CAMP-01", shapes)]
