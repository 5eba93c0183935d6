"""CAMP-08's cursor walks against an in-memory list endpoint: the check that nothing follows the last item asks after
that item, and never sends again the request whose empty page already showed it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from conformance.suites.campaigns.client import walk_after
from conformance.verdict._verdicts import Failure


class Listing:
    """A list endpoint (asc by creation) over ``ids`` that records every request's parameters."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        self.sent: list[dict[str, Any]] = []

    def list(self, **params: Any) -> httpx.Response:
        self.sent.append(params)
        ordered = self.ids if params.get("order", "desc") == "asc" else self.ids[::-1]
        limit, after = int(params.get("limit", 20)), params.get("after")
        start = ordered.index(after) + 1 if after is not None else 0
        data = [{"id": i} for i in ordered[start : start + limit]]
        body = {"object": "list", "data": data, "has_more": start + limit < len(ordered)}
        body |= {"first_id": data[0]["id"], "last_id": data[-1]["id"]} if data else {}
        return httpx.Response(200, json=body, request=httpx.Request("GET", "https://platform.example/v1/campaigns"))


def walk(listing: Listing, after: str | None, limit: int = 2) -> list[str]:
    return walk_after(listing, order="asc", limit=limit, after=after, budget=10)  # type: ignore[arg-type]


def test_after_the_newest_item_one_empty_page_ends_the_walk() -> None:
    listing = Listing(["c1", "c2", "c3"])
    assert walk(listing, "c3") == []
    assert listing.sent == [{"order": "asc", "limit": 2, "after": "c3"}]


def test_after_a_last_item_the_walk_asks_whether_anything_follows() -> None:
    listing = Listing(["c1", "c2", "c3"])
    assert walk(listing, "c1") == ["c2", "c3"]
    assert [p["after"] for p in listing.sent] == ["c1", "c3"]


def test_items_after_a_page_that_said_no_more_fail_the_walk() -> None:
    listing = Listing(["c1", "c2", "c3", "c4"])
    real = listing.list

    def lying(**params: Any) -> httpx.Response:  # the first page hides that c4 follows
        response = real(**params)
        if params.get("after") == "c1":
            body = response.json() | {"has_more": False}
            return httpx.Response(200, json=body, request=response.request)
        return response

    listing.list = lying  # type: ignore[method-assign]
    with pytest.raises(Failure, match="has_more was false, but after c3 1 more item"):
        walk(listing, "c1")
