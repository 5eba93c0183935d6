"""The campaigns suite's client: :class:`CampaignsApi` (remembers what the run created, for the fixture to archive at
the end of the session), what a campaign must look like, and cursor walks over the list endpoint checked page by
page."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance import expect, fail
from conformance.config import Target
from conformance.host import fanout
from conformance.host.fields import json_field
from conformance.host.http import HostHTTP
from conformance.judges.platform import campaign_shape_problems as shape_problems
from conformance.judges.platform import list_page_problems
from conformance.suites.platform.client import describe, json_body, ledger_of

# Fields compared between a model and the target's answers (ids, timestamps and targeting are checked apart).
# The checks that read the account's campaign list whole (walks, counts, ids seen missing) run alone among this
# group; every other campaigns check creates or changes campaigns, which move that list, and keeps out of their way
# (``conformance.core.rules.touches``, in the suite's conftest). Checks of no campaign run beside both.
CAMPAIGN_LIST = "campaign list"
COMPARED = (
    "name",
    "description",
    "status",
    "start_time",
    "end_time",
    "budget",
    "bidding_type",
    "conversion_event_setting_ids",
)


BUDGET = {"lifetime_spend_limit_micros": 5_000_000}


@dataclass
class CampaignsApi:
    http: HostHTTP
    target: Target
    run_id: str
    created: list[str] = field(default_factory=list)
    _serial: itertools.count[int] = field(default_factory=lambda: itertools.count(1))  # safe across threads

    def name(self, label: str) -> str:
        """A name carrying the run prefix (so a person can find and clean up what a run made)."""
        return f"{self.run_id}-{label}-{next(self._serial)}"

    def body(self, **fields: Any) -> dict[str, Any]:
        """A valid create body; ``fields`` override or add (a value of ``...`` removes the field)."""
        body: dict[str, Any] = {"name": self.name("campaign"), "status": "paused", "budget": dict(BUDGET)}
        body.update(fields)
        return {k: v for k, v in body.items() if v is not ...}

    def url(self, path: str = "") -> str:
        return self.target.url("/v1/campaigns" + path)

    def send(self, method: str, path: str = "", **kwargs: Any) -> httpx.Response:
        return self.request(method, self.url(path), **kwargs)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Every call of the campaigns checks: the target's auth unless ``headers`` is given; the response is
        also handed to the rate-limit ledger (RL-01, RL-05)."""
        headers = kwargs.pop("headers", None)
        sent = self.target.auth if headers is None else headers
        return ledger_of(self.target).absorb(self.http.request(method, url, headers=sent, **kwargs))

    def create(self, body: dict[str, Any], **kwargs: Any) -> httpx.Response:
        response = self.send("POST", json=body, **kwargs)
        data = json_body(response)
        if response.status_code < 300 and isinstance(data, dict) and isinstance(data.get("id"), str):
            self.created.append(data["id"])
        return response

    def create_ok(self, **fields: Any) -> dict[str, Any]:
        """Create a campaign that must be accepted; returns it."""
        response = self.create(self.body(**fields))
        if response.status_code not in (200, 201) or not isinstance(json_body(response), dict):
            fail(f"creating a valid campaign failed: {describe(response)}")
        json_field(response, "id", type=str, what=f"the created campaign ({describe(response)})")
        result: dict[str, Any] = json_body(response)
        return result

    def get(self, campaign_id: str) -> httpx.Response:
        return self.send("GET", f"/{campaign_id}")

    def update(self, campaign_id: str, body: Any) -> httpx.Response:
        return self.send("POST", f"/{campaign_id}", json=body)

    def action(self, campaign_id: str, action: str) -> httpx.Response:
        return self.send("POST", f"/{campaign_id}/{action}")

    def list(self, **params: Any) -> httpx.Response:
        return self.send("GET", params={k: v for k, v in params.items() if v is not None})


def expect_shape(campaign: Any, what: str) -> None:
    problems = shape_problems(campaign)
    expect(not problems, f"{what}: " + "; ".join(problems))


def differing(answer: dict[str, Any], expected: dict[str, Any], keys: tuple[str, ...] = COMPARED) -> dict[str, Any]:
    """``keys`` whose values differ between a target's answer and what it must hold: {key: (got, expected)}. A
    campaign outside list output may leave out ``conversion_event_setting_ids`` (the contract shows it in lists)."""
    return {
        k: (answer.get(k), expected.get(k))
        for k in keys
        if answer.get(k) != expected.get(k) and (k != "conversion_event_setting_ids" or k in answer)
    }


def listed_campaign(api: CampaignsApi, campaign_id: str, *, pages: int = 20) -> dict[str, Any] | None:
    """The campaign ``campaign_id`` as list output shows it (newest first, 100 a page), or None when the listing
    does not show it within ``pages`` pages."""
    after: str | None = None
    for _ in range(pages):
        body = page(api, order="desc", limit=100, after=after)
        for item in body["data"]:
            if isinstance(item, dict) and item.get("id") == campaign_id:
                return item
        if not body["has_more"] or not body["data"]:
            return None
        after = body["data"][-1]["id"]
    return None


def newer_than(api: CampaignsApi, marker: str, *, pages: int = 20) -> list[dict[str, Any]] | None:
    """The campaigns listed before ``marker`` in ``desc`` order (made after it, by anyone), or None when the
    listing failed or never reached ``marker`` within ``pages`` pages (100 a page)."""
    found: list[dict[str, Any]] = []
    after: str | None = None
    for _ in range(pages):
        response = api.list(order="desc", limit=100, after=after)
        body = json_body(response)
        data = body.get("data") if isinstance(body, dict) else None
        if response.status_code != 200 or not isinstance(data, list):
            return None
        for item in data:
            if isinstance(item, dict) and item.get("id") == marker:
                return found
            if isinstance(item, dict):
                found.append(item)
        last = data[-1].get("id") if data and isinstance(data[-1], dict) else None
        if body.get("has_more") is not True or not isinstance(last, str):
            return None
        after = last
    return None


def page(api: CampaignsApi, **params: Any) -> dict[str, Any]:
    """One list page that must be well formed: envelope, first/last ids, at most ``limit`` items."""
    response = api.list(**params)
    if response.status_code != 200:
        fail(f"listing with {params} failed: {describe(response)}")
    body = json_body(response)
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        fail(f"listing with {params}: not a list envelope: {describe(response)}")
    problems = list_page_problems(body, int(params.get("limit", 20)))
    expect(not problems, f"listing with {params}: " + "; ".join(problems))
    return body


def _walk_step(
    api: CampaignsApi,
    direction: str,
    *,
    order: str,
    limit: int,
    cursor: str | None,
    origin: str | None,
    seen: list[str],
) -> tuple[dict[str, Any], list[str]]:
    """One page of an ``after``/``before`` cursor walk and its ids, with the checks every step shares: only the
    walk's first page may be empty, and no id may repeat one already walked (or the cursor itself)."""
    body = page(api, order=order, limit=limit, **{direction: cursor})
    ids = [item["id"] for item in body["data"]]
    walk = f"{direction}-walk ({order}, limit {limit})"
    expect(ids or cursor == origin, f"{walk}: has_more was true, but the page {direction} {cursor} is empty")
    repeated = [i for i in ids if i in seen or i == cursor]
    expect(not repeated, f"{walk}: {repeated[0] if repeated else ''} appears twice")
    return body, ids


def walk_after(
    api: CampaignsApi, *, order: str, limit: int, after: str | None, budget: int, stop_at: str | None = None
) -> list[str]:
    """Follow ``after`` cursors from ``after`` to the end (or until ``stop_at`` is on a page); ids in walking
    order. Checks: no duplicate, has_more true only when another page follows and false exactly at the end."""
    seen: list[str] = []
    cursor = after
    for _ in range(budget):
        body, ids = _walk_step(api, "after", order=order, limit=limit, cursor=cursor, origin=after, seen=seen)
        seen.extend(ids)
        if stop_at is not None and stop_at in ids:
            return seen
        if not body["has_more"]:
            # Nothing may follow the last item. An empty page already shows it: asking after its cursor again would
            # send the very same request.
            if ids:
                end = page(api, order=order, limit=limit, after=ids[-1])
                expect(
                    not end["data"],
                    f"after-walk ({order}, limit {limit}): has_more was false, but after {ids[-1]} "
                    f"{len(end['data'])} more item(s) follow",
                )
            return seen
        expect(ids, f"after-walk ({order}, limit {limit}): has_more is true on an empty page")
        cursor = ids[-1]
    fail(f"after-walk ({order}, limit {limit}) did not end within {budget} pages")


def walk_before(
    api: CampaignsApi, *, order: str, limit: int, before: str, stop_at: str | None, budget: int
) -> list[str]:
    """Follow ``before`` cursors back from ``before`` until ``stop_at`` is on a page or the start is reached;
    returns ids in list order (earliest first). Each page must be in ``order`` and end right before its cursor."""
    collected: list[str] = []
    cursor = before
    for _ in range(budget):
        body, ids = _walk_step(api, "before", order=order, limit=limit, cursor=cursor, origin=before, seen=collected)
        collected[:0] = ids
        if stop_at is not None and stop_at in ids:
            return collected
        if not body["has_more"]:
            if ids:
                start = page(api, order=order, limit=limit, before=ids[0])
                expect(
                    not start["data"],
                    f"before-walk ({order}, limit {limit}): has_more was false, but {len(start['data'])} item(s) "
                    f"precede {ids[0]}",
                )
            return collected
        expect(ids, f"before-walk ({order}, limit {limit}): has_more is true on an empty page")
        cursor = ids[0]
    fail(f"before-walk ({order}, limit {limit}) did not end within {budget} pages")


def check_walks(api: CampaignsApi, *, anchor: str, ours: list[str], limit: int, budget: int) -> None:
    """The after/before walks around ``anchor`` (the first campaign this walker created; ``ours`` are the ones
    created after it, oldest first) agree with creation order: nothing missing, nothing twice, order kept,
    has_more exact at both ends. Campaigns created by others meanwhile may interleave; only ours are compared."""
    mine = set(ours)
    label = f"limit {limit}"
    # Three walks that need no answer of another, at once (``--concurrency``): asc after the anchor to the very end;
    # desc from the newest down to the anchor with after-cursors; desc before-cursors from the anchor up to the newest.
    walks: list[Callable[[], list[str]]] = [
        functools.partial(walk_after, api, order="asc", limit=limit, after=anchor, budget=budget),
        functools.partial(walk_after, api, order="desc", limit=limit, after=None, budget=budget, stop_at=anchor),
        functools.partial(walk_before, api, order="desc", limit=limit, before=anchor, stop_at=None, budget=budget),
    ]
    forward, newest, up = fanout.each(walks, lambda walk: walk(), limit=api.http.concurrency)
    # asc: after the anchor to the very end (has_more false exactly there) ...
    expect(
        [i for i in forward if i in mine] == ours,
        f"asc after-walk ({label}) from the anchor lists our campaigns as {_short(forward, mine)}, "
        f"expected {_short(ours, mine)}",
    )
    # ... then back with before-cursors from the end to the anchor: the same items.
    if forward:
        back = walk_before(api, order="asc", limit=limit, before=forward[-1], stop_at=anchor, budget=budget)
        expect(
            anchor in back and back[back.index(anchor) + 1 :] == forward[:-1],
            f"asc before-walk ({label}) back from the end lists {_short(back, mine)}, expected the after-walk "
            f"{_short(forward[:-1], mine)}",
        )
    # desc: from the newest down to the anchor with after-cursors ...
    expect(anchor in newest, f"desc after-walk ({label}) never reached the anchor")
    expect(
        newest[: newest.index(anchor)] == forward[::-1] if anchor in newest else False,
        f"desc after-walk ({label}) lists {_short(newest, mine)} before the anchor, expected the asc walk "
        f"reversed {_short(forward[::-1], mine)}",
    )
    # ... and before-cursors from the anchor up to the newest (has_more false exactly at the start).
    expect(
        up == forward[::-1],
        f"desc before-walk ({label}) from the anchor lists {_short(up, mine)}, expected {_short(forward[::-1], mine)}",
    )


def _short(ids: list[str], mine: set[str]) -> str:
    shown = [i[-6:] for i in ids if i in mine]
    return "[" + ", ".join(shown[:12]) + (", ..." if len(shown) > 12 else "") + "]"
