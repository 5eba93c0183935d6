"""The order of the platform's, the campaigns' and the compression's checks (conformance/suites/_order.py): the
checks that must run alone (reading a rate-limit window or a usage counter before and after an operation, or judged
over every answer of their target) come after the others, the rate-limit checks judged over the ledger last of all;
and those are the checks marked alone. The checks that read the campaign list whole run alone among those that
create or change campaigns (they touch the list), in their places."""

from __future__ import annotations

import pytest

from tests._checks_run import run_checks

TARGETS = ("--platform-url", "https://127.0.0.1:1", "--compression-url", "https://127.0.0.1:1")
SUITES = ("--suite", "platform,campaigns,compression")
ALONE = {  # the checks that read or spend what any other check's requests would move
    "platform/test_ratelimits.py::test_remaining_requests_decreases",
    "platform/test_ratelimits.py::test_throttling_and_retry_after",  # with no throttle key of its own
    "compression/test_counts.py::test_counting",
    "compression/test_resize.py::test_bad_resize_options",
    "compression/test_upload.py::test_bad_uploads",
    "compression/test_upload.py::test_plain_http_refused",
}
# The checks that read the campaign list whole: alone among the checks that create or change campaigns (every other
# campaigns check), beside the rest, in their collection order.
CAMPAIGN_LIST = {
    "campaigns/test_campaigns.py::test_create_returns_the_campaign",
    "campaigns/test_campaigns.py::test_name_bounds",
    "campaigns/test_campaigns.py::test_get_by_id",
    "campaigns/test_campaigns.py::test_list_envelope_and_limit",
    "campaigns/test_pagination.py::test_pagination_walks",
    "campaigns/test_pagination.py::test_campaign_state_machine",
}
JUDGED_LAST = {
    "platform/test_ratelimits.py::test_headers_are_consistent",
    "platform/test_ratelimits.py::test_overload_answer",
    "platform/test_ratelimits.py::test_project_token_headers_only_with_a_project_limit",
    "platform/test_ratelimits.py::test_token_counts_carry_rate_limit_headers",
}


def collected(pytester: pytest.Pytester, *suites: str) -> list[str]:
    result = run_checks(pytester, *TARGETS, *(suites or SUITES), "--collect-only", "-q")
    return [line for line in result.stdout.lines if "::" in line]


def test_checks_that_run_alone_come_after_the_others_and_the_ledger_rules_last(pytester: pytest.Pytester) -> None:
    ids = collected(pytester)
    assert set(ids) >= ALONE | JUDGED_LAST
    tail = ids[-len(ALONE | JUDGED_LAST) :]
    assert set(tail[: len(ALONE)]) == ALONE, tail
    assert set(tail[len(ALONE) :]) == JUDGED_LAST, tail
    # The others keep their collection order, and those of one module stay together.
    rest = ids[: -len(tail)]
    assert rest.index("platform/test_tokens.py::test_string_input_is_counted") < rest.index(
        "platform/test_tokens.py::test_bad_bodies_and_keys_get_no_count"
    )


def test_the_order_is_the_same_with_a_suite_alone(pytester: pytest.Pytester) -> None:
    """A run of one suite loads only its conftest: the order it gives is the same."""
    everything = collected(pytester)
    for suite in ("campaigns", "platform"):
        ids = collected(pytester, "--suite", suite)
        assert ids == [i for i in everything if i.startswith(f"{suite}/")]


def test_with_a_throttle_key_of_its_own_rl03_runs_beside_the_rest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RL-03 spends a key's window on purpose: with a throttle key of its own no other check before the ledger's
    uses that key, so it is not alone and keeps its place."""
    rl03 = "platform/test_ratelimits.py::test_throttling_and_retry_after"
    ids = collected(pytester)
    monkeypatch.setenv("CONFORMANCE_PLATFORM_THROTTLE_API_KEY", "k")  # a secret: no flag
    keyed_ids = collected(pytester)
    assert ids.index(rl03) > ids.index("platform/test_ratelimits.py::test_remaining_requests_decreases")
    assert keyed_ids.index(rl03) < keyed_ids.index("platform/test_ratelimits.py::test_remaining_requests_decreases")


def test_the_checks_marked_alone_are_those(pytester: pytest.Pytester) -> None:
    """Every bundled check of these suites marked alone is listed above, and every one listed is marked (a mark
    dropped or added by mistake shows here)."""
    pytester.makeconftest(
        """
from conformance.core.rules import ALONE_MARK, alone_group, touched_group

def pytest_collection_finish(session):
    for item in session.items:
        if item.get_closest_marker(ALONE_MARK) is not None:
            print("ALONE", item.nodeid, alone_group(item))
        if touched_group(item) is not None:
            print("TOUCHES", item.nodeid, touched_group(item))
"""
    )
    result = run_checks(pytester, *TARGETS, *SUITES, "--collect-only", "-q", "-s")
    marked = {line.split(" ", 1)[1] for line in result.stdout.lines if line.startswith("ALONE ")}
    assert marked == {f"{i} None" for i in ALONE | JUDGED_LAST} | {f"{i} campaign list" for i in CAMPAIGN_LIST}
    touching = {line.split(" ", 1)[1] for line in result.stdout.lines if line.startswith("TOUCHES ")}
    campaigns = {i for i in collected(pytester) if i.startswith("campaigns/")}
    assert touching == {f"{i} campaign list" for i in campaigns - CAMPAIGN_LIST} and len(touching) > 5
