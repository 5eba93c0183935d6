"""The loop that overlaps the bodies of independent checks (conformance/pytest/_overlap.py).

The checks below decide auth or platform rules (suites whose checks may overlap) and need no target: each
body meets the others at a barrier, or counts the bodies in flight, so the tests prove overlap (or its absence) by
what the bodies saw, never by timing.
"""

from __future__ import annotations

import json
import re

import pytest

from tests._checks_run import DEAD_TOOL_SERVER, run_checks

COMMON = """
import threading, time
import pytest
from conformance import alone, observe, rule
from conformance.core import _context

MEET = threading.Barrier(3, timeout=10)
LOCK = threading.Lock()
IN_FLIGHT = {"now": 0, "most": 0}
ORDER = []


def enter():
    with LOCK:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["most"] = max(IN_FLIGHT["most"], IN_FLIGHT["now"])


def leave():
    with LOCK:
        IN_FLIGHT["now"] -= 1
"""


# Two checks that meet a third at the barrier: what the first check of a body proves happens while others run.
COMPANIONS = """
@rule("AUTH-ASM-02")
def test_b():
    MEET.wait()

@rule("AUTH-ASM-03")
def test_c():
    MEET.wait()
"""


def run(pytester: pytest.Pytester, body: str, *args: str) -> tuple[dict[str, dict[str, object]], object]:
    pytester.makepyfile(test_overlap=COMMON + body)
    checks = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_overlap.py", *args, how="forked")
    return {str(r["rule"]): r for r in checks.results}, checks


MEETING = """
@rule("AUTH-ASM-01")
def test_a():
    MEET.wait()
    observe("a met the others")

@rule("AUTH-ASM-02")
def test_b():
    MEET.wait()
    observe("b met the others")

@rule("AUTH-ASM-03")
def test_c():
    MEET.wait()
    observe("c met the others")
"""


def test_bodies_of_independent_checks_overlap(pytester: pytest.Pytester) -> None:
    results, _ = run(pytester, MEETING, "--concurrency", "3")
    assert {rule: r["status"] for rule, r in results.items()} == dict.fromkeys(
        ("AUTH-ASM-01", "AUTH-ASM-02", "AUTH-ASM-03"), "passed"
    )
    # Each check's record is its own: its notes, not the others'.
    assert "a met the others" in str(results["AUTH-ASM-01"]["message"])
    assert "b met" not in str(results["AUTH-ASM-01"]["message"])


def test_with_concurrency_1_checks_run_one_after_another(pytester: pytest.Pytester) -> None:
    results, _ = run(pytester, MEETING.replace("timeout=10", "timeout=0.5"), "--concurrency", "1")
    assert {r["status"] for r in results.values()} == {"error"}  # the barrier broke: nobody else was running


def test_reports_come_in_collection_order_and_run_wide_steps_in_the_checks_order(pytester: pytest.Pytester) -> None:
    body = """
@rule("AUTH-ASM-01")
def test_slow():
    MEET.wait()
    time.sleep(0.2)  # ends last of the three
    _context.in_order(lambda: ORDER.append("slow"))

@rule("AUTH-ASM-02")
def test_quick():
    MEET.wait()
    _context.in_order(lambda: ORDER.append("quick"))

@rule("AUTH-ASM-03")
def test_quicker():
    MEET.wait()
    _context.in_order(lambda: ORDER.append("quicker"))

@alone("reads what the others appended")
@rule("AUTH-ASM-04")
def test_reader():
    assert ORDER == ["slow", "quick", "quicker"], ORDER
"""
    results, checks = run(pytester, body, "--concurrency", "4", "-v")
    assert results["AUTH-ASM-04"]["status"] == "passed", results["AUTH-ASM-04"]
    lines = [line for line in checks.outlines if "::test_" in line and "PASSED" in line]
    assert [line.split("::")[1].split()[0] for line in lines] == [
        "test_slow",
        "test_quick",
        "test_quicker",
        "test_reader",
    ]


def test_a_check_marked_alone_runs_with_nothing_in_flight(pytester: pytest.Pytester) -> None:
    body = """
def busy(name):
    enter()
    try:
        time.sleep(0.05)
    finally:
        leave()

@rule("AUTH-ASM-01")
def test_a():
    busy("a")

@rule("AUTH-ASM-02")
def test_b():
    busy("b")

@alone("changes what the others rely on")
@rule("AUTH-ASM-03")
def test_alone():
    assert IN_FLIGHT["now"] == 0, IN_FLIGHT

@rule("AUTH-ASM-04")
def test_c():
    busy("c")

@rule("AUTH-ASM-05")
def test_most():
    assert IN_FLIGHT["most"] >= 2, IN_FLIGHT  # the others did overlap
"""
    results, _ = run(pytester, body, "--concurrency", "4")
    assert results["AUTH-ASM-03"]["status"] == "passed", results["AUTH-ASM-03"]


def test_checks_alone_among_a_group_never_meet_but_run_beside_others(pytester: pytest.Pytester) -> None:
    body = """
GROUP = {"now": 0, "most": 0}

def in_group():
    with LOCK:
        GROUP["now"] += 1
        GROUP["most"] = max(GROUP["most"], GROUP["now"])
    time.sleep(0.1)
    with LOCK:
        GROUP["now"] -= 1

@alone("shares one grant with the other", among="grant")
@rule("AUTH-ASM-01")
def test_first():
    MEET.wait()  # with the free check and one of the group
    in_group()

@rule("AUTH-ASM-02")
def test_free():
    MEET.wait()

@rule("AUTH-ASM-04")
def test_third():
    MEET.wait()

@alone("shares one grant with the other", among="grant")
@rule("AUTH-ASM-03")
def test_second():
    in_group()

@alone("reads what the group saw")
@rule("AUTH-ASM-05")
def test_group_never_met():
    assert GROUP["most"] == 1, GROUP
"""
    results, _ = run(pytester, body, "--concurrency", "4")
    assert {rule: r["status"] for rule, r in results.items()} == {
        "AUTH-ASM-01": "passed",
        "AUTH-ASM-02": "passed",
        "AUTH-ASM-03": "passed",
        "AUTH-ASM-04": "passed",
        "AUTH-ASM-05": "passed",
    }


def test_checks_that_touch_a_group_never_meet_its_alone_checks_but_meet_each_other(pytester: pytest.Pytester) -> None:
    """Checks that touch a group (they create what its alone checks walk) run beside each other and beside any
    check, never beside a check alone among that group, which still runs beside checks that touch nothing."""
    pytester.makeconftest(
        """
from conformance.core.rules import touches

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name.startswith("test_touch"):
            touches(item, "list", "creates what the walk lists")
"""
    )
    body = """
PAIR = threading.Barrier(2, timeout=10)
TOUCHING = {"now": 0}
WALK = {}
WALK_STARTED = threading.Event()

def touch(meet=True):
    with LOCK:
        TOUCHING["now"] += 1
    if meet:
        MEET.wait()  # with the other that touches and a free check: they run at once
    time.sleep(0.05 if meet else 0.4)
    with LOCK:
        TOUCHING["now"] -= 1

@rule("AUTH-ASM-01")
def test_touch_a():
    touch()

@alone("walks the list", among="list")
@rule("AUTH-ASM-02")
def test_walk():
    WALK_STARTED.set()
    PAIR.wait()  # with a check that touches nothing
    with LOCK:
        seen = TOUCHING["now"]
    time.sleep(0.2)
    with LOCK:
        WALK["seen"] = max(seen, TOUCHING["now"])

@rule("AUTH-ASM-03")
def test_touch_b():
    touch()

@rule("AUTH-ASM-04")
def test_free():
    MEET.wait()

@rule("AUTH-ASM-05")
def test_free_beside_the_walk():
    PAIR.wait()

@pytest.fixture
def once_the_walk_runs():
    assert WALK_STARTED.wait(10)

@rule("AUTH-ASM-07")
def test_touch_while_the_walk_runs(once_the_walk_runs):
    touch(meet=False)  # set up while the walk runs: its body waits for the walk's end

@alone("reads what the walk saw")
@rule("AUTH-ASM-06")
def test_the_walk_saw_nothing_touch_the_list():
    assert WALK == {"seen": 0}, WALK
"""
    results, _ = run(pytester, body, "--concurrency", "4")
    assert {rule: r["status"] for rule, r in results.items()} == {f"AUTH-ASM-0{n}": "passed" for n in range(1, 8)}


def test_a_fixture_set_up_from_a_body_is_a_harness_error_naming_alone(pytester: pytest.Pytester) -> None:
    body = (
        """
@pytest.fixture(scope="session")
def lazily():
    return 1

@rule("AUTH-ASM-01")
def test_lazy(request):
    MEET.wait()
    request.getfixturevalue("lazily")

"""
        + COMPANIONS
    )
    results, _ = run(pytester, body, "--concurrency", "3")
    assert results["AUTH-ASM-01"]["status"] == "error"
    assert "marked alone" in str(results["AUTH-ASM-01"]["message"])


def test_the_session_fixtures_close_after_the_last_body(pytester: pytest.Pytester) -> None:
    body = """
CLOSED = []

@pytest.fixture(scope="session")
def client():
    yield "open"
    CLOSED.append(True)

@rule("AUTH-ASM-01")
def test_long(client):
    time.sleep(0.3)
    assert not CLOSED  # still open: the last check's tear-down waited for this body
    with open("long-ended", "w"):
        pass

@rule("AUTH-ASM-02")
def test_last(client):
    pass
"""
    results, _ = run(pytester, body, "--concurrency", "4")
    assert results["AUTH-ASM-01"]["status"] == "passed", results["AUTH-ASM-01"]
    assert (pytester.path / "long-ended").exists()


def test_stop_at_the_first_failure_still_reports_what_ran(pytester: pytest.Pytester) -> None:
    body = """
from conformance import fail

@rule("AUTH-ASM-01")
def test_fails():
    fail("the target broke the rule")

@rule("AUTH-ASM-02")
def test_after():
    time.sleep(0.1)

@rule("AUTH-ASM-03")
def test_never():
    time.sleep(0.1)

@rule("AUTH-ASM-04")
def test_never_either():
    time.sleep(0.1)

@rule("AUTH-ASM-05")
def test_nor_this():
    time.sleep(0.1)

@rule("AUTH-ASM-06")
def test_nor_that():
    time.sleep(0.1)
"""
    results, checks = run(pytester, body, "--concurrency", "2", "-x")
    assert results["AUTH-ASM-01"]["status"] == "failed"
    assert "AUTH-ASM-06" not in results or results["AUTH-ASM-06"]["status"] != "passed"
    assert checks.ret == 1
    report = json.loads(checks.report_path.read_text())
    assert report["results"], "the report was written"


def test_platform_checks_overlap_and_one_marked_alone_meets_none(pytester: pytest.Pytester) -> None:
    """The platform's checks overlap as the tool server's do; one marked alone (as the rate-limit checks are) runs
    with no other body in flight, before and after it the others run at once again."""
    body = """
def busy():
    enter()
    try:
        time.sleep(0.05)
    finally:
        leave()

@rule("TOK-01")
def test_a():
    MEET.wait()

@rule("TOK-02")
def test_b():
    MEET.wait()

@rule("TOK-03")
def test_c():
    MEET.wait()
    busy()

@rule("TOK-04")
def test_d():
    busy()

@alone("reads a request window before and after its own requests")
@rule("RL-02")
def test_window():
    assert IN_FLIGHT["now"] == 0, IN_FLIGHT

@rule("TOK-05")
def test_e():
    busy()

@rule("TOK-06")
def test_f():
    busy()
"""
    pytester.makepyfile(test_overlap=COMMON + body)
    checks = run_checks(
        pytester,
        "--platform-url",
        "https://127.0.0.1:1",
        "test_overlap.py",
        "--concurrency",
        "4",
        how="forked",
    )
    statuses = {r["rule"]: r["status"] for r in checks.results}
    ran = ("TOK-01", "TOK-02", "TOK-03", "TOK-04", "RL-02", "TOK-05", "TOK-06")
    assert {rule: statuses.get(rule) for rule in ran} == dict.fromkeys(ran, "passed"), statuses


def test_what_a_body_prints_is_its_checks_captured_output(pytester: pytest.Pytester) -> None:
    body = """
@rule("AUTH-ASM-01")
def test_a():
    MEET.wait()
    print("said by a")
    assert False

@rule("AUTH-ASM-02")
def test_b():
    MEET.wait()
    print("said by b")

@rule("AUTH-ASM-03")
def test_c():
    MEET.wait()
"""
    _, checks = run(pytester, body, "--concurrency", "3", "-rA")
    sections = checks.output.split("Captured stdout call")
    assert len(sections) == 3, checks.output  # one section per check that printed
    assert "said by a" in checks.output and "said by b" in checks.output
    # Nothing printed raw between the progress lines: each text is in its check's section only.
    progress = checks.output.split("Captured stdout call")[0]
    assert "said by" not in progress.split("=====")[0], progress


def test_what_a_body_prints_while_another_check_is_set_up_is_its_own(pytester: pytest.Pytester) -> None:
    """pytest captures the main thread's set-up of a check with a stream of its own: a body printing meanwhile keeps
    what it printed, never in the captured output of the check being set up."""
    body = """
SETTING_UP = threading.Event()
PRINTED = threading.Event()

@pytest.fixture
def waits_for_the_print():
    SETTING_UP.set()
    assert PRINTED.wait(timeout=10)

@rule("AUTH-ASM-01")
def test_a():
    assert SETTING_UP.wait(timeout=10)
    print("said by a during the set-up of b")
    PRINTED.set()
    assert False

@rule("AUTH-ASM-02")
def test_b(waits_for_the_print):
    assert False
"""
    _, checks = run(pytester, body, "--concurrency", "2", "-rA")
    sections = report_sections("\n".join(checks.outlines))
    assert "said by a during the set-up of b" in sections["test_a"].split("Captured stdout call")[-1], checks.output
    assert "said by a" not in sections["test_b"], checks.output


def test_source_is_parsed_one_thread_at_a_time_while_bodies_overlap(pytester: pytest.Pytester) -> None:
    """CPython's parser keeps one recursion counter for every thread (python/cpython#106905): pytest laying out a
    failure and a body's Hypothesis parsing at once raise SystemError, so parsing is serialised during the loop."""
    body = (
        """
import ast

@rule("AUTH-ASM-01")
def test_a():
    MEET.wait()
    assert hasattr(ast.parse, "__wrapped__"), "ast.parse is not serialised while bodies overlap"

"""
        + COMPANIONS
    )
    results, _ = run(pytester, body, "--concurrency", "3")
    assert results["AUTH-ASM-01"]["status"] == "passed", results["AUTH-ASM-01"]


def test_a_body_waiting_for_its_group_lets_the_next_checks_start(pytester: pytest.Pytester) -> None:
    """The second of a group waits for the first on its own thread: the main thread sets up the check after it,
    whose body the first one waits for."""
    body = """
FREE = threading.Event()

@alone("shares one grant with the other", among="grant")
@rule("AUTH-ASM-01")
def test_first():
    assert FREE.wait(timeout=10), "the check after the group never started"

@alone("shares one grant with the other", among="grant")
@rule("AUTH-ASM-02")
def test_second():
    pass

@rule("AUTH-ASM-03")
def test_free():
    FREE.set()
"""
    results, _ = run(pytester, body, "--concurrency", "4")
    assert {rule: r["status"] for rule, r in results.items()} == dict.fromkeys(
        ("AUTH-ASM-01", "AUTH-ASM-02", "AUTH-ASM-03"), "passed"
    )


# Two checks in flight (the limit with --concurrency 2) that end only once early work has started: work that waited
# for its first user's set-up would never start.
WAITERS = """
from conformance import early

STARTED = threading.Event()

@pytest.fixture(scope="session")
def base():
    return "base"

@rule("AUTH-ASM-01")
def test_first(base):
    assert STARTED.wait(timeout=10), "the early fixture waited for its user's set-up"

@rule("AUTH-ASM-02")
def test_second(base):
    assert STARTED.wait(timeout=10), "the early fixture waited for its user's set-up"
"""

EARLY = (
    WAITERS
    + """
from conformance import needs

@pytest.fixture(scope="session")
@early()
def slow(base):
    STARTED.set()
    observe("the early work ran")
    return base + "+slow"

@pytest.fixture(scope="session")
@early()
def lacking(base):
    observe("the lacking work ran")
    needs("a thing the target lacks", "--thing")

@rule("AUTH-ASM-03")
def test_user(slow):
    assert slow == "base+slow"

@rule("AUTH-ASM-04")
def test_lacking(lacking):
    pass
"""
)


def test_an_early_fixture_starts_once_what_it_takes_is_set_up(pytester: pytest.Pytester) -> None:
    """With two bodies in flight (the limit) waiting for it, only work started before its user's set-up lets them
    end; its user holds its evidence, and what it raised is its users' outcome."""
    results, _ = run(pytester, EARLY, "--concurrency", "2")
    assert {rule: r["status"] for rule, r in results.items()} == {
        "AUTH-ASM-01": "passed",
        "AUTH-ASM-02": "passed",
        "AUTH-ASM-03": "passed",
        "AUTH-ASM-04": "skipped",
    }
    assert "the early work ran" in str(results["AUTH-ASM-03"]["message"])
    assert "the early work ran" not in str(results["AUTH-ASM-01"]["message"])
    assert "a thing the target lacks" in str(results["AUTH-ASM-04"]["message"])


def test_pytests_own_loop_sets_an_early_fixture_up_as_any_other(pytester: pytest.Pytester) -> None:
    results, _ = run(pytester, EARLY.replace("timeout=10", "timeout=0.5"), "--concurrency", "1")
    assert results["AUTH-ASM-01"]["status"] == "failed"  # nothing started it before its user
    assert results["AUTH-ASM-03"]["status"] == "passed"
    assert "the early work ran" in str(results["AUTH-ASM-03"]["message"])
    assert results["AUTH-ASM-04"]["status"] == "skipped"


ASKED = (
    WAITERS
    + """
from conformance.core._early import asks

@pytest.fixture(scope="session")
@early()
def hidden(base):
    STARTED.set()
    return "hidden"

@pytest.fixture(scope="session")
@asks("hidden")
def hidden_or_none(request):
    return request.getfixturevalue("hidden")

@rule("AUTH-ASM-03")
def test_user(hidden_or_none):
    assert hidden_or_none == "hidden"
"""
)


def test_an_early_fixture_asked_for_from_another_fixtures_body_starts_early(pytester: pytest.Pytester) -> None:
    results, _ = run(pytester, ASKED, "--concurrency", "2")
    assert {r["status"] for r in results.values()} == {"passed"}


def test_without_the_shortcut_early_fixtures_wait_for_their_users(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_NO_SHORTCUTS", "early-fixtures")  # a fresh interpreter reads it
    # Only the first check gives up early: the second keeps its slot until the hidden fixture starts, so the user's
    # set-up (the only other thing that starts it) cannot run before the first check has given up, however late
    # its thread starts.
    pytester.makepyfile(test_overlap=COMMON + ASKED.replace("timeout=10", "timeout=0.5", 1))
    checks = run_checks(
        pytester, "--target-url", DEAD_TOOL_SERVER, "test_overlap.py", "--concurrency", "2", how="subprocess"
    )
    results = {str(r["rule"]): r for r in checks.results}
    assert results["AUTH-ASM-01"]["status"] == "failed"  # nothing started it ahead
    assert results["AUTH-ASM-03"]["status"] == "passed"


def test_a_body_logs_into_its_own_checks_capture(pytester: pytest.Pytester) -> None:
    """A body's log records (its fan-out's included) are its check's captured log, never that of the check whose
    set-up the main thread runs meanwhile (pytest captures a phase's records with handlers that see every thread)."""
    body = """
import logging
from conformance import fail
from conformance.host import fanout

LOGGED = threading.Event()

@pytest.fixture(scope="session")
def waits_for_the_log():
    assert LOGGED.wait(timeout=10)

@rule("AUTH-ASM-01")
def test_logs():
    logging.getLogger("target").warning("record-of-the-body")
    fanout.each([1, 2], lambda n: logging.getLogger("target").warning("record-of-case-%d", n), limit=2)
    LOGGED.set()
    fail("see the captured log")

@rule("AUTH-ASM-02")
def test_set_up_meanwhile(waits_for_the_log):
    fail("nothing logged here")
"""
    results, checks = run(pytester, body, "--concurrency", "2", "-rA", "--log-level", "INFO")
    assert {r["status"] for r in results.values()} == {"failed"}
    output = "\n".join(checks.outlines)
    sections = output.split("_ test_set_up_meanwhile _")
    assert len(sections) == 2, output
    logs, meanwhile = sections[0].split("_ test_logs _")[-1], sections[1].split("short test summary")[0]
    for record in ("record-of-the-body", "record-of-case-1", "record-of-case-2"):
        assert record in logs, output
        assert record not in meanwhile, output


def test_early_work_may_take_the_value_of_early_work_started_before(pytester: pytest.Pytester) -> None:
    """A chain of early fixtures starts ahead of all their users; each user holds only its own fixture's evidence."""
    body = (
        WAITERS
        + """

@pytest.fixture(scope="session")
@early()
def first(base):
    observe("first's work")
    return base + "+first"

@pytest.fixture(scope="session")
@early()
def second(first):
    STARTED.set()
    observe("second's work")
    return first + "+second"

@rule("AUTH-ASM-03")
def test_first_user(first):
    assert first == "base+first"

@rule("AUTH-ASM-04")
def test_second_user(second):
    assert second == "base+first+second"
"""
    )
    results, _ = run(pytester, body, "--concurrency", "2")
    assert {r["status"] for r in results.values()} == {"passed"}
    assert "first's work" in str(results["AUTH-ASM-03"]["message"])
    assert "second's work" not in str(results["AUTH-ASM-03"]["message"])
    assert "second's work" in str(results["AUTH-ASM-04"]["message"])


def test_a_check_waiting_for_early_work_lets_the_checks_after_it_be_set_up_first(pytester: pytest.Pytester) -> None:
    """The early work ends only once a later check's body has run, so that check must be set up before the check
    that waits for the work; one that would set up a fixture the waiting check uses stays behind it (the fixture's
    record goes to its first user in collection order), and the checks are reported in collection order."""
    body = """
from conformance import early

LATER_RAN = threading.Event()

@pytest.fixture(scope="session")
def base():
    return "base"

@pytest.fixture(scope="session")
@early()
def slow(base):
    assert LATER_RAN.wait(timeout=10), "no check was set up while the early work ran"
    return "slow"

@pytest.fixture(scope="session")
def shared():
    observe("shared was set up here")
    return "shared"

@rule("AUTH-ASM-01")
def test_starts_it(base):
    pass

@rule("AUTH-ASM-02")
def test_waits(slow, shared):
    assert slow == "slow"

@rule("AUTH-ASM-03")
def test_shares(shared):
    pass

@rule("AUTH-ASM-04")
def test_later():
    LATER_RAN.set()
"""
    results, checks = run(pytester, body, "--concurrency", "4", "-v")
    assert {rule: r["status"] for rule, r in results.items()} == dict.fromkeys(
        ("AUTH-ASM-01", "AUTH-ASM-02", "AUTH-ASM-03", "AUTH-ASM-04"), "passed"
    ), results
    assert "shared was set up here" in str(results["AUTH-ASM-02"]["message"])
    assert "shared was set up here" not in str(results["AUTH-ASM-03"]["message"])
    lines = [line for line in checks.outlines if "::test_" in line and "PASSED" in line]
    assert [line.split("::")[1].split()[0] for line in lines] == [
        "test_starts_it",
        "test_waits",
        "test_shares",
        "test_later",
    ]


AT_THE_FLOOR = """
from conformance.core import _context
from conformance.pytest import _overlap

_overlap.cores_busy = lambda: False  # a quiet machine, whatever this one's load: the round trips decide
SIX = threading.Barrier(6, timeout=10)

@pytest.fixture(scope="session")
def distant():
    for _ in range(16):  # exchanges that all take the network's round trip: the host waits on the network
        _context.ROUND_TRIPS.add(0.05)

"""
AT_THE_FLOOR += "\n".join(
    f"""
@rule("AUTH-ASM-0{n}")
def test_meet_{n}(distant):
    SIX.wait()
"""
    for n in range(1, 7)
)


def test_auto_runs_more_checks_at_once_while_exchanges_take_the_networks_round_trip(pytester: pytest.Pytester) -> None:
    """Six bodies meet at a barrier: only more than the four checks at once of a fixed default let them."""
    results, _ = run(pytester, AT_THE_FLOOR)  # --concurrency auto, the default
    assert {r["status"] for r in results.values()} == {"passed"}, results
    results, _ = run(pytester, AT_THE_FLOOR.replace("timeout=10", "timeout=1"), "--concurrency", "4")
    assert not any(r["status"] == "passed" for r in results.values()), results  # the barrier broke


def test_a_chain_of_early_work_starts_at_once_whatever_the_order_its_users_name_it(pytester: pytest.Pytester) -> None:
    """``second`` takes ``first``; both are first used by the last check, which names ``second`` first. Both start
    once ``test_waits`` is set up: the check marked alone after it waits for its body, which ends only once
    ``second`` has started."""
    body = """
from conformance import early

SECOND = threading.Event()

@pytest.fixture(scope="session")
def base():
    return "base"

@pytest.fixture(scope="session")
@early()
def first(base):
    return base + "+first"

@pytest.fixture(scope="session")
@early()
def second(first):
    SECOND.set()
    return first + "+second"

@rule("AUTH-ASM-01")
def test_waits(base):
    assert SECOND.wait(timeout=10), "second started only once its user was set up"

@alone("the loop waits for every body before it")
@rule("AUTH-ASM-02")
def test_alone():
    pass

@rule("AUTH-ASM-03")
def test_user(second, first):
    assert second == "base+first+second"
"""
    results, _ = run(pytester, body, "--concurrency", "4")
    assert {rule: r["status"] for rule, r in results.items()} == dict.fromkeys(
        ("AUTH-ASM-01", "AUTH-ASM-02", "AUTH-ASM-03"), "passed"
    ), results


def test_an_early_generator_fixture_is_torn_down_where_pytest_tears_it_down(pytester: pytest.Pytester) -> None:
    """Its work runs ahead up to its ``yield``; its teardown runs once, when the session's fixtures are torn down,
    after the last check that uses it."""
    body = """
import pathlib
from conformance import early

EVENTS = pathlib.Path("events.txt")

def event(what):
    EVENTS.write_text(EVENTS.read_text() + what + "," if EVENTS.exists() else what + ",")

@pytest.fixture(scope="session")
def base():
    return "base"

@pytest.fixture(scope="session")
@early()
def served(base):
    event("up")
    yield base + "+served"
    event("down")

@rule("AUTH-ASM-01")
def test_starts_it(base):
    pass

@rule("AUTH-ASM-02")
def test_user(served):
    assert served == "base+served"

@rule("AUTH-ASM-03")
def test_later_user(served):
    assert EVENTS.read_text() == "up,"
"""
    results, _ = run(pytester, body, "--concurrency", "4")
    assert {r["status"] for r in results.values()} == {"passed"}, results
    assert (pytester.path / "events.txt").read_text() == "up,down,"


def report_sections(output: str) -> dict[str, str]:
    """The sections of a run's console output, by title: each check's report (from its "_ name _" line to the next
    section's, its captured output's parts included) and the summary's sections."""
    sections: dict[str, str] = {}
    name, lines = "", []
    for line in output.splitlines():
        title = line.strip("_=- ")
        part_of_a_check = re.fullmatch(r"Captured (stdout|stderr|log) (setup|call|teardown)", title)
        if line.startswith(("___", "===", "---")) and title and not part_of_a_check:
            sections[name] = "\n".join(lines)
            name, lines = title, []
        lines.append(line)
    sections[name] = "\n".join(lines)
    return sections


EARLY_LOGS = """
import logging
from conformance import early, fail
from conformance.host import fanout

SETTING_UP = threading.Event()
LOGGED = threading.Event()

@pytest.fixture(scope="session")
def base():
    return "base"

@pytest.fixture(scope="session")
def waits_for_the_log():
    SETTING_UP.set()
    assert LOGGED.wait(timeout=10)

@pytest.fixture(scope="session")
@early()
def logging_work(base):
    assert SETTING_UP.wait(timeout=10)
    logging.getLogger("target").warning("record-of-the-early-work")
    fanout.each([1, 2], lambda n: logging.getLogger("target").warning("record-of-its-case-%d", n), limit=2)
    LOGGED.set()
    return base

@rule("AUTH-ASM-01")
def test_starts_it(base):
    pass

@rule("AUTH-ASM-02")
def test_set_up_meanwhile(waits_for_the_log):
    fail("nothing logged here")

@rule("AUTH-ASM-03")
def test_user(logging_work, caplog):
    assert [r.getMessage() for r in caplog.get_records("setup")][:1] == ["record-of-the-early-work"]
    fail("see the captured log")
"""


def test_early_works_log_records_are_its_first_users(pytester: pytest.Pytester) -> None:
    """Early work logs (its fan-out's threads included) while the main thread sets another check up: the records
    are its first user's captured log of the set-up (and its ``caplog``'s), never that other check's."""
    results, checks = run(pytester, EARLY_LOGS, "--concurrency", "2", "-rA", "--log-level", "INFO")
    output = "\n".join(checks.outlines)
    sections = report_sections(output)
    user, meanwhile = sections["test_user"], sections["test_set_up_meanwhile"]
    for record in ("record-of-the-early-work", "record-of-its-case-1", "record-of-its-case-2"):
        assert record not in meanwhile, output
        assert record in user.split("Captured log setup")[-1], output
    assert "see the captured log" in str(results["AUTH-ASM-03"]["message"]), output  # caplog had them too
    assert "Captured log of no check" not in output


def test_what_early_work_prints_is_its_first_users(pytester: pytest.Pytester) -> None:
    """Early work prints (its fan-out's threads included) while the main thread sets another check up: what it
    printed is its first user's captured output of the set-up, never that other check's."""
    body = (
        EARLY_LOGS.replace(
            'logging.getLogger("target").warning("record-of-the-early-work")', 'print("printed-by-the-early-work")'
        )
        .replace(
            'lambda n: logging.getLogger("target").warning("record-of-its-case-%d", n)',
            'lambda n: print(f"printed-by-its-case-{n}", file=sys.stderr)',
        )
        .replace(
            '    assert [r.getMessage() for r in caplog.get_records("setup")][:1] == ["record-of-the-early-work"]\n', ""
        )
        .replace("import logging", "import logging, sys")
    )
    assert "printed-by-its-case" in body
    results, checks = run(pytester, body, "--concurrency", "2", "-rA")
    output = "\n".join(checks.outlines)
    sections = report_sections(output)
    user, meanwhile = sections["test_user"], sections["test_set_up_meanwhile"]
    assert "printed-by-the-early-work" in user.split("Captured stdout setup")[-1].split("Captured")[0], output
    for case in ("printed-by-its-case-1", "printed-by-its-case-2"):
        assert case in user.split("Captured stderr setup")[-1].split("Captured")[0], output
    for printed in ("printed-by-the-early-work", "printed-by-its-case-1", "printed-by-its-case-2"):
        assert printed not in meanwhile, output
    assert results["AUTH-ASM-03"]["status"] == "failed", output


def test_a_record_of_a_thread_of_no_check_is_the_sessions(pytester: pytest.Pytester) -> None:
    """A record made on a thread started without a copy of a context, while the main thread sets a check up, is
    no check's: the run shows it once it has ended, in a section of its own."""
    body = """
import logging
from conformance import fail

SETTING_UP = threading.Event()
LOGGED = threading.Event()

def log_of_no_check():
    assert SETTING_UP.wait(timeout=10)
    logging.getLogger("library").warning("record-of-no-check")
    LOGGED.set()

@pytest.fixture(scope="session")
def waits_for_the_log():
    SETTING_UP.set()
    assert LOGGED.wait(timeout=10)

@rule("AUTH-ASM-01")
def test_starts_a_thread():
    threading.Thread(target=log_of_no_check, daemon=True).start()

@rule("AUTH-ASM-02")
def test_set_up_meanwhile(waits_for_the_log):
    fail("nothing logged here")
"""
    results, checks = run(pytester, body, "--concurrency", "2", "-rA")
    output = "\n".join(checks.outlines)
    assert results["AUTH-ASM-02"]["status"] == "failed", output
    sections = report_sections(output)
    assert "record-of-no-check" not in sections["test_set_up_meanwhile"], output
    assert "record-of-no-check" not in sections.get("test_starts_a_thread", ""), output
    assert "record-of-no-check" in sections["Captured log of no check"], output


def test_a_record_of_early_work_after_its_first_user_took_it_is_no_checks(pytester: pytest.Pytester) -> None:
    """A thread the work started in a copy of its context logs once the fixture's first user has taken the work's
    outcome: no check made it (the first user's set-up has been reported), so the run shows it in its own section."""
    body = """
import contextvars, logging
from conformance import early, fail

GO = threading.Event()
DONE = threading.Event()

def log_later():
    assert GO.wait(timeout=10)
    logging.getLogger("library").warning("record-after-it-was-taken")
    DONE.set()

@pytest.fixture(scope="session")
def base():
    return "base"

@pytest.fixture(scope="session")
@early()
def leaves_a_thread(base):
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(log_later,), daemon=True).start()
    return base

@rule("AUTH-ASM-01")
def test_starts_it(base):
    pass

@rule("AUTH-ASM-02")
def test_user(leaves_a_thread):
    GO.set()
    assert DONE.wait(timeout=10)
    fail("the record came after the set-up")
"""
    results, checks = run(pytester, body, "--concurrency", "2", "-rA")
    output = "\n".join(checks.outlines)
    assert results["AUTH-ASM-02"]["status"] == "failed", output
    sections = report_sections(output)
    assert "record-after-it-was-taken" not in sections["test_user"], output
    assert "record-after-it-was-taken" in sections["Captured log of no check"], output


def test_the_mcp_sdks_records_in_early_work_are_its_first_users(pytester: pytest.Pytester) -> None:
    """The MCP SDK logs on its own event loop's thread, in tasks that copy the context of the call that started
    them: a tool server answering ``[]`` to ``initialize`` in early work makes the SDK log a parse error there, which
    is the early work's first user's captured log, not that of the check the main thread sets up meanwhile."""
    body = """
import http.server
from conformance import early, fail

SETTING_UP = threading.Event()
LISTED = threading.Event()

class AnswersAnEmptyArray(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"[]")

    def log_message(self, *args):
        pass

SERVER = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AnswersAnEmptyArray)
threading.Thread(target=SERVER.serve_forever, daemon=True).start()

@pytest.fixture(scope="session")
def waits_for_the_listing():
    SETTING_UP.set()
    assert LISTED.wait(timeout=20)

@pytest.fixture(scope="session")
@early()
def listing(host_http):
    from conformance.host.mcp_session import McpSession

    assert SETTING_UP.wait(timeout=10)
    try:
        with McpSession(host_http, f"http://127.0.0.1:{SERVER.server_address[1]}/mcp") as session:
            return session.list_tools()
    except Exception as exc:
        return type(exc).__name__
    finally:
        LISTED.set()

@rule("AUTH-ASM-01")
def test_starts_it(host_http):
    pass

@rule("AUTH-ASM-02")
def test_set_up_meanwhile(waits_for_the_listing):
    fail("nothing logged here")

@rule("AUTH-ASM-03")
def test_user(listing):
    fail(f"the listing: {listing}")
"""
    results, checks = run(pytester, body, "--concurrency", "2", "-rA", "--allow-insecure-loopback")
    output = "\n".join(checks.outlines)
    assert "McpSessionError" in str(results["AUTH-ASM-03"]["message"]), output
    sections = report_sections(output)
    assert "Error parsing JSON response" not in sections["test_set_up_meanwhile"], output
    assert "Error parsing JSON response" in sections["test_user"].split("Captured log setup")[-1], output


UNLESS = """
from conformance import fail

PAIR = threading.Barrier(2, timeout=10)

def meet():
    try:
        PAIR.wait()
    except threading.BrokenBarrierError:
        fail("the two checks never met")

@rule("AUTH-ASM-01")
def test_first():
    meet()

@alone("changes what the others rely on, unless the run has a test issuer", unless=("test_issuer",))
@rule("AUTH-ASM-02")
def test_alone_unless():
    meet()
"""


def test_a_check_alone_unless_settings_runs_beside_others_when_they_are_set(pytester: pytest.Pytester) -> None:
    results, _ = run(pytester, UNLESS, "--concurrency", "4", "--test-issuer", "https://issuer.example")
    assert {r["status"] for r in results.values()} == {"passed"}, results


def test_a_check_alone_unless_settings_runs_alone_when_they_are_not(pytester: pytest.Pytester) -> None:
    results, _ = run(pytester, UNLESS.replace("timeout=10", "timeout=0.5"), "--concurrency", "4")
    assert results["AUTH-ASM-01"]["status"] == "failed"  # its partner waited for it to end: they never met
    assert results["AUTH-ASM-02"]["status"] == "failed"
    assert "never met" in str(results["AUTH-ASM-01"]["message"])
