"""The pinned tables themselves: complete, reasoned, and a changed verdict fails (no target needed)."""

from __future__ import annotations

import pytest

from tests.thirdparty import verdicts
from tests.thirdparty._support import AUTH_PROFILE_RULES, HarnessRun, Pinned, Verdict, assert_pinned, table

PINNED = {name: value for name, value in vars(verdicts).items() if isinstance(value, Pinned)}


def fake_run(statuses: dict[str, str], overall: str) -> HarnessRun:
    results = [{"rule": rule, "status": status, "message": ""} for rule, status in statuses.items()]
    exit_code = 0 if overall in ("ACCEPTED", "PASSED LOCALLY") else 1
    return HarnessRun(exit_code, {"results": results, "verdict": {"status": overall}}, "")


def test_every_configuration_pins_every_auth_and_profile_rule() -> None:
    assert len(PINNED) >= 9
    for name, pinned in PINNED.items():
        assert list(pinned.rules) == AUTH_PROFILE_RULES, name
        for rule, verdict in pinned.rules.items():
            assert verdict.status == "passed" or verdict.reason.strip(), (name, rule)


def test_the_audience_violation_is_pinned_for_every_configuration_that_does_not_check_it() -> None:
    for name in ("TS_SDK_OAUTH", "PYSDK_DEFAULT", "FASTMCP_NO_AUDIENCE"):
        assert PINNED[name].rules["AUTH-TOK-06"].status == "failed", name
    for name in ("PYSDK_AUDIENCE", "FASTMCP_AUDIENCE"):
        assert PINNED[name].rules["AUTH-TOK-06"].status == "passed", name


def test_a_changed_verdict_fails() -> None:
    pinned = verdicts.PYSDK_AUDIENCE
    statuses = {rule: v.status for rule, v in pinned.rules.items()}
    assert_pinned(fake_run(statuses, pinned.overall), pinned)
    with pytest.raises(AssertionError, match="AUTH-TOK-06: pinned passed, now failed"):
        assert_pinned(fake_run({**statuses, "AUTH-TOK-06": "failed"}, pinned.overall), pinned)
    with pytest.raises(AssertionError, match="AUTH-PRM-01: pinned passed, now None"):
        assert_pinned(fake_run({r: s for r, s in statuses.items() if r != "AUTH-PRM-01"}, pinned.overall), pinned)
    with pytest.raises(AssertionError, match=f"overall verdict pinned {pinned.overall}, now INCOMPLETE"):
        assert_pinned(fake_run(statuses, "INCOMPLETE"), pinned)


def test_a_table_entry_needs_a_reason() -> None:
    with pytest.raises(AssertionError, match="needs its reason"):
        table({"AUTH-PRM-06": Verdict("warning", " ")})
    with pytest.raises(AssertionError, match="only when it is known wrong or awaits a harness fix"):
        table({"AUTH-PRM-06": Verdict("passed", "listed for no reason")})
    with pytest.raises(AssertionError, match="not auth/profile rules"):
        table({"IMG-TLS-01": Verdict("failed", "another suite")})


def test_a_row_awaiting_a_harness_fix_is_a_strict_expected_failure() -> None:
    """A row pins what the harness concludes today; the fix, which makes it conclude the stated status, fails the
    test until the row drops its awaits (as pytest's xfail(strict=True) would)."""
    pinned = verdicts.BETTER_AUTH
    row = pinned.rules["AUTH-DCR-01"]
    assert (row.status, row.today) == ("passed", "failed") and row.awaits
    today = {rule: v.pinned_status for rule, v in pinned.rules.items()}
    assert_pinned(fake_run(today, pinned.overall), pinned)
    with pytest.raises(AssertionError, match="AUTH-DCR-01: now passed as it should be"):
        assert_pinned(fake_run({**today, "AUTH-DCR-01": "passed"}, pinned.overall), pinned)
    with pytest.raises(AssertionError, match="names both awaits and today"):
        Verdict("passed", "x", awaits="a fix")


def test_every_awaited_row_states_the_verdict_the_fix_brings() -> None:
    for name, pinned in PINNED.items():
        for rule, verdict in pinned.rules.items():
            if verdict.awaits:
                assert verdict.today != verdict.status, (name, rule)
                assert verdict.status == "passed" or verdict.reason.strip(), (name, rule)
