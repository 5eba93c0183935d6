"""Cursor pagination, and a state machine that drives campaigns through their life against a model (CAMP-08).

The machine creates, updates, activates, pauses and archives campaigns, keeps what each must look like, checks
every answer and every list page against that model, and walks the whole list after and before its anchor (the
first campaign it created) in both orders. Campaigns made by others in the meantime may interleave; only the
machine's own are compared.

Every draw is the machine's own: a step picks a campaign by its position among those the machine made (never from
a bundle of ids the server returned), and every step always applies, so a replay of a case draws exactly the same
choices whatever the target answers (a target that answers differently fails or passes that case; it never breaks
Hypothesis' replay).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, run_state_machine_as_test
from hypothesis.stateful import rule as step

from conformance import alone, expect, fail, observe, rule
from conformance.config import Settings
from conformance.host.fields import json_get
from conformance.suites.campaigns.client import CAMPAIGN_LIST, CampaignsApi, check_walks, differing, expect_shape
from conformance.suites.platform.client import describe, json_body, run_property, target_settings
from conformance.verdict._signals import with_host_verdicts

LABELS = st.text(st.characters(categories=("L", "N"), max_codepoint=0x7FF), min_size=1, max_size=12)
BUDGETS = st.integers(1_000_000, 10**11).map(lambda m: {"lifetime_spend_limit_micros": m})
DESCRIPTIONS = st.none() | st.text(max_size=40)
# Start and end ranges that cannot cross, so no update is refused for end < start.
STARTS = st.none() | st.integers(1_700_000_000, 1_800_000_000)
ENDS = st.none() | st.integers(1_900_000_000, 2_000_000_000)
UPDATES = st.fixed_dictionaries(
    {},
    optional={
        "name": LABELS,
        "description": DESCRIPTIONS,
        "budget": BUDGETS,
        "status": st.sampled_from(["active", "paused", "archived"]),
        "start_time": STARTS,
        "end_time": ENDS,
    },
).filter(bool)
ACTIONS = {"activate": "active", "pause": "paused", "archive": "archived"}
PICKS = st.integers(0, 63)  # a position among the machine's campaigns (modulo how many it has)


class CampaignMachine(RuleBasedStateMachine):
    api: CampaignsApi  # bound by the check before running

    def __init__(self) -> None:
        super().__init__()
        self.model: dict[str, dict[str, Any]] = {}
        self.updated_at: dict[str, int] = {}
        self.order: list[str] = []  # campaigns created after the anchor, oldest first
        self.anchor = ""

    def _agree(self, campaign_id: str, answer: Any, what: str) -> None:
        expect_shape(answer, what)
        expected = self.model[campaign_id]
        wrong = differing(answer, expected)
        expect(not wrong, f"{what}: fields differ from the model (got, expected): {wrong}")
        expect(answer["id"] == campaign_id, f"{what}: returned campaign {answer['id']}, not {campaign_id}")
        previous = self.updated_at.get(campaign_id, 0)
        expect(answer["updated_at"] >= previous, f"{what}: updated_at went back ({previous} → {answer['updated_at']})")
        self.updated_at[campaign_id] = answer["updated_at"]

    def _pick(self, position: int) -> str:
        return self.order[position % len(self.order)]

    # Each step meets a throttle as a skip, which ends the machine at once: never a failing case to shrink.
    @initialize()
    @with_host_verdicts
    def make_anchor(self) -> None:
        self.anchor = self.api.create_ok()["id"]
        self.create("first", "paused", {"lifetime_spend_limit_micros": 5_000_000})  # every step has a campaign

    @step(label=LABELS, status=st.sampled_from(["active", "paused"]), budget=BUDGETS)
    @with_host_verdicts
    def create(self, label: str, status: str, budget: dict[str, int]) -> None:
        body = self.api.body(name=f"{self.api.run_id}-sm-{label}", status=status, budget=budget)
        response = self.api.create(body)
        if response.status_code not in (200, 201):
            fail(f"create failed: {describe(response)}")
        answer = json_body(response)
        expect_shape(answer, "create")
        campaign_id = answer["id"]
        self.model[campaign_id] = {
            "name": body["name"],
            "description": None,
            "status": status,
            "start_time": None,
            "end_time": None,
            "budget": budget,
            "bidding_type": "impressions",
            "conversion_event_setting_ids": [],
        }
        self._agree(campaign_id, answer, "create")
        self.order.append(campaign_id)

    @step(pick=PICKS, change=UPDATES)
    @with_host_verdicts
    def update(self, pick: int, change: dict[str, Any]) -> None:
        campaign_id = self._pick(pick)
        if "name" in change:
            change = {**change, "name": f"{self.api.run_id}-sm-{change['name']}"}
        response = self.api.update(campaign_id, change)
        expected = self.model[campaign_id]
        if expected["status"] == "archived":
            # Archived is final: the update may be refused, or applied to other fields, never to the status.
            if response.status_code < 300:
                expected.update({k: v for k, v in change.items() if k != "status"})
                self._agree(campaign_id, json_body(response), "update of an archived campaign")
            else:
                expect(response.status_code < 500, f"update of an archived campaign: {describe(response)}")
            return
        if response.status_code != 200:
            fail(f"update {change} failed: {describe(response)}")
        expected.update(change)
        self._agree(campaign_id, json_body(response), f"update {sorted(change)}")

    @step(pick=PICKS, action=st.sampled_from(sorted(ACTIONS)))
    @with_host_verdicts
    def act(self, pick: int, action: str) -> None:
        campaign_id = self._pick(pick)
        response = self.api.action(campaign_id, action)
        expected = self.model[campaign_id]
        if expected["status"] == "archived" and action != "archive":
            expect(
                response.status_code >= 400 or json_get(json_body(response), "status") == "archived",
                f"{action} of an archived campaign: {describe(response)}",
            )
            expect(response.status_code < 500, f"{action} of an archived campaign: {describe(response)}")
            return
        if response.status_code != 200:
            fail(f"{action} failed: {describe(response)}")
        expected["status"] = ACTIONS[action]
        self._agree(campaign_id, json_body(response), action)

    @step(pick=PICKS)
    @with_host_verdicts
    def read(self, pick: int) -> None:
        campaign_id = self._pick(pick)
        response = self.api.get(campaign_id)
        if response.status_code != 200:
            fail(f"GET failed: {describe(response)}")
        self._agree(campaign_id, json_body(response), "GET")

    @step(limit=st.integers(1, 4))
    @with_host_verdicts
    def walk(self, limit: int) -> None:
        check_walks(self.api, anchor=self.anchor, ours=self.order, limit=limit, budget=2 * len(self.order) + 20)


@alone(
    "compares cursor walks over the whole list: another check's creation between two walks changes the list",
    among=CAMPAIGN_LIST,
)
@rule("CAMP-08")
def test_pagination_walks(campaigns_api: CampaignsApi) -> None:
    anchor = campaigns_api.create_ok()["id"]
    ours = [campaigns_api.create_ok()["id"] for _ in range(5)]
    for limit in (1, 2, 5):
        check_walks(campaigns_api, anchor=anchor, ours=ours, limit=limit, budget=40)
    observe(f"walked after and before, both orders, at limit 1, 2 and 5: each of {len(ours) + 1} campaigns once")


@alone(
    "compares cursor walks over the whole list: another check's creation between two walks changes the list",
    among=CAMPAIGN_LIST,
)
@rule("CAMP-08")
def test_campaign_state_machine(campaigns_api: CampaignsApi, conformance_settings: Settings) -> None:
    machine = type("CampaignMachineOnTarget", (CampaignMachine,), {"api": campaigns_api})
    steps = int(conformance_settings.get("campaigns_stateful_steps", 10))
    run_property(lambda: run_state_machine_as_test(machine, settings=target_settings(stateful_step_count=steps)))
