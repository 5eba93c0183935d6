"""Campaign endpoints: create, bounds, get, list, update, status updates, immutable fields, actions, audiences,
conflicts, errors (CAMP-01..07, 09..16; CAMP-08 is in test_pagination.py).

The contract shows neither the status codes nor the error bodies of validation failures: a request the rules refuse
must get a non-2xx answer (and, where the rule says so, change nothing); which status and body it got is reported
(:class:`Refusals`), never judged.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from conformance import alone, expect, fail, hypothesis_profile, needs, observe, rule
from conformance.config import Settings
from conformance.host.fields import json_field, json_get
from conformance.judges.platform import list_page_problems
from conformance.suites._cases import Attack, AttackRun, attack_table, cited
from conformance.suites.campaigns.client import (
    CAMPAIGN_LIST,
    COMPARED,
    CampaignsApi,
    differing,
    expect_shape,
    listed_campaign,
    newer_than,
    page,
)
from conformance.suites.platform._keys import BAD_KEYS, NAMED_KEY_CASES, key_headers
from conformance.suites.platform.client import (
    describe,
    error_object,
    expect_json_error,
    json_body,
    run_property,
    target_settings,
)

TIME_MIN, TIME_MAX = 946_684_800, 4_102_444_800
BUDGET_MIN = 1_000_000
LIMIT_MAX = 500
# Name characters: visible BMP characters (length is the same in code points and UTF-16 units).
NAME_CHARS = st.characters(categories=("L", "N", "P", "S"), max_codepoint=0xFFFF)
# "at least one non-space character": a name of spaces only (whether tabs or newlines count is not said).
SPACES = st.text(st.just(" "), min_size=3, max_size=12)
CONVERSION_OPTION = "CONFORMANCE_CAMPAIGNS_CONVERSION_EVENT_SETTING_IDS (two active standard settings)"
CONFLICT_OPTION = "--campaigns-conflict-audience-id or CONFORMANCE_CAMPAIGNS_CONFLICT_AUDIENCE_ID"
CONFLICT_CODE = "custom_audience_mutation_conflict"


def _ok(response: httpx.Response) -> bool:
    return 200 <= response.status_code < 300


class Refusals:
    """The forms of the refusals one check met (status, and the error body's ``code`` or that there was no JSON
    error object): reported, since the contract shows neither for validation failures."""

    def __init__(self) -> None:
        self.forms: Counter[str] = Counter()
        self.not_json: list[str] = []

    def note(self, case: str, response: httpx.Response) -> None:
        error = error_object(response)
        if error is None:
            self.not_json.append(f"{case} ({response.status_code})")
            self.forms[str(response.status_code)] += 1
        else:
            self.forms[f"{response.status_code} {error.get('code')}"] += 1

    def refused(self, response: httpx.Response, case: str) -> str | None:
        """None when ``response`` refuses (non-2xx; its form noted), else the problem."""
        if _ok(response):
            return f"{case} was accepted ({describe(response)})"
        self.note(case, response)
        return None

    def report(self, what: str = "refusals") -> None:
        if not self.forms:
            return
        forms = ", ".join(f"{form} ×{n}" for form, n in self.forms.most_common())
        observe(f"{what} answered (status and error.code, reported): {forms}")
        if self.not_json:
            observe("refusals without a JSON error object (reported): " + "; ".join(self.not_json[:8]))


def _created(response: Any, what: str) -> dict[str, Any]:
    if not _ok(response):
        fail(f"{what}: expected the campaign, got {describe(response)}")
    body = json_body(response)
    expect_shape(body, what)
    result: dict[str, Any] = body
    return result


def _rejected(response: httpx.Response, what: str, refusals: Refusals) -> None:
    problem = refusals.refused(response, what)
    expect(problem is None, problem or "")


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


def _reject_all(api: CampaignsApi, run: AttackRun, bodies: dict[str, dict[str, Any]], refusals: Refusals) -> None:
    """Create each body of the run's cases, at once (``--concurrency``); every one must be refused (a non-2xx
    answer). The refusals' forms are noted in the cases' order."""
    answers: dict[str, httpx.Response] = {}

    def send(case: str) -> str | None:
        answers[case] = response = api.create(bodies[case])
        return f"{case} was accepted ({describe(response)})" if _ok(response) else None

    run.each(bodies, send, limit=api.http.concurrency)
    for case in bodies:
        if case in answers and not _ok(answers[case]):
            refusals.note(case, answers[case])


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


@alone("finds the campaign it created in list output: other checks' creations move the list", among=CAMPAIGN_LIST)
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
    if "conversion_event_setting_ids" not in campaign:
        observe("the created campaign carries no conversion_event_setting_ids (the contract shows it in list output)")
    listed = listed_campaign(campaigns_api, campaign["id"])
    if listed is None:
        fail(f"the created campaign {campaign['id']} is not in list output (newest first)")
    expect(
        "conversion_event_setting_ids" in listed,
        f"list output shows campaign {campaign['id']} without conversion_event_setting_ids (expected [] when unused)",
    )
    expect(
        listed.get("conversion_event_setting_ids") == [],
        f"list output shows an unused conversion_event_setting_ids as {listed.get('conversion_event_setting_ids')!r}, "
        "expected []",
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
        observe(f"checked: the created campaign's fields, types and values, location {location}, its list entry")
    else:
        observe("checked: the created campaign's fields, types and values, its list entry")
        observe("location targeting not checked (no --campaigns-location-id)")


CAMP02_BOUNDS = ("a 2-character name", "a 1001-character name", "an empty name", "a space-only name")
CAMP02 = attack_table(
    "CAMP-02",
    *(
        Attack(case, f"CAMP-02 ({BOUNDS}: refused, nothing created); {CREATE_BODY} (name)", named=True)
        for case in CAMP02_BOUNDS
    ),
    *_wrong_types("name", "abc", numeric=False),
)


def _same_name(stored: Any, sent: str) -> bool:
    return isinstance(stored, str) and (stored == sent or stored.strip(" ") == sent.strip(" "))


@alone(
    "lists every campaign created after its marker: another check's creation would count as its own",
    among=CAMPAIGN_LIST,
)
@rule("CAMP-02")
def test_name_bounds(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    run = AttackRun.of("CAMP-02")
    refusals = Refusals()
    marker = campaigns_api.create_ok()["id"]  # what is listed before it was there before this check
    bodies = _field_type_bodies(
        campaigns_api, run, lambda f, v: campaigns_api.body(**{f: v}), {"name": campaigns_api.name("n")}
    )
    _reject_all(campaigns_api, run, bodies, refusals)
    expect(not run.problems, "; ".join(run.problems))
    refused: dict[str, str] = {}  # a refused name -> its case

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
        blank = data.draw(SPACES, label="spaces only")
        for case, shown, name in (
            ("a 2-character name", f"the 2-character name {too_short!r}", too_short),
            ("a 1001-character name", "a 1001-character name", too_long),
            ("an empty name", "an empty name", ""),
            ("a space-only name", f"the space-only name {blank!r}", blank),
        ):
            refused[name] = case
            _rejected(campaigns_api.create(campaigns_api.body(name=name)), shown, refusals)

    run_property(prop)
    # Nothing created: no campaign made after the marker carries a refused name.
    newer = newer_than(campaigns_api, marker)
    for case in CAMP02_BOUNDS:
        if newer is None:
            run.not_tried(case, f"refused, but listing campaigns after {marker} failed: nothing created not verified")
            continue
        stored = [c for c in newer if any(_same_name(c.get("name"), n) for n, k in refused.items() if k == case)]
        shown = ", ".join(f"{c.get('id')} ({len(str(c.get('name')))} characters)" for c in stored[:3])
        run.tried_case(case, f"{case} was refused, yet the campaign was created: {shown}" if stored else None)
    refusals.report()
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
    refusals = Refusals()
    bodies = {case: campaigns_api.body(status=value) for case, value in CAMP03_BODIES.items()}
    bodies.update({f"a create without '{f}'": campaigns_api.body(**{f: ...}) for f in CAMP03_MISSING})
    _reject_all(campaigns_api, run, bodies, refusals)
    refusals.report()
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
    refusals = Refusals()
    bodies = {
        "a budget of 999,999 micros": budget(BUDGET_MIN - 1),
        "a create without budget": campaigns_api.body(budget=...),
        "an empty budget object": campaigns_api.body(budget={}),
        "budget as a number": campaigns_api.body(budget=BUDGET_MIN),
        **_field_type_bodies(campaigns_api, run, lambda f, v: budget(v), {"lifetime_spend_limit_micros": BUDGET_MIN}),
    }
    _reject_all(campaigns_api, run, bodies, refusals)
    expect(not run.problems, "; ".join(run.problems))

    @_bounded(conformance_settings, 8)
    @given(above=st.integers(BUDGET_MIN, 10**12), below=st.integers(-(10**12), BUDGET_MIN - 1))
    def prop(above: int, below: int) -> None:
        _created(campaigns_api.create(budget(above)), f"a budget of {above} micros")
        _rejected(campaigns_api.create(budget(below)), f"a budget of {below} micros", refusals)

    run_property(prop)
    refusals.report()
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
    refusals = Refusals()
    bodies = {
        f"{field} {value}": campaigns_api.body(**{field: value})
        for field in ("start_time", "end_time")
        for value in (TIME_MIN - 1, TIME_MAX + 1)
    }
    build = lambda f, v: campaigns_api.body(**{f: v})  # noqa: E731
    bodies.update(_field_type_bodies(campaigns_api, run, build, {"start_time": TIME_MIN, "end_time": TIME_MIN}))
    _reject_all(campaigns_api, run, bodies, refusals)
    expect(not run.problems, "; ".join(run.problems))

    @_bounded(conformance_settings, 6)
    @given(
        field=st.sampled_from(["start_time", "end_time"]),
        inside=st.integers(TIME_MIN, TIME_MAX),
        outside=st.one_of(st.integers(max_value=TIME_MIN - 1), st.integers(min_value=TIME_MAX + 1)),
    )
    def prop(field: str, inside: int, outside: int) -> None:
        _created(campaigns_api.create(campaigns_api.body(**{field: inside})), f"{field} {inside}")
        _rejected(campaigns_api.create(campaigns_api.body(**{field: outside})), f"{field} {outside}", refusals)

    run_property(prop)
    refusals.report()
    run.conclude()


GET_BY_ID = "CAMP-06; contract platform, Endpoints (GET /v1/campaigns/{campaign_id})"
WHOLE = f"{GET_BY_ID}: ids are matched whole"
CAMP06 = attack_table(
    "CAMP-06",
    Attack("an unknown id of the stored ids' shape", GET_BY_ID, named=True),
    Attack("a stored id with its last character changed", WHOLE),
    Attack("a stored id with characters appended", WHOLE),
    Attack("a stored id cut short by one character", WHOLE),
    Attack("a numeric id", f"{GET_BY_ID}: an id of another format is unknown too"),
    Attack("a 300-character id", f"{GET_BY_ID}: an id of another format is unknown too"),
    Attack("a percent-encoded non-ASCII id", f"{GET_BY_ID}: an id of another format is unknown too"),
)
SHAPE_CASE = "an unknown id of the stored ids' shape"
SHAPE_TRIES = 4  # ids of the stored shape tried before that case is left not tried
_ID_BODY = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_FOREIGN = "ZQXJKWzqxjkw"  # characters an id generator rarely uses: one no issued id shows is chosen


def _foreign(issued: Iterable[str]) -> str:
    """A character no id the target issued (that the check saw) contains: a stored id altered with it is an id
    the target's own format does not produce (sequential ids, hex ids), so it cannot be another campaign's."""
    seen = set("".join(issued))
    return next((c for c in _FOREIGN if c not in seen), "~")


def _split_id(stored_id: str) -> tuple[str, str]:
    """An id's fixed prefix (up to its last non-alphanumeric character, as in ``cmp_``) and its varying part."""
    cut = max((i for i, c in enumerate(stored_id) if not c.isalnum()), default=-1) + 1
    return stored_id[:cut], stored_id[cut:]


def _shaped(stored_id: str, seed: str) -> str:
    """An id of the stored id's shape (its prefix, its length, the alphabet its varying part shows: digits, hex
    or letters and digits) drawn from ``seed``."""
    prefix, tail = _split_id(stored_id)
    if tail.isdigit():
        alphabet = "0123456789"
    elif all(c in "0123456789abcdef" for c in tail):
        alphabet = "0123456789abcdef"
    else:
        alphabet = _ID_BODY
    digest = hashlib.sha256(seed.encode()).digest() * 4
    return prefix + "".join(alphabet[b % len(alphabet)] for b in digest[: max(len(tail), 6)])


def _camp06_ids(stored_id: str, issued: Iterable[str]) -> dict[str, str]:
    """The never-issued ids of the CAMP-06 table, derived from a stored id (so the near misses are near), altered
    with a character the target's ids do not show where the alteration could otherwise name another campaign."""
    mark = _foreign([stored_id, *issued])
    prefix = _split_id(stored_id)[0] or "cmp_"
    return {
        "a stored id with its last character changed": stored_id[:-1] + mark,
        "a stored id with characters appended": stored_id + mark * 2,
        "a stored id cut short by one character": stored_id[:-1],
        "a numeric id": "1234567890",
        "a 300-character id": (prefix + mark * 300)[:300],
        "a percent-encoded non-ASCII id": "cmp_%C3%A9t%C3%A9",
    }


def _unknown_id_answer(response: httpx.Response, asked: str, case: str) -> str | None:
    """The verdict on a GET of an id the target never issued: None when it gets no campaign (non-2xx); "issued"
    when the answer names exactly the id asked for (another campaign: the target did issue that id); else the
    problem (a campaign under another id, or a 2xx without one)."""
    if not _ok(response):
        return None
    answered = json_get(json_body(response), "id")
    if answered == asked:
        return "issued"
    shown = f"campaign {answered}" if isinstance(answered, str) else "no campaign id"
    return f"{case} ({asked[:40]}) got {shown}: {describe(response)[:120]}"


@alone(
    "asks for ids it saw no campaign under: another check's creation meanwhile could take one of them",
    among=CAMPAIGN_LIST,
)
@rule("CAMP-06")
def test_get_by_id(campaigns_api: CampaignsApi) -> None:
    created = campaigns_api.create_ok(description="read me back")
    stored = _stored(campaigns_api, created["id"])
    expect_shape(stored, "GET by id")
    changed = [k for k in created if k != "updated_at" and stored.get(k) != created[k]]
    expect(not changed, f"GET differs from the created campaign in {changed}")
    issued = [created["id"], *(i for i in _listed_ids(campaigns_api))]
    run = AttackRun.of("CAMP-06")
    statuses: Counter[int] = Counter()
    candidates: dict[str, list[str]] = {
        SHAPE_CASE: [_shaped(created["id"], f"{campaigns_api.run_id}-{n}") for n in range(SHAPE_TRIES)],
        **{case: [unknown] for case, unknown in _camp06_ids(created["id"], issued).items()},
    }
    for case, ids in candidates.items():
        taken: list[str] = []  # ids the target did issue: another campaign, not a partial match
        for unknown in ids:
            if unknown in issued:
                taken.append(unknown)
                continue
            response = campaigns_api.get(unknown)
            verdict = _unknown_id_answer(response, unknown, case)
            if verdict == "issued":
                taken.append(unknown)
                continue
            if verdict is None:
                statuses[response.status_code] += 1
            run.tried_case(case, verdict)
            break
        else:
            why = f"the target holds a campaign under {', '.join(t[:40] for t in taken)}: another campaign"
            if case == SHAPE_CASE:
                run.not_tried(case, why)
            else:
                run.inapplicable(case, why)
    if statuses:
        shown = ", ".join(f"{status} ×{n}" for status, n in statuses.most_common())
        observe(f"ids never issued answered (404 expected, reported): {shown}")
    run.conclude()


def _listed_ids(campaigns_api: CampaignsApi) -> list[str]:
    """Ids of a page of list output (best effort): more of the target's ids, to learn its id alphabet."""
    body = json_body(campaigns_api.list(limit=100))
    data = body.get("data") if isinstance(body, dict) else None
    return (
        [i["id"] for i in data if isinstance(i, dict) and isinstance(i.get("id"), str)]
        if isinstance(data, list)
        else []
    )


LIST_LIMIT = "CAMP-07; contract platform, Endpoints (GET /v1/campaigns: limit integer 1 to 500)"
OUT_OF_RANGE = f"{LIST_LIMIT}: refused or clamped, never more than 500 items"
CAMP07 = attack_table(
    "CAMP-07",
    Attack("limit=0", f"{OUT_OF_RANGE} (one below the minimum)", named=True),
    Attack("limit=501", f"{OUT_OF_RANGE} (one above the maximum)", named=True),
    Attack("limit=-1", OUT_OF_RANGE),
    Attack("limit=ten", f"{OUT_OF_RANGE} (not an integer)"),
    Attack("limit=1.5", f"{OUT_OF_RANGE} (a fraction, not an integer)"),
    Attack("limit=", f"{OUT_OF_RANGE} (empty, not an integer)"),
)


def _limit_answer(response: httpx.Response, case: str, *, more_exist: bool) -> str | None:
    """The problem with a list answer to an out-of-range ``limit``, or None: refused (non-2xx), or a list page of
    1…500 items. ``more_exist``: over 500 campaigns exist, so a page that says nothing follows it is wrong too."""
    if not _ok(response):
        return None
    body = json_body(response)
    problems = list_page_problems(body, LIMIT_MAX)
    if problems:
        return f"{case} answered {response.status_code}: " + "; ".join(problems)
    count = len(body["data"])
    if not count:
        return f"{case} answered an empty page: the limit was neither refused nor clamped to 1…500 (21+ campaigns)"
    if more_exist and body["has_more"] is False:
        return f"{case} answered {count} items and has_more false, though more than {LIMIT_MAX} campaigns exist"
    return None


@alone(
    "counts campaigns in list pages and creates up to 501 of them, which other checks' list walks see",
    among=CAMPAIGN_LIST,
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
    everything = page(campaigns_api, limit=LIMIT_MAX)  # page() checks it holds at most 500
    expect(len(everything["data"]) >= 21, f"limit=500 returned only {len(everything['data'])} of 21+ campaigns")
    more_exist = everything["has_more"] is True
    run = AttackRun.of("CAMP-07")
    refusals = Refusals()
    answered: dict[str, int] = {}  # case -> items of a 2xx page (clamped)
    for attack in run.table:
        response = campaigns_api.list(limit=attack.case.removeprefix("limit="))
        problem = _limit_answer(response, attack.case, more_exist=more_exist)
        if _ok(response):
            answered[attack.case] = len(json_body(response)["data"]) if problem is None else 0
        else:
            refusals.note(attack.case, response)
        if problem or not _ok(response) or more_exist:
            run.tried_case(attack.case, problem)
    unsettled = [c for c in answered if c not in {a.case for a in run.tried}]
    if unsettled:
        # Answered with every campaign on one page: "never more than 500 items" shows only with 501 of them.
        missing = LIMIT_MAX + 1 - len(everything["data"])
        for _ in range(missing):
            campaigns_api.create_ok()
        observe(f"{', '.join(unsettled)} answered with a page: {missing} campaigns created so that 501 exist")
        for case in unsettled:
            response = campaigns_api.list(limit=case.removeprefix("limit="))
            run.tried_case(case, _limit_answer(response, case, more_exist=True))
            if _ok(response):
                answered[case] = len(json_body(response)["data"])
    if answered:
        observe("clamped (reported): " + ", ".join(f"{case} → {n} items" for case, n in answered.items()))
    refusals.report()
    run.conclude()


UPDATE = "CAMP-09; contract platform, Endpoints (update: POST)"
WHOLE_BUDGET = "CAMP-09; contract platform, Update campaign body (sending budget requires the full budget object)"
CAMP09_METHODS = {  # reported: the contract says PATCH and PUT are not used, not how they are answered
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
    *(
        Attack(f"an update with {case}", WHOLE_BUDGET, named=case == "an empty budget object")
        for case in CAMP09_BUDGETS
    ),
)


def _other_methods(campaigns_api: CampaignsApi) -> None:
    """PATCH and PUT on a campaign of their own: how each is answered and whether it changed the campaign, reported
    (the contract updates by POST and says PATCH and PUT are not used; it does not say how they are answered)."""
    campaign = campaigns_api.create_ok()
    cid = campaign["id"]
    seen: list[str] = []
    for case, (method, whole) in CAMP09_METHODS.items():
        name = campaigns_api.name(method.lower())
        body = {**campaigns_api.body(), "name": name} if whole else {"name": name}
        response = campaigns_api.send(method, f"/{cid}", json=body)
        now = _stored(campaigns_api, cid).get("name")
        seen.append(f"{case}: {response.status_code}" + (", the campaign changed" if now == name else ""))
    observe("PATCH and PUT (reported): " + "; ".join(seen))


@rule("CAMP-09")
def test_update_by_post(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    _other_methods(campaigns_api)
    location = conformance_settings.get("campaigns_location_id")
    fields: dict[str, Any] = {"description": "before", "start_time": 1_900_000_000, "end_time": 1_950_000_000}
    if location:
        fields["targeting"] = {"locations": {"include": [{"id": location}]}}
    original = campaigns_api.create_ok(**fields)
    cid = original["id"]
    went_back: list[str] = []
    renamed = campaigns_api.name("renamed")
    response = campaigns_api.update(cid, {"name": renamed})
    expect(_ok(response), f"an update by POST failed: {describe(response)}")
    updated = json_body(response)
    expect_shape(updated, "the updated campaign")
    expect(updated.get("name") == renamed, f"the name was not updated: {updated.get('name')!r}")
    changed = [k for k in differing(updated, original, (*COMPARED, "targeting")) if k != "name"]
    expect(not changed, f"fields omitted from the update changed: {changed}")
    if updated["updated_at"] < json_field(original, "updated_at", type=int):
        went_back.append(f"the update ({original['updated_at']} → {updated['updated_at']})")
    run = AttackRun.of("CAMP-09")
    refusals = Refusals()
    for case, budget in CAMP09_BUDGETS.items():
        with run.attempt(f"an update with {case}"):
            _rejected(campaigns_api.update(cid, {"budget": budget}), f"an update with {case}", refusals)
            kept = _stored(campaigns_api, cid).get("budget")
            expect(kept == original.get("budget"), f"a refused update with {case} changed the budget to {kept!r}")
    expect(not run.problems, "; ".join(run.problems) + f" ({len(run.tried)} cases tried)")
    cleared = campaigns_api.update(cid, {"description": None, "start_time": None, "end_time": None, "targeting": None})
    expect(_ok(cleared), f"clearing with null failed: {describe(cleared)}")
    stored = _stored(campaigns_api, cid)
    for name in ("description", "start_time", "end_time"):
        expect(stored.get(name) is None, f"'{name}' was not cleared by null: {stored.get(name)!r}")
    expect(not stored.get("targeting"), f"targeting was not cleared by null: {stored.get('targeting')!r}")
    if json_field(stored, "updated_at", type=int) < updated["updated_at"]:
        went_back.append(f"clearing with null ({updated['updated_at']} → {stored['updated_at']})")
    if went_back:
        observe("updated_at went back (reported): " + "; ".join(went_back))
    refusals.report()
    run.conclude()


CAMP16_STEPS: tuple[tuple[str, dict[str, Any]], ...] = (  # from paused: each status with other fields
    ("active", {"description": "activated with a new description"}),
    ("paused", {"budget": {"lifetime_spend_limit_micros": 6_000_000}, "end_time": 2_000_000_000}),
    ("archived", {"description": "archived with a new description", "start_time": 1_900_000_000}),
)


@rule("CAMP-16")
def test_status_update_with_other_fields(campaigns_api: CampaignsApi) -> None:
    cid = campaigns_api.create_ok(status="paused", description="before")["id"]
    done: list[str] = []
    for status, fields in CAMP16_STEPS:
        body = {"status": status, "name": campaigns_api.name(status), **fields}
        what = f"an update to {status} with {', '.join(sorted(body))}"
        response = campaigns_api.update(cid, body)
        expect(_ok(response), f"{what} failed: {describe(response)}")
        for source, campaign in (
            ("its answer", json_body(response)),
            ("the stored campaign", _stored(campaigns_api, cid)),
        ):
            if not isinstance(campaign, dict):
                fail(f"{what}: {source} is not a campaign: {describe(response)}")
            wrong = {k: campaign.get(k) for k, v in body.items() if campaign.get(k) != v}
            expect(not wrong, f"{what}: {source} shows {wrong}")
        done.append(what)
    observe("updates judged (answer and stored campaign): " + "; ".join(done))


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
    refusals = Refusals()
    _reject_all(campaigns_api, run, bodies, refusals)
    refusals.report()
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
RECHECK = "contract platform, Update campaign body (audience eligibility is checked again when targeting is saved)"
CAMP13_USES = {"intended_use=everything": "everything", "intended_use=Inclusion": "Inclusion", "intended_use=": ""}
CAMP13 = attack_table(
    "CAMP-13",
    Attack("a non-includable audience included on create", f"{AUDIENCES} (eligible for inclusion)", named=True),
    Attack("a non-includable audience beside an includable one", f"{AUDIENCES} (eligible for inclusion)"),
    Attack("a non-includable audience included by an update", f"{AUDIENCES}; {RECHECK}", named=True),
    Attack("an unknown audience included", f"{AUDIENCES} (ready audiences eligible for inclusion)"),
    Attack("an unknown audience excluded", f"{AUDIENCES} (ready audiences eligible for exclusion)"),
)


def _reported_audience_cases(campaigns_api: CampaignsApi, inclusion: list[str], campaign: dict[str, Any]) -> None:
    """What the rule reports: other ``intended_use`` values and one audience on both sides (on create and by an
    update). The contract names only inclusion and exclusion, and does not say both sides are refused."""
    listing = campaigns_api.target.url("/v1/custom_audiences")
    seen = [
        f"{case}: {campaigns_api.request('GET', listing, params={'intended_use': use}).status_code}"
        for case, use in CAMP13_USES.items()
    ]
    both = _audiences(custom_audiences=inclusion[:1], excluded_custom_audiences=inclusion[:1])
    created = campaigns_api.create(campaigns_api.body(targeting=both))
    seen.append(f"the same audience on both sides on create: {created.status_code}")
    updated = campaigns_api.update(campaign["id"], {"targeting": both})
    seen.append(f"the same audience on both sides by an update: {updated.status_code}")
    observe("reported: " + "; ".join(seen))


@rule("CAMP-13")
def test_custom_audience_eligibility(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    conflict = conformance_settings.get("campaigns_conflict_audience_id")
    run = AttackRun.of("CAMP-13")
    refusals = Refusals()
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
    }
    not_includable = [a for a in exclusion if a not in inclusion]
    if not_includable:
        bodies["a non-includable audience included on create"] = campaigns_api.body(
            targeting=_audiences(custom_audiences=not_includable[:1])
        )
        bodies["a non-includable audience beside an includable one"] = campaigns_api.body(
            targeting=_audiences(custom_audiences=[inclusion[0], not_includable[0]])
        )
        case = "a non-includable audience included by an update"
        with run.attempt(case):
            update = {"targeting": _audiences(custom_audiences=not_includable[:1])}
            _rejected(campaigns_api.update(included["id"], update), case, refusals)
            kept = _stored(campaigns_api, included["id"]).get("targeting")
            expect(kept == included.get("targeting"), f"a refused update ({case}) changed targeting to {kept!r}")
    else:
        for case in (
            "a non-includable audience included on create",
            "a non-includable audience beside an includable one",
            "a non-includable audience included by an update",
        ):
            run.not_tried(case, "every excludable audience of the account is also includable")
    _reject_all(campaigns_api, run, bodies, refusals)
    _reported_audience_cases(campaigns_api, inclusion, exclusion_only)
    refusals.report()
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
    codes: list[str] = []
    for case, body in updates.items():
        before = campaigns_api.create_ok()
        with run.attempt(case):
            error = expect_json_error(campaigns_api.update(before["id"], body), (409,), case)
            codes.append(str(error.get("code")))
            after = _stored(campaigns_api, before["id"])
            changed = [k for k in (*COMPARED, "targeting", "updated_at") if after.get(k) != before.get(k)]
            expect(not changed, f"{case}: the refused edit was applied anyway: {changed} changed")
    if codes:
        observe(f"409 error.code (judged by CAMP-15): {', '.join(sorted(set(codes)))}")
    run.conclude()


KEYS = (
    "CAMP-15 (a missing or bad key gets no data); contract platform, Authentication 1 (Authorization: Bearer "
    "<API_KEY>); RFC 6750 §2.1, §3.1"
)
LISTED_CODES = "CAMP-15; contract platform, Errors (409 custom_audience_mutation_conflict; tell conditions apart)"
CONFLICT_CASE = "a 409 of an audience conflict"
CAMP15 = attack_table(
    "CAMP-15",
    *(Attack(case, KEYS, named=case in NAMED_KEY_CASES) for case in BAD_KEYS),
    Attack("a Basic header of another credential", KEYS, named=True),
    Attack(CONFLICT_CASE, LISTED_CODES),
)


def _data_problem(response: httpx.Response, what: str) -> str | None:
    """None when ``response`` gives no data: a non-2xx answer whose body carries no campaign or list of them."""
    if _ok(response):
        return f"{what} got data: {describe(response)}"
    body = json_body(response)
    if isinstance(body, dict) and (body.get("data") or body.get("object") == "campaign"):
        return f"{what} was answered {response.status_code} but with campaign data: {describe(response)[:120]}"
    return None


def _conflict_code(campaigns_api: CampaignsApi, run: AttackRun, conflict: Any) -> None:
    """The listed code of a 409: a campaign update that names the conflict audience."""
    if not conflict:
        run.not_tried(CONFLICT_CASE, f"needs a conflict trigger ({CONFLICT_OPTION})")
        return
    campaign = campaigns_api.create_ok()
    response = campaigns_api.update(campaign["id"], {"targeting": _audiences(custom_audiences=[str(conflict)])})
    if response.status_code != 409:
        run.not_tried(CONFLICT_CASE, f"the conflict audience was answered {response.status_code} (CAMP-14 judges it)")
        return
    code = json_get(error_object(response), "code")
    problem = (
        None if code == CONFLICT_CODE else f"the 409 of a conflict has error.code {code!r}, expected {CONFLICT_CODE}"
    )
    run.tried_case(CONFLICT_CASE, problem)


@rule("CAMP-15")
def test_auth_and_error_codes(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    run = AttackRun.of("CAMP-15")
    cases = {
        case: key_headers(case, campaigns_api.target.api_key, campaigns_api.http.redactor.add_secret)
        for case in BAD_KEYS
    }
    cases["a Basic header of another credential"] = {"Authorization": "Basic YXBpOmtleQ=="}
    answered: Counter[str] = Counter()
    for case, headers in cases.items():
        if headers is None:
            run.not_tried(case, "no platform API key configured to alter")
            continue
        listing = campaigns_api.send("GET", headers=headers)
        creating = campaigns_api.send("POST", json=campaigns_api.body(), headers=headers)
        for response in (listing, creating):
            json_error = "JSON error" if error_object(response) is not None else "no JSON error object"
            answered[f"{response.status_code} ({json_error})"] += 1
        problems = [
            p
            for p in (_data_problem(listing, f"listing with {case}"), _data_problem(creating, f"creating with {case}"))
            if p
        ]
        run.tried_case(case, "; ".join(problems) or None)
    if answered:
        observe(
            "missing or bad keys answered (401 expected, reported): "
            + ", ".join(f"{k} ×{n}" for k, n in answered.items())
        )
    _conflict_code(campaigns_api, run, conformance_settings.get("campaigns_conflict_audience_id"))
    errors = {
        "an unknown campaign": campaigns_api.get(f"cmp_{campaigns_api.run_id}_unknown"),
        "an invalid body": campaigns_api.create(campaigns_api.body(name="")),
        "an invalid limit": campaigns_api.list(limit="0"),
    }
    shown = [
        f"{what}: {r.status_code} {json_get(error_object(r), 'code') if error_object(r) else '(no JSON error object)'}"
        for what, r in errors.items()
    ]
    observe("other errors (reported): " + "; ".join(shown))
    observe(
        "429 and 503 answers: the host waits them out for every rule but the rate-limit rules, so their codes are "
        "judged by RL-03 and RL-04"
    )
    run.conclude()
