"""Campaign endpoints: create, bounds, get, list, update, immutable fields, actions, audiences, conflicts, errors
(CAMP-01..07, 09..15; CAMP-08 is in test_pagination.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conformance import expect, fail, hypothesis_profile, needs, observe, rule
from conformance._verdicts import Failure
from conformance.config import Settings
from conformance.host.fields import json_field, json_get
from conformance.suites._cases import Attack, AttackRun, attack_table, cited
from conformance.suites.campaigns.client import COMPARED, CampaignsApi, expect_shape, page
from conformance.suites.platform._keys import BAD_KEYS, KEY_SOURCE, NAMED_KEY_CASES, key_headers
from conformance.suites.platform.client import (
    CLIENT_ERROR,
    describe,
    expect_json_error,
    json_body,
    run_property,
    target_settings,
)
from conformance.validate.platform import error_code_problems

TIME_MIN, TIME_MAX = 946_684_800, 4_102_444_800
BUDGET_MIN = 1_000_000
# Name characters: visible BMP characters (length is the same in code points and UTF-16 units).
NAME_CHARS = st.characters(categories=("L", "N", "P", "S"), max_codepoint=0xFFFF)
SPACES = st.text(st.sampled_from(" \t\n"), min_size=3, max_size=12)
CONVERSION_OPTION = "CONFORMANCE_CAMPAIGNS_CONVERSION_EVENT_SETTING_IDS (two active standard settings)"
CONFLICT_OPTION = "--campaigns-conflict-audience-id or CONFORMANCE_CAMPAIGNS_CONFLICT_AUDIENCE_ID"


def _created(response: Any, what: str) -> dict[str, Any]:
    if response.status_code not in (200, 201):
        fail(f"{what}: expected 200/201, got {describe(response)}")
    body = json_body(response)
    expect_shape(body, what)
    result: dict[str, Any] = body
    return result


def _rejected(response: Any, what: str) -> None:
    expect_json_error(response, CLIENT_ERROR, f"{what} was not rejected with a 4xx JSON error")


CREATE_BODY = "contract platform, Create campaign body"
BOUNDS = "the rule's own bounds"


def _wrong_types(field: str, valid: Any, *, numeric: bool) -> list[Attack]:
    """Each wrong JSON type for one field of the create body (a string field gets numbers, an integer field gets a
    numeric string, a fraction and a boolean), cited by the field's type in the contract's create-body table."""
    source = f"{CREATE_BODY} ({field}: {'integer' if numeric else 'string'})"
    kinds = ["a numeric string", "a fraction", "true", "an array", "an object"] if numeric else []
    kinds = kinds or ["a number", "true", "an array", "an object"]
    return [Attack(f"{field} as {kind}", source) for kind in kinds]


def _wrong_type_value(kind: str, valid: Any) -> Any:
    return {
        "a numeric string": str(valid),
        "a fraction": valid + 0.5 if isinstance(valid, int) else 1.5,
        "a number": 12345,
        "true": True,
        "an array": [valid],
        "an object": {"value": valid},
    }[kind]


def _reject_all(api: CampaignsApi, run: AttackRun, bodies: dict[str, dict[str, Any]]) -> None:
    """Create each body of the run's cases; every one must be refused with a 4xx JSON error."""
    for case, body in bodies.items():
        response = api.create(body)
        problem = None
        if response.status_code in (200, 201):
            problem = f"{case} was accepted ({describe(response)})"
        else:
            try:
                _rejected(response, case)
            except Failure as exc:  # expect_json_error's verdict, kept as this case's problem
                problem = str(exc)
        run.tried_case(case, problem)


def _field_type_bodies(api: CampaignsApi, run: AttackRun, build: Any, valid: dict[str, Any]) -> dict[str, Any]:
    """Bodies for the run's '<field> as <kind>' cases: ``build(field, value)`` makes the create body."""
    bodies: dict[str, Any] = {}
    for attack in run.table:
        field, sep, kind = attack.case.partition(" as ")
        if sep and field in valid:
            bodies[attack.case] = build(field, _wrong_type_value(kind, valid[field]))
    return bodies


def _stored(api: CampaignsApi, campaign_id: str) -> dict[str, Any]:
    response = api.get(campaign_id)
    if response.status_code != 200:
        fail(f"reading campaign {campaign_id} back failed: {describe(response)}")
    result: dict[str, Any] = json_field(response, type=dict, what=f"reading campaign {campaign_id} back")
    return result


def _bounded(settings: Settings, cap: int) -> Any:
    """Fewer examples for properties whose accepted cases create campaigns."""
    return target_settings(max_examples=min(hypothesis_profile().max_examples, cap))


@rule("CAMP-01")
def test_create_returns_the_campaign(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    location = conformance_settings.get("campaigns_location_id")
    body = campaigns_api.body(
        description="created by the conformance harness",
        status="active",
        start_time=1_893_456_000,
        end_time=1_924_992_000,
        budget={"lifetime_spend_limit_micros": 7_500_000},
    )
    if location:
        body["targeting"] = {"locations": {"include": [{"id": location}]}}
    campaign = _created(campaigns_api.create(body), "create with every simple field")
    for name in ("name", "description", "status", "start_time", "end_time", "budget"):
        expect(campaign.get(name) == body[name], f"'{name}' came back as {campaign.get(name)!r}, sent {body[name]!r}")
    expect(
        campaign.get("bidding_type") == "impressions",
        f"bidding_type defaults to {campaign.get('bidding_type')!r}, expected 'impressions'",
    )
    expect(
        campaign.get("conversion_event_setting_ids") == [],
        f"conversion_event_setting_ids defaults to {campaign.get('conversion_event_setting_ids')!r}, expected []",
    )
    if location:
        include = json_get(campaign, "targeting", "locations", "include")
        if not isinstance(include, list) or len(include) != 1:
            fail(f"the targeted location came back as {include!r}")
        loc = include[0]
        expect(
            isinstance(loc, dict)
            and loc.get("id") == location
            and loc.get("type") in ("region", "dma")
            and all(isinstance(loc.get(k), str) for k in ("country_code", "name", "region_code")),
            f"a returned location needs id, type (region/dma), country_code, name, region_code: {loc!r}",
        )
    else:
        observe("location targeting not checked (no --campaigns-location-id)")


CAMP02_BOUNDS = ("a 2-character name", "a 1001-character name", "an empty name", "a whitespace-only name")
CAMP02 = attack_table(
    "CAMP-02",
    *(Attack(case, f"CAMP-02 ({BOUNDS}); {CREATE_BODY} (name)", named=True) for case in CAMP02_BOUNDS),
    *_wrong_types("name", "abc", numeric=False),
)


@rule("CAMP-02")
def test_name_bounds(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    run = AttackRun.of("CAMP-02")
    bodies = _field_type_bodies(
        campaigns_api, run, lambda f, v: campaigns_api.body(**{f: v}), {"name": campaigns_api.name("n")}
    )
    _reject_all(campaigns_api, run, bodies)
    expect(not run.problems, "; ".join(run.problems))

    @_bounded(conformance_settings, 8)
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        shortest = data.draw(st.text(NAME_CHARS, min_size=3, max_size=3), label="3 characters")
        prefix = campaigns_api.name("n")
        longest = prefix + data.draw(
            st.text(NAME_CHARS, min_size=1000 - len(prefix), max_size=1000 - len(prefix)), label="1000 characters"
        )
        for name in (shortest, longest):
            campaign = _created(campaigns_api.create(campaigns_api.body(name=name)), f"a {len(name)}-character name")
            expect(campaign.get("name") == name, f"a {len(name)}-character name came back changed")
        too_short = data.draw(st.text(NAME_CHARS, min_size=2, max_size=2), label="2 characters")
        too_long = longest + data.draw(NAME_CHARS, label="1001st character")
        blank = data.draw(SPACES, label="whitespace only")
        for what, name in (
            (f"the 2-character name {too_short!r}", too_short),
            ("a 1001-character name", too_long),
            ("an empty name", ""),
            (f"the whitespace-only name {blank!r}", blank),
        ):
            _rejected(campaigns_api.create(campaigns_api.body(name=name)), what)

    run_property(prop)
    for case in CAMP02_BOUNDS:  # each drawn and refused on every example of the property
        run.tried_case(case)
    run.conclude()


STATUS_SOURCE = f"CAMP-03; {CREATE_BODY} (status: string, required, active or paused)"
CAMP03_BODIES: dict[str, Any] = {
    "status archived": "archived",
    "status deleted (another value)": "deleted",
    "an empty status": "",
    "status null": None,
    "status as a number": 1,
    "status as an array": ["active"],
    "status in another case (Active)": "Active",
    "status with a trailing space": "active ",
}
CAMP03_MISSING = ("name", "status", "budget")
CAMP03 = attack_table(
    "CAMP-03",
    *(Attack(case, STATUS_SOURCE, named=case == "status archived") for case in CAMP03_BODIES),
    *(Attack(f"a create without '{f}'", f"CAMP-03; {CREATE_BODY} ({f}: required)", named=True) for f in CAMP03_MISSING),
)


@rule("CAMP-03")
def test_status_on_create_and_required_fields(campaigns_api: CampaignsApi) -> None:
    for status in ("active", "paused"):
        campaign = _created(campaigns_api.create(campaigns_api.body(status=status)), f"status {status}")
        expect(campaign.get("status") == status, f"created with {status}, got {campaign.get('status')!r}")
    run = AttackRun.of("CAMP-03")
    bodies = {case: campaigns_api.body(status=value) for case, value in CAMP03_BODIES.items()}
    bodies.update({f"a create without '{f}'": campaigns_api.body(**{f: ...}) for f in CAMP03_MISSING})
    _reject_all(campaigns_api, run, bodies)
    run.conclude()


CAMP04_SOURCE = (
    f"CAMP-04 ({BOUNDS}); {CREATE_BODY} (budget.lifetime_spend_limit_micros: integer, required, min 1000000)"
)
CAMP04 = attack_table(
    "CAMP-04",
    *cited(
        CAMP04_SOURCE, "a budget of 999,999 micros", "a create without budget", "an empty budget object", named=True
    ),
    Attack("budget as a number", f"{CREATE_BODY} (budget: object)"),
    *_wrong_types("lifetime_spend_limit_micros", BUDGET_MIN, numeric=True),
)


@rule("CAMP-04")
def test_budget_minimum(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    def budget(micros: Any) -> dict[str, Any]:
        return campaigns_api.body(budget={"lifetime_spend_limit_micros": micros})

    campaign = _created(campaigns_api.create(budget(BUDGET_MIN)), "a budget of exactly 1,000,000 micros")
    expect(campaign["budget"].get("lifetime_spend_limit_micros") == BUDGET_MIN, "the budget came back changed")
    run = AttackRun.of("CAMP-04")
    bodies = {
        "a budget of 999,999 micros": budget(BUDGET_MIN - 1),
        "a create without budget": campaigns_api.body(budget=...),
        "an empty budget object": campaigns_api.body(budget={}),
        "budget as a number": campaigns_api.body(budget=BUDGET_MIN),
        **_field_type_bodies(campaigns_api, run, lambda f, v: budget(v), {"lifetime_spend_limit_micros": BUDGET_MIN}),
    }
    _reject_all(campaigns_api, run, bodies)
    expect(not run.problems, "; ".join(run.problems))

    @_bounded(conformance_settings, 8)
    @given(above=st.integers(BUDGET_MIN, 10**12), below=st.integers(-(10**12), BUDGET_MIN - 1))
    def prop(above: int, below: int) -> None:
        _created(campaigns_api.create(budget(above)), f"a budget of {above} micros")
        _rejected(campaigns_api.create(budget(below)), f"a budget of {below} micros")

    run_property(prop)
    run.conclude()


CAMP05_SOURCE = f"CAMP-05 ({BOUNDS}); {CREATE_BODY} (start_time, end_time: 946684800 to 4102444800)"
CAMP05 = attack_table(
    "CAMP-05",
    *(
        Attack(f"{field} {value}", CAMP05_SOURCE, named=True)
        for field in ("start_time", "end_time")
        for value in (TIME_MIN - 1, TIME_MAX + 1)
    ),
    *(
        a
        for field in ("start_time", "end_time")
        for a in _wrong_types(field, TIME_MIN, numeric=True)
        if a.case != f"{field} as an object"
    ),
)


@rule("CAMP-05")
def test_timestamp_bounds(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    for field in ("start_time", "end_time"):
        for value in (TIME_MIN, TIME_MAX):
            campaign = _created(campaigns_api.create(campaigns_api.body(**{field: value})), f"{field} {value}")
            expect(campaign.get(field) == value, f"{field} {value} came back as {campaign.get(field)!r}")
    run = AttackRun.of("CAMP-05")
    bodies = {
        f"{field} {value}": campaigns_api.body(**{field: value})
        for field in ("start_time", "end_time")
        for value in (TIME_MIN - 1, TIME_MAX + 1)
    }
    build = lambda f, v: campaigns_api.body(**{f: v})  # noqa: E731
    bodies.update(_field_type_bodies(campaigns_api, run, build, {"start_time": TIME_MIN, "end_time": TIME_MIN}))
    _reject_all(campaigns_api, run, bodies)
    expect(not run.problems, "; ".join(run.problems))

    @_bounded(conformance_settings, 6)
    @given(
        field=st.sampled_from(["start_time", "end_time"]),
        inside=st.integers(TIME_MIN, TIME_MAX),
        outside=st.one_of(st.integers(max_value=TIME_MIN - 1), st.integers(min_value=TIME_MAX + 1)),
    )
    def prop(field: str, inside: int, outside: int) -> None:
        _created(campaigns_api.create(campaigns_api.body(**{field: inside})), f"{field} {inside}")
        _rejected(campaigns_api.create(campaigns_api.body(**{field: outside})), f"{field} {outside}")

    run_property(prop)
    run.conclude()


GET_BY_ID = "CAMP-06; contract platform, Endpoints (GET /v1/campaigns/{campaign_id})"
CAMP06 = attack_table(
    "CAMP-06",
    Attack("an unknown id of the stored ids' shape", GET_BY_ID, named=True),
    Attack("a stored id with its last character changed", f"{GET_BY_ID}: ids are matched whole"),
    Attack("a stored id with characters appended", f"{GET_BY_ID}: ids are matched whole"),
    Attack("a stored id cut short by one character", f"{GET_BY_ID}: ids are matched whole"),
    Attack("a numeric id", f"{GET_BY_ID}: an id of another format is unknown too"),
    Attack("a 300-character id", f"{GET_BY_ID}: an id of another format is unknown too"),
    Attack("a percent-encoded non-ASCII id", f"{GET_BY_ID}: an id of another format is unknown too"),
)


def _camp06_ids(stored_id: str, run_id: str) -> dict[str, str]:
    """The unknown ids of the CAMP-06 table, derived from a stored id (so the near misses are near)."""
    last = stored_id[-1]
    prefix = stored_id.rstrip("0123456789abcdefABCDEF") or "cmp_"
    width = max(len(stored_id) - len(prefix), 8)
    unknown = prefix + (run_id.encode().hex() + "0" * width)[:width]
    if unknown == stored_id:
        unknown = unknown[:-1] + ("1" if unknown[-1] == "0" else "0")
    return {
        "an unknown id of the stored ids' shape": unknown,
        "a stored id with its last character changed": stored_id[:-1] + ("1" if last == "0" else "0"),
        "a stored id with characters appended": stored_id + "00",
        "a stored id cut short by one character": stored_id[:-1],
        "a numeric id": "1234567890",
        "a 300-character id": (prefix + "0" * 300)[:300],
        "a percent-encoded non-ASCII id": "cmp_%C3%A9t%C3%A9",
    }


@rule("CAMP-06")
def test_get_by_id(campaigns_api: CampaignsApi) -> None:
    created = campaigns_api.create_ok(description="read me back")
    stored = _stored(campaigns_api, created["id"])
    expect_shape(stored, "GET by id")
    differing = [k for k in created if k != "updated_at" and stored.get(k) != created[k]]
    expect(not differing, f"GET differs from the created campaign in {differing}")
    run = AttackRun.of("CAMP-06")
    for case, unknown in _camp06_ids(created["id"], campaigns_api.run_id).items():
        with run.attempt(case):
            response = campaigns_api.get(unknown)
            body = json_body(response)
            if response.status_code == 200 and isinstance(body, dict) and body.get("id") == created["id"]:
                fail(f"{case} ({unknown[:40]}) returned the stored campaign {created['id']}")
            expect_json_error(response, (404,), f"{case} ({unknown[:40]})")
    run.conclude()


LIST_LIMIT = "CAMP-07; contract platform, List campaigns (limit 1 to 500)"
CAMP07 = attack_table(
    "CAMP-07",
    Attack("limit=0", f"{LIST_LIMIT}: one below the minimum", named=True),
    Attack("limit=501", f"{LIST_LIMIT}: one above the maximum", named=True),
    Attack("limit=-1", LIST_LIMIT),
    Attack("limit=ten", f"{LIST_LIMIT}: not an integer"),
    Attack("limit=1.5", f"{LIST_LIMIT}: a fraction, not an integer"),
    Attack("limit=", f"{LIST_LIMIT}: empty, not an integer"),
)


@rule("CAMP-07")
def test_list_envelope_and_limit(campaigns_api: CampaignsApi) -> None:
    existing = page(campaigns_api, limit=21)
    for _ in range(21 - len(existing["data"])):
        campaigns_api.create_ok()  # enough campaigns to see the default page size
    default = page(campaigns_api)
    expect(len(default["data"]) == 20, f"the default page has {len(default['data'])} items, expected 20")
    expect(default["has_more"] is True, "21 or more campaigns exist, yet the default page says has_more false")
    one = page(campaigns_api, limit=1)
    expect(len(one["data"]) == 1 and one["has_more"] is True, f"limit=1 returned {len(one['data'])} items")
    everything = page(campaigns_api, limit=500)  # page() checks it holds at most 500
    expect(len(everything["data"]) >= 21, f"limit=500 returned only {len(everything['data'])} of 21+ campaigns")
    run = AttackRun.of("CAMP-07")
    for attack in run.table:
        limit = attack.case.removeprefix("limit=")
        response = campaigns_api.list(limit=limit)
        try:
            _rejected(response, attack.case)
            run.tried_case(attack.case)
        except Failure as exc:
            run.tried_case(attack.case, str(exc))
    run.conclude()


UPDATE = "CAMP-09; contract platform, Endpoints (update is POST only; PATCH and PUT are not used)"
WHOLE_BUDGET = "CAMP-09; contract platform, Update campaign body (sending budget requires the full budget object)"
CAMP09_METHODS = {
    "PATCH with a whole body": ("PATCH", True),
    "PUT with a whole body": ("PUT", True),
    "PATCH with only a name": ("PATCH", False),
    "PUT with only a name": ("PUT", False),
}
CAMP09_BUDGETS: dict[str, Any] = {
    "an empty budget object": {},
    "budget null": None,
    "budget as a number": BUDGET_MIN,
    "lifetime_spend_limit_micros as a numeric string": {"lifetime_spend_limit_micros": str(BUDGET_MIN)},
    "lifetime_spend_limit_micros as a fraction": {"lifetime_spend_limit_micros": BUDGET_MIN + 0.5},
}
CAMP09 = attack_table(
    "CAMP-09",
    *(Attack(case, UPDATE, named=case.endswith("whole body")) for case in CAMP09_METHODS),
    *(
        Attack(f"an update with {case}", WHOLE_BUDGET, named=case == "an empty budget object")
        for case in CAMP09_BUDGETS
    ),
)


@rule("CAMP-09")
def test_update_by_post_only(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    location = conformance_settings.get("campaigns_location_id")
    fields: dict[str, Any] = {"description": "before", "start_time": 1_900_000_000, "end_time": 1_950_000_000}
    if location:
        fields["targeting"] = {"locations": {"include": [{"id": location}]}}
    original = campaigns_api.create_ok(**fields)
    cid = original["id"]
    run = AttackRun.of("CAMP-09")
    for case, (method, whole) in CAMP09_METHODS.items():
        body = {**campaigns_api.body(), "name": f"{method} name"} if whole else {"name": f"{method} name"}
        with run.attempt(case):
            response = campaigns_api.send(method, f"/{cid}", json=body)
            expect(400 <= response.status_code < 500, f"{case} was not refused: {describe(response)}")
            expect(_stored(campaigns_api, cid).get("name") == original.get("name"), f"{case} changed the campaign")
    expect(not run.problems, "; ".join(run.problems) + f" ({len(run.tried)} cases tried)")
    renamed = campaigns_api.name("renamed")
    response = campaigns_api.update(cid, {"name": renamed})
    expect(response.status_code == 200, f"an update by POST failed: {describe(response)}")
    updated = json_body(response)
    expect_shape(updated, "the updated campaign")
    expect(updated.get("name") == renamed, f"the name was not updated: {updated.get('name')!r}")
    changed = [k for k in (*COMPARED, "targeting") if k != "name" and updated.get(k) != original.get(k)]
    expect(not changed, f"fields omitted from the update changed: {changed}")
    expect(updated["updated_at"] >= json_field(original, "updated_at", type=int), "updated_at went back")
    for case, budget in CAMP09_BUDGETS.items():
        with run.attempt(f"an update with {case}"):
            _rejected(campaigns_api.update(cid, {"budget": budget}), f"an update with {case}")
            kept = _stored(campaigns_api, cid).get("budget")
            expect(kept == original.get("budget"), f"a refused update with {case} changed the budget to {kept!r}")
    expect(not run.problems, "; ".join(run.problems) + f" ({len(run.tried)} cases tried)")
    cleared = campaigns_api.update(cid, {"description": None, "start_time": None, "end_time": None, "targeting": None})
    expect(cleared.status_code == 200, f"clearing with null failed: {describe(cleared)}")
    stored = _stored(campaigns_api, cid)
    for name in ("description", "start_time", "end_time"):
        expect(stored.get(name) is None, f"'{name}' was not cleared by null: {stored.get(name)!r}")
    expect(not stored.get("targeting"), f"targeting was not cleared by null: {stored.get('targeting')!r}")
    expect(json_field(stored, "updated_at", type=int) >= updated["updated_at"], "updated_at went back")
    run.conclude()


IMMUTABLE = "CAMP-10; contract platform, Create campaign body rule 4 and Update campaign body"
CAMP10 = attack_table(
    "CAMP-10",
    Attack("bidding_type impressions to clicks", f"{IMMUTABLE} (bidding_type cannot be updated)", named=True),
    Attack("bidding_type impressions to conversions with one setting", f"{IMMUTABLE} (bidding_type cannot be updated)"),
    Attack("bidding_type conversions to impressions", f"{IMMUTABLE} (bidding_type cannot be updated)", named=True),
    Attack("bidding_type conversions to clicks", f"{IMMUTABLE} (bidding_type cannot be updated)"),
    Attack("the conversion setting replaced by another", f"{IMMUTABLE} (the selected conversion event)", named=True),
    Attack("the conversion setting list emptied", f"{IMMUTABLE} (the selected conversion event)"),
    Attack("a second conversion setting added", f"{IMMUTABLE} (the selected conversion event)"),
    Attack("conversion_event_setting_ids null", f"{IMMUTABLE} (the selected conversion event)"),
)


def _kept(
    campaigns_api: CampaignsApi, run: AttackRun, case: str, campaign: dict[str, Any], body: dict[str, Any]
) -> None:
    """Send the update of ``case``: bidding_type and conversion_event_setting_ids must come back and stay as
    created (a refusal or an answer that keeps them)."""
    keys = ("bidding_type", "conversion_event_setting_ids")
    with run.attempt(case):
        response = campaigns_api.update(campaign["id"], body)
        answer = json_body(response)
        if response.status_code < 300 and isinstance(answer, dict):
            shown = {k: answer.get(k) for k in keys if answer.get(k) != campaign.get(k)}
            expect(not shown, f"{case}: the update answered {shown} ({response.status_code})")
        stored = _stored(campaigns_api, campaign["id"])
        changed = {k: stored.get(k) for k in keys if stored.get(k) != campaign.get(k)}
        expect(not changed, f"{case} changed {changed} ({response.status_code})")


@rule("CAMP-10")
def test_bidding_type_and_conversion_event_immutable(
    campaigns_api: CampaignsApi, conformance_settings: Settings
) -> None:
    run = AttackRun.of("CAMP-10")
    ids = list(conformance_settings.get("campaigns_conversion_event_setting_ids") or [])
    campaign = campaigns_api.create_ok(bidding_type="impressions")
    _kept(campaigns_api, run, "bidding_type impressions to clicks", campaign, {"bidding_type": "clicks"})
    if len(ids) < 2:
        for attack in run.table[1:]:
            run.not_tried(attack.case, f"needs two conversion event settings ({CONVERSION_OPTION})")
        run.conclude(CONVERSION_OPTION)
    _kept(
        campaigns_api,
        run,
        "bidding_type impressions to conversions with one setting",
        campaign,
        {"bidding_type": "conversions", "conversion_event_setting_ids": ids[:1]},
    )
    optimized = _created(
        campaigns_api.create(campaigns_api.body(bidding_type="conversions", conversion_event_setting_ids=[ids[0]])),
        "a conversion-optimized campaign",
    )
    updates: dict[str, dict[str, Any]] = {
        "bidding_type conversions to impressions": {"bidding_type": "impressions"},
        "bidding_type conversions to clicks": {"bidding_type": "clicks"},
        "the conversion setting replaced by another": {"conversion_event_setting_ids": [ids[1]]},
        "the conversion setting list emptied": {"conversion_event_setting_ids": []},
        "a second conversion setting added": {"conversion_event_setting_ids": ids[:2]},
        "conversion_event_setting_ids null": {"conversion_event_setting_ids": None},
    }
    for case, body in updates.items():
        _kept(campaigns_api, run, case, optimized, body)
    run.conclude(CONVERSION_OPTION)


FINAL = "CAMP-11; contract platform, States and transitions (archive: not reversible)"
CAMP11_ATTEMPTS: dict[str, tuple[str, dict[str, Any] | None]] = {  # what -> (action, update body)
    "activate": ("activate", None),
    "pause": ("pause", None),
    "an update to active": ("", {"status": "active"}),
    "an update to paused": ("", {"status": "paused"}),
    "an update to active with a new name": ("", {"status": "active", "name": "unarchived"}),
}
CAMP11 = attack_table(
    "CAMP-11",
    *(Attack(f"{what} after archive", FINAL, named=True) for what in CAMP11_ATTEMPTS),
    *(
        Attack(f"{what} after an update to archived", f"{FINAL}; Update campaign body (status accepts archived)")
        for what in CAMP11_ATTEMPTS
    ),
)


def _stays_archived(campaigns_api: CampaignsApi, run: AttackRun, cid: str, how: str) -> None:
    """Every action and status update of the table on the archived campaign ``cid``: none may leave archived."""
    for what, (action, body) in CAMP11_ATTEMPTS.items():
        case = f"{what} after {how}"
        with run.attempt(case):
            response = campaigns_api.action(cid, action) if body is None else campaigns_api.update(cid, body)
            answer = json_body(response)
            if response.status_code < 300 and isinstance(answer, dict):
                status = answer.get("status")
                expect(status == "archived", f"{case} returned status {status!r}")
            stored = _stored(campaigns_api, cid).get("status")
            expect(stored == "archived", f"{case} took the campaign out of archived (now {stored!r})")


@rule("CAMP-11")
def test_actions_and_archived_is_final(campaigns_api: CampaignsApi) -> None:
    campaign = campaigns_api.create_ok(status="active")
    cid = campaign["id"]
    for action, status in (("pause", "paused"), ("activate", "active"), ("pause", "paused"), ("archive", "archived")):
        response = campaigns_api.action(cid, action)
        expect(response.status_code == 200, f"{action} failed: {describe(response)}")
        body = json_body(response)
        expect_shape(body, f"the answer to {action}")
        expect(body.get("id") == cid, f"{action} returned another campaign")
        expect(body.get("status") == status, f"{action} returned status {body.get('status')!r}, expected {status}")
    run = AttackRun.of("CAMP-11")
    _stays_archived(campaigns_api, run, cid, "archive")
    by_update = campaigns_api.create_ok(status="paused")["id"]
    response = campaigns_api.update(by_update, {"status": "archived"})
    expect(response.status_code == 200, f"an update to archived failed: {describe(response)}")
    expect(_stored(campaigns_api, by_update).get("status") == "archived", "an update to archived did not archive")
    _stays_archived(campaigns_api, run, by_update, "an update to archived")
    run.conclude()


CONVERSIONS = f"CAMP-12; {CREATE_BODY} (conversion_event_setting_ids: string[], exactly one with conversions)"
CAMP12 = attack_table(
    "CAMP-12",
    *cited(CONVERSIONS, "no conversion_event_setting_ids", "an empty list", "two settings", named=True),
    Attack("the same setting twice", f"{CONVERSIONS}: two entries are not exactly one"),
    *cited(
        f"{CREATE_BODY} (conversion_event_setting_ids: string[])",
        "the setting id as a bare string",
        "a list holding a number",
    ),
    Attack("null", f"{CREATE_BODY} (conversion_event_setting_ids: string[]); CAMP-12 (zero rejected)"),
    Attack("an unknown setting id", f"{CREATE_BODY} (an active standard event setting of this account)"),
)


@rule("CAMP-12")
def test_conversion_bidding_needs_one_setting(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    ids = list(conformance_settings.get("campaigns_conversion_event_setting_ids") or [])
    run = AttackRun.of("CAMP-12")

    def conversions(**fields: Any) -> dict[str, Any]:
        return campaigns_api.body(bidding_type="conversions", **fields)

    bodies: dict[str, dict[str, Any]] = {
        "no conversion_event_setting_ids": conversions(),
        "an empty list": conversions(conversion_event_setting_ids=[]),
        "a list holding a number": conversions(conversion_event_setting_ids=[12345]),
        "null": conversions(conversion_event_setting_ids=None),
        "an unknown setting id": conversions(conversion_event_setting_ids=[f"ces_{campaigns_api.run_id}_unknown"]),
    }
    if ids:
        bodies["the same setting twice"] = conversions(conversion_event_setting_ids=[ids[0], ids[0]])
        bodies["the setting id as a bare string"] = conversions(conversion_event_setting_ids=ids[0])
    else:
        for case in ("the same setting twice", "the setting id as a bare string"):
            run.not_tried(case, f"needs a conversion event setting ({CONVERSION_OPTION})")
    if len(ids) >= 2:
        bodies["two settings"] = conversions(conversion_event_setting_ids=ids[:2])
    else:
        run.not_tried("two settings", f"needs two conversion event settings ({CONVERSION_OPTION})")
    _reject_all(campaigns_api, run, bodies)
    expect(not run.problems, "; ".join(run.problems) + f" ({len(run.tried)} cases tried)")
    if len(ids) < 2:
        run.conclude(CONVERSION_OPTION)  # skips: the rule names two settings
    campaign = _created(
        campaigns_api.create(conversions(conversion_event_setting_ids=ids[:1])),
        "bidding_type conversions with one conversion event setting",
    )
    expect(
        campaign.get("bidding_type") == "conversions" and campaign.get("conversion_event_setting_ids") == ids[:1],
        f"the conversion campaign came back as {campaign.get('bidding_type')!r} / "
        f"{campaign.get('conversion_event_setting_ids')!r}",
    )
    run.conclude(CONVERSION_OPTION)


def _audience_ids(campaigns_api: CampaignsApi, use: str) -> list[str]:
    response = campaigns_api.request(
        "GET", campaigns_api.target.url("/v1/custom_audiences"), params={"intended_use": use}
    )
    expect(response.status_code == 200, f"listing audiences for {use} failed: {describe(response)}")
    body = json_body(response)
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or not all(isinstance(a, dict) and isinstance(a.get("id"), str) for a in data):
        fail(f"the {use} audience list is not {{data: [{{id, ...}}]}}: {describe(response)}")
    return [a["id"] for a in data]


def _audiences(**sides: list[str]) -> dict[str, Any]:
    return {key: {"ids": ids} for key, ids in sides.items()}


AUDIENCES = "CAMP-13; contract platform, Create campaign body (targeting audiences) and rule 2"
LISTING = "CAMP-13; contract platform, Endpoints (GET /v1/custom_audiences: intended_use inclusion or exclusion)"
RECHECK = "contract platform, Update campaign body (audience eligibility is checked again when targeting is saved)"
CAMP13_USES = {"intended_use=everything": "everything", "intended_use=Inclusion": "Inclusion", "intended_use=": ""}
CAMP13 = attack_table(
    "CAMP-13",
    *(Attack(case, LISTING, named=case == "intended_use=everything") for case in CAMP13_USES),
    Attack("a non-includable audience included on create", f"{AUDIENCES} (eligible for inclusion)"),
    Attack("a non-includable audience beside an includable one", f"{AUDIENCES} (eligible for inclusion)"),
    Attack("a non-includable audience included by an update", f"{AUDIENCES}; {RECHECK}"),
    Attack("an unknown audience included", f"{AUDIENCES} (ready audiences eligible for inclusion)"),
    Attack("an unknown audience excluded", f"{AUDIENCES} (ready audiences eligible for exclusion)"),
    Attack("the same audience on both sides on create", f"{AUDIENCES} (the same id on both sides)", named=True),
    Attack("the same audience on both sides by an update", f"{AUDIENCES}; {RECHECK}"),
)


@rule("CAMP-13")
def test_custom_audience_eligibility(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    conflict = conformance_settings.get("campaigns_conflict_audience_id")
    run = AttackRun.of("CAMP-13")
    listing = campaigns_api.target.url("/v1/custom_audiences")
    for case, use in CAMP13_USES.items():
        with run.attempt(case):
            _rejected(campaigns_api.request("GET", listing, params={"intended_use": use}), case)
    expect(not run.problems, "; ".join(run.problems) + f" ({len(run.tried)} cases tried)")
    inclusion = [a for a in _audience_ids(campaigns_api, "inclusion") if a != conflict]
    exclusion = [a for a in _audience_ids(campaigns_api, "exclusion") if a != conflict]
    if not inclusion or not exclusion:
        needs("custom audiences usable for inclusion and for exclusion in the ad account")
    included = _created(
        campaigns_api.create(campaigns_api.body(targeting=_audiences(custom_audiences=inclusion[:1]))),
        "a campaign including an audience listed for inclusion",
    )
    expect(
        json_get(included, "targeting", "custom_audiences", "ids") == inclusion[:1],
        f"the included audience came back as {included.get('targeting')!r}",
    )
    exclusion_only = _created(
        campaigns_api.create(campaigns_api.body(targeting=_audiences(excluded_custom_audiences=exclusion[:1]))),
        "an exclusion-only campaign",
    )
    targeting = exclusion_only.get("targeting") or {}
    expect(
        targeting.get("custom_audiences") is None,
        f"an exclusion-only campaign carries custom_audiences: {targeting.get('custom_audiences')!r}",
    )
    unknown = f"aud_{campaigns_api.run_id}_unknown"
    bodies: dict[str, dict[str, Any]] = {
        "an unknown audience included": campaigns_api.body(targeting=_audiences(custom_audiences=[unknown])),
        "an unknown audience excluded": campaigns_api.body(targeting=_audiences(excluded_custom_audiences=[unknown])),
        "the same audience on both sides on create": campaigns_api.body(
            targeting=_audiences(custom_audiences=inclusion[:1], excluded_custom_audiences=inclusion[:1])
        ),
    }
    not_includable = [a for a in exclusion if a not in inclusion]
    if not_includable:
        bodies["a non-includable audience included on create"] = campaigns_api.body(
            targeting=_audiences(custom_audiences=not_includable[:1])
        )
        bodies["a non-includable audience beside an includable one"] = campaigns_api.body(
            targeting=_audiences(custom_audiences=[inclusion[0], not_includable[0]])
        )
    _reject_all(campaigns_api, run, bodies)
    updates = {"the same audience on both sides by an update": inclusion[:1]}
    if not_includable:
        updates["a non-includable audience included by an update"] = not_includable[:1]
    for case, ids in updates.items():
        excluded = ids if case.startswith("the same") else []
        targeting_body = _audiences(
            custom_audiences=ids, **({"excluded_custom_audiences": excluded} if excluded else {})
        )
        with run.attempt(case):
            _rejected(campaigns_api.update(included["id"], {"targeting": targeting_body}), case)
            kept = _stored(campaigns_api, included["id"]).get("targeting")
            expect(kept == included.get("targeting"), f"a refused update ({case}) changed targeting to {kept!r}")
    if not not_includable:
        for case in (
            "a non-includable audience included on create",
            "a non-includable audience beside an includable one",
            "a non-includable audience included by an update",
        ):
            run.not_tried(case, "every excludable audience of the account is also includable")
    run.conclude()


CONFLICT = "CAMP-14; contract platform, Errors (409 custom_audience_mutation_conflict: the edit is not applied)"
CAMP14 = attack_table(
    "CAMP-14",
    Attack("the conflict audience included by an update with a new name", CONFLICT, named=True),
    Attack("the conflict audience excluded by an update with a new name", CONFLICT),
    Attack("the conflict audience included by an update with a new budget and description", CONFLICT),
)


@rule("CAMP-14")
def test_audience_conflict_leaves_campaign_unchanged(
    campaigns_api: CampaignsApi, conformance_settings: Settings
) -> None:
    conflict = conformance_settings.get("campaigns_conflict_audience_id")
    if not conflict:
        needs("a conflict trigger (an audience whose membership update is in progress)", CONFLICT_OPTION)
    run = AttackRun.of("CAMP-14")
    updates: dict[str, dict[str, Any]] = {
        "the conflict audience included by an update with a new name": {
            "name": campaigns_api.name("conflicted"),
            "targeting": _audiences(custom_audiences=[conflict]),
        },
        "the conflict audience excluded by an update with a new name": {
            "name": campaigns_api.name("conflicted"),
            "targeting": _audiences(excluded_custom_audiences=[conflict]),
        },
        "the conflict audience included by an update with a new budget and description": {
            "description": "conflicted",
            "budget": {"lifetime_spend_limit_micros": 2 * BUDGET_MIN},
            "targeting": _audiences(custom_audiences=[conflict]),
        },
    }
    for case, body in updates.items():
        before = campaigns_api.create_ok()
        with run.attempt(case):
            error = expect_json_error(campaigns_api.update(before["id"], body), (409,), case)
            expect(
                error.get("code") == "custom_audience_mutation_conflict",
                f"{case}: the 409 has code {error.get('code')!r}, expected custom_audience_mutation_conflict",
            )
            after = _stored(campaigns_api, before["id"])
            changed = [k for k in (*COMPARED, "targeting", "updated_at") if after.get(k) != before.get(k)]
            expect(not changed, f"{case}: the refused edit was applied anyway: {changed} changed")
    run.conclude()


CAMP15 = attack_table(
    "CAMP-15",
    *(Attack(case, f"CAMP-15 ({KEY_SOURCE})", named=case in NAMED_KEY_CASES) for case in BAD_KEYS),
    Attack("a Basic header of another credential", f"CAMP-15 ({KEY_SOURCE})", named=True),
)


@rule("CAMP-15")
def test_auth_and_error_bodies(campaigns_api: CampaignsApi) -> None:
    run = AttackRun.of("CAMP-15")
    cases = {
        case: key_headers(case, campaigns_api.target.api_key, campaigns_api.http.redactor.add_secret)
        for case in BAD_KEYS
    }
    cases["a Basic header of another credential"] = {"Authorization": "Basic YXBpOmtleQ=="}
    for case, headers in cases.items():
        if headers is None:
            run.not_tried(case, "no platform API key configured to alter")
            continue
        with run.attempt(case):  # listing and creating: each must be refused
            expect_json_error(campaigns_api.send("GET", headers=headers), (401,), f"listing with {case}")
            response = campaigns_api.send("POST", json=campaigns_api.body(), headers=headers)
            expect_json_error(response, (401,), f"creating with {case}")
    expect(not run.problems, "; ".join(run.problems) + f" ({len(run.tried)} cases tried)")
    errors = {
        "an unknown campaign (404)": campaigns_api.get(f"cmp_{campaigns_api.run_id}_unknown"),
        "an invalid body (400)": campaigns_api.create(campaigns_api.body(name="")),
        "an invalid limit (400)": campaigns_api.list(limit="0"),
    }
    codes = {}
    for what, response in errors.items():
        error = expect_json_error(response, CLIENT_ERROR, what)
        problems = error_code_problems(error, what)
        expect(not problems, "; ".join(problems))
        codes[what] = (response.status_code, error.get("code"))
    observe(f"errors seen: {codes}")
    run.conclude()
