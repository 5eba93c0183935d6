"""Campaign endpoints of the platform sandbox: validation, updates, actions, pagination, audiences, persistence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from conformance.judges.platform import campaign_shape_problems as shape_problems
from conformance.reference.platform import create_app
from conformance.reference.platform.campaigns import CREATE_FIELDS
from conformance.reference.platform.seeds import CONFLICT_AUDIENCE_ID
from conformance.reference.platform.settings import SandboxSettings
from tests.reference.platform.conftest import AUTH, campaign_body


def create(client: TestClient, **fields: Any) -> dict[str, Any]:
    response = client.post("/v1/campaigns", json=campaign_body(**fields), headers=AUTH)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    result: dict[str, Any] = response.json()["error"]
    assert set(result) == {"type", "code", "message", "param"}
    return result


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"name": "ab"}, "name"),
        ({"name": "x" * 1001}, "name"),
        ({"name": "   "}, "name"),
        ({"name": 5}, "name"),
        ({"status": "archived"}, "status"),
        ({"budget": {"lifetime_spend_limit_micros": 999_999}}, "budget.lifetime_spend_limit_micros"),
        ({"budget": {"lifetime_spend_limit_micros": 2**63}}, "budget.lifetime_spend_limit_micros"),
        ({"budget": {"lifetime_spend_limit_micros": True}}, "budget.lifetime_spend_limit_micros"),
        ({"start_time": 946_684_799}, "start_time"),
        ({"end_time": 4_102_444_801}, "end_time"),
        ({"start_time": 2_000_000_000, "end_time": 1_900_000_000}, "end_time"),
        ({"bidding_type": "conversions"}, "conversion_event_setting_ids"),
        (
            {"bidding_type": "conversions", "conversion_event_setting_ids": ["ces_custom_wishlist"]},
            "conversion_event_setting_ids",
        ),
        (
            {"bidding_type": "conversions", "conversion_event_setting_ids": ["ces_lead_inactive"]},
            "conversion_event_setting_ids",
        ),
        (
            {"bidding_type": "conversions", "conversion_event_setting_ids": ["ces_no_source"]},
            "conversion_event_setting_ids",
        ),
        ({"conversion_event_setting_ids": ["ces_purchase"]}, "conversion_event_setting_ids"),
        ({"mode": "product_feed"}, "product_feed_id"),
        ({"product_feed_id": "pf_main"}, "product_feed_id"),
        ({"targeting": {"locations": {"include": [{"id": "loc_mars"}]}}}, "targeting.locations.include[0].id"),
        ({"targeting": {"custom_audiences": {"ids": ["aud_ready_small"]}}}, "targeting.custom_audiences.ids"),
        ({"targeting": {"custom_audiences": {"ids": ["aud_not_ready"]}}}, "targeting.custom_audiences.ids"),
        (
            {"targeting": {"excluded_custom_audiences": {"ids": ["aud_not_ready"]}}},
            "targeting.excluded_custom_audiences.ids",
        ),
        (
            {
                "targeting": {
                    "custom_audiences": {"ids": ["aud_ready_large"]},
                    "excluded_custom_audiences": {"ids": ["aud_ready_large"]},
                }
            },
            "targeting.excluded_custom_audiences.ids",
        ),
        (
            {
                "targeting": {
                    "custom_audiences": {"ids": ["aud_ready_large"]},
                    "excluded_custom_audiences": {"ids": ["aud_overlap_large"]},
                }
            },
            "targeting",
        ),
        ({"colour": "red"}, "colour"),
    ],
)
def test_create_validation(client: TestClient, fields: dict[str, Any], param: str) -> None:
    response = client.post("/v1/campaigns", json=campaign_body(**fields), headers=AUTH)
    assert error(response, 400)["param"] == param


def test_create_defaults_and_full_body(client: TestClient) -> None:
    plain = create(client)
    assert plain["bidding_type"] == "impressions" and plain["conversion_event_setting_ids"] == []
    assert plain["created_at"] == plain["updated_at"]
    full = create(
        client,
        name="x" * 1000,
        mode="product_feed",
        product_feed_id="pf_main",
        bidding_type="conversions",
        conversion_event_setting_ids=["ces_purchase"],
        targeting={
            "locations": {"include": [{"id": "dma_807"}]},
            "custom_audiences": {"ids": ["aud_ready_large"]},
            "excluded_custom_audiences": {"ids": ["aud_ready_small"]},
        },
    )
    assert full["targeting"]["locations"]["include"][0] == {
        "id": "dma_807",
        "type": "dma",
        "country_code": "US",
        "name": "San Francisco-Oakland-San Jose",
        "region_code": "CA",
    }
    exclusion_only = create(client, targeting={"excluded_custom_audiences": {"ids": ["aud_ready_empty"]}})
    assert "custom_audiences" not in exclusion_only["targeting"]
    assert plain["id"] != full["id"] != exclusion_only["id"]


def test_update_rules(client: TestClient) -> None:
    campaign = create(client, description="d", start_time=1_900_000_000)
    cid = campaign["id"]
    for method in ("PATCH", "PUT"):
        assert error(client.request(method, f"/v1/campaigns/{cid}", json={"name": "new"}, headers=AUTH), 405)
    updated = client.post(f"/v1/campaigns/{cid}", json={"name": "Renamed"}, headers=AUTH).json()
    assert updated["name"] == "Renamed" and updated["description"] == "d" and updated["start_time"] == 1_900_000_000
    assert error(client.post(f"/v1/campaigns/{cid}", json={"budget": {}}, headers=AUTH), 400)
    assert error(client.post(f"/v1/campaigns/{cid}", json={"bidding_type": "clicks"}, headers=AUTH), 400)
    assert error(client.post(f"/v1/campaigns/{cid}", json={"end_time": 1_800_000_000}, headers=AUTH), 400)
    cleared = client.post(
        f"/v1/campaigns/{cid}", json={"description": None, "start_time": None, "targeting": None}, headers=AUTH
    ).json()
    assert cleared["description"] is None and cleared["start_time"] is None and cleared["targeting"] is None
    assert cleared["updated_at"] >= updated["updated_at"]
    conversion = create(client, bidding_type="conversions", conversion_event_setting_ids=["ces_purchase"])
    response = client.post(
        f"/v1/campaigns/{conversion['id']}", json={"conversion_event_setting_ids": ["ces_signup"]}, headers=AUTH
    )
    assert error(response, 400)["code"] == "field_immutable"


def test_actions_and_archived_is_final(client: TestClient) -> None:
    cid = create(client, status="active")["id"]
    assert client.post(f"/v1/campaigns/{cid}/pause", headers=AUTH).json()["status"] == "paused"
    assert client.post(f"/v1/campaigns/{cid}/activate", headers=AUTH).json()["status"] == "active"
    assert client.post(f"/v1/campaigns/{cid}/archive", headers=AUTH).json()["status"] == "archived"
    assert client.post(f"/v1/campaigns/{cid}/archive", headers=AUTH).json()["status"] == "archived"
    for action in ("activate", "pause"):
        assert error(client.post(f"/v1/campaigns/{cid}/{action}", headers=AUTH), 400)["code"] == "campaign_archived"
    assert error(client.post(f"/v1/campaigns/{cid}", json={"status": "active"}, headers=AUTH), 400)
    assert client.get(f"/v1/campaigns/{cid}", headers=AUTH).json()["status"] == "archived"
    assert error(client.post("/v1/campaigns/cmp_nope/archive", headers=AUTH), 404)


def test_conflict_audience_applies_nothing(client: TestClient) -> None:
    campaign = create(client)
    targeting = {"custom_audiences": {"ids": [CONFLICT_AUDIENCE_ID]}}
    response = client.post(
        f"/v1/campaigns/{campaign['id']}", json={"name": "Changed", "targeting": targeting}, headers=AUTH
    )
    assert error(response, 409)["code"] == "custom_audience_mutation_conflict"
    assert client.get(f"/v1/campaigns/{campaign['id']}", headers=AUTH).json() == campaign
    assert error(client.post("/v1/campaigns", json=campaign_body(targeting=targeting), headers=AUTH), 409)


def test_pagination_walks(client: TestClient) -> None:
    ids = [create(client, name=f"Campaign {i}")["id"] for i in range(7)]

    def page(**params: Any) -> dict[str, Any]:
        response = client.get("/v1/campaigns", params=params, headers=AUTH)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    first = page(limit=3, order="asc")
    assert [c["id"] for c in first["data"]] == ids[:3] and first["has_more"]
    assert (first["first_id"], first["last_id"]) == (ids[0], ids[2])
    last = page(limit=3, order="asc", after=ids[3])
    assert [c["id"] for c in last["data"]] == ids[4:] and not last["has_more"]
    back = page(limit=3, order="asc", before=ids[4])
    assert [c["id"] for c in back["data"]] == ids[1:4] and back["has_more"]
    newest = page(limit=2)  # default order desc
    assert [c["id"] for c in newest["data"]] == ids[:-3:-1]
    assert page(order="desc", before=ids[-1], limit=5) == {
        "object": "list",
        "data": [],
        "first_id": None,
        "last_id": None,
        "has_more": False,
    }
    for params in (
        {"limit": 0},
        {"limit": 501},
        {"limit": "x"},
        {"order": "up"},
        {"after": "cmp_nope"},
        {"after": ids[0], "before": ids[1]},
    ):
        assert error(client.get("/v1/campaigns", params=params, headers=AUTH), 400)


def test_audiences_listing_and_model_limits(client: TestClient) -> None:
    inclusion = client.get("/v1/custom_audiences", params={"intended_use": "inclusion"}, headers=AUTH).json()
    exclusion = client.get("/v1/custom_audiences", params={"intended_use": "exclusion"}, headers=AUTH).json()
    include_ids = {a["id"] for a in inclusion["data"]}
    exclude_ids = {a["id"] for a in exclusion["data"]}
    assert "aud_ready_small" in exclude_ids - include_ids and "aud_ready_empty" in exclude_ids - include_ids
    assert "aud_not_ready" not in include_ids | exclude_ids
    assert error(client.get("/v1/custom_audiences", headers=AUTH), 400)["param"] == "intended_use"
    limits = client.get("/v1/fine_tuning/model_limits", headers=AUTH).json()
    assert limits["object"] == "list" and limits["data"]


def test_auth_and_unknown_paths(client: TestClient) -> None:
    assert error(client.get("/v1/campaigns"), 401)["code"] == "invalid_api_key"
    assert error(client.get("/v1/campaigns", headers={"Authorization": "Bearer nope"}), 401)
    assert error(client.get("/v1/nowhere", headers=AUTH), 404)["code"] == "unknown_url"
    assert error(client.get("/v1/responses/input_tokens", headers=AUTH), 405)
    assert error(client.post("/v1/campaigns", content=b"{", headers=AUTH), 400)["code"] == "invalid_json"
    assert error(client.post("/v1/campaigns", content=b"\xff\xfe", headers=AUTH), 400)["code"] == "invalid_json"
    big = b'{"name": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    assert error(client.post("/v1/campaigns", content=big, headers=AUTH), 413)


def test_campaigns_survive_a_restart(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as first:
        campaign = create(first)
    with TestClient(create_app(tmp_path)) as second:
        assert second.get(f"/v1/campaigns/{campaign['id']}", headers=AUTH).json() == campaign


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
FIELDS = [*sorted(CREATE_FIELDS), "lifetime_spend_limit_micros", "ids", "locations", "include"]
# Mostly valid bodies with one to three fields replaced by arbitrary JSON.
BODIES = st.builds(
    lambda base, extra: {**base, **extra},
    st.just(campaign_body()),
    st.dictionaries(st.sampled_from(FIELDS), JSON, min_size=1, max_size=3),
)


@settings(max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(create_body=BODIES, update_body=st.one_of(JSON, st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=3)))
def test_arbitrary_bodies_never_cause_a_5xx_nor_corrupt_a_campaign(
    client: TestClient, create_body: dict[str, Any], update_body: Any
) -> None:
    response = client.post("/v1/campaigns", json=create_body, headers=AUTH)
    assert response.status_code in (200, 400, 409), response.text
    target = create(client)
    response = client.post(f"/v1/campaigns/{target['id']}", json=update_body, headers=AUTH)
    assert response.status_code in (200, 400, 409), response.text
    stored = client.get(f"/v1/campaigns/{target['id']}", headers=AUTH).json()
    assert not shape_problems(stored)
    if response.status_code != 200:
        assert stored == target  # a refused update applied nothing


def test_sequential_campaign_ids(tmp_path: Path) -> None:
    """The sequential-id switch: ids count up from cmp_000001 (so a stored id with its last character changed is
    usually another campaign), and survive a restart without reuse."""
    settings = SandboxSettings(campaign_ids="sequential")
    with TestClient(create_app(tmp_path, settings=settings)) as client:
        ids = [create(client)["id"] for _ in range(3)]
    with TestClient(create_app(tmp_path, settings=settings)) as client:
        ids.append(create(client)["id"])
        assert client.get(f"/v1/campaigns/{ids[0]}", headers=AUTH).json()["id"] == ids[0]
    assert ids == ["cmp_000001", "cmp_000002", "cmp_000003", "cmp_000004"]
    with pytest.raises(ValueError, match="campaign_ids"):
        SandboxSettings(campaign_ids="uuid")


def _mutant(tmp_path: Path, name: str) -> TestClient:
    return TestClient(create_app(tmp_path, mutants={name}))


def test_campaign_mutants_break_outcomes(tmp_path: Path) -> None:
    """Each campaign mutant breaks what its rule judges (an outcome), not only the form of an answer."""
    with _mutant(tmp_path / "a", "name-refused-but-stored") as client:
        assert error(client.post("/v1/campaigns", json=campaign_body(name="ab"), headers=AUTH), 400)
        listed = client.get("/v1/campaigns", headers=AUTH).json()["data"]
        assert [c["name"] for c in listed] == ["ab"]
    with _mutant(tmp_path / "b", "unknown-campaign-fallback") as client:
        newest = create(client)
        assert client.get("/v1/campaigns/cmp_never_issued", headers=AUTH).json()["id"] == newest["id"]
    with _mutant(tmp_path / "c", "limit-zero-empty-page") as client:
        create(client)
        page = client.get("/v1/campaigns", params={"limit": "0"}, headers=AUTH).json()
        assert page["data"] == [] and page["has_more"] is True
        assert error(client.get("/v1/campaigns", params={"limit": "501"}, headers=AUTH), 400)
    with _mutant(tmp_path / "d", "list-conversion-ids-omitted") as client:
        assert create(client)["conversion_event_setting_ids"] == []
        assert "conversion_event_setting_ids" not in client.get("/v1/campaigns", headers=AUTH).json()["data"][0]
    with _mutant(tmp_path / "e", "status-update-drops-other-fields") as client:
        cid = create(client, description="before")["id"]
        body = {"status": "active", "description": "after", "name": "renamed"}
        updated = client.post(f"/v1/campaigns/{cid}", json=body, headers=AUTH).json()
        assert (updated["status"], updated["description"], updated["name"]) == ("active", "before", "Spring sale")
        only = client.post(f"/v1/campaigns/{cid}", json={"description": "after"}, headers=AUTH).json()
        assert only["description"] == "after"
    with _mutant(tmp_path / "f", "conflict-code-missing") as client:
        cid = create(client)["id"]
        body = {"targeting": {"custom_audiences": {"ids": [CONFLICT_AUDIENCE_ID]}}}
        assert error(client.post(f"/v1/campaigns/{cid}", json=body, headers=AUTH), 409)["code"] is None


def test_both_sides_and_patch_are_refused(client: TestClient) -> None:
    """What the rules report, the sandbox does as documented: one audience on both sides is refused,
    PATCH and PUT answer 405."""
    cid = create(client)["id"]
    both = {"custom_audiences": {"ids": ["aud_ready_large"]}, "excluded_custom_audiences": {"ids": ["aud_ready_large"]}}
    assert error(client.post(f"/v1/campaigns/{cid}", json={"targeting": both}, headers=AUTH), 400)["code"] == (
        "audience_included_and_excluded"
    )
    assert error(client.patch(f"/v1/campaigns/{cid}", json={"name": "new"}, headers=AUTH), 405)
