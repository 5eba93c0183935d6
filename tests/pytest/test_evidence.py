"""The exchanges of the session fixtures a check uses, as its evidence, in the order its set-up met them."""

from __future__ import annotations

import pytest

from tests._checks_run import DEAD_TOOL_SERVER, run_checks

CONFTEST = """
import pytest

from conformance.core import _context
from conformance.host import Redactor, record_exchange

REDACTOR = Redactor()


class Fetched:
    def __init__(self, exchanges):
        self.exchanges = exchanges


def fetch(path):
    position = _context.mark()
    record_exchange(REDACTOR, method="GET", url="https://rs.test" + path, status=200)
    return Fetched(_context.since(position))


@pytest.fixture(scope="session")
def listing():
    return fetch("/listing")


@pytest.fixture(scope="session")
def profile_1():
    return fetch("/profile")


@pytest.fixture(scope="session")
def from_listing(listing):
    return listing


@pytest.fixture(scope="session")
def asks_for_the_profile(request):
    return request.getfixturevalue("profile_1")


@pytest.fixture
def probe():
    record_exchange(REDACTOR, method="GET", url="https://rs.test/probe", status=200)


@pytest.fixture
def probes(probe):
    record_exchange(REDACTOR, method="GET", url="https://rs.test/probes", status=200)
"""

CHECKS = """
from conformance import rule


@rule("AUTH-PRM-01")
def test_fetches(listing, probe):
    pass


@rule("AUTH-PRM-02")
def test_through_another_fixture(from_listing, probes):
    pass


@rule("AUTH-PRM-03")
def test_no_function_fixture(listing):
    pass


@rule("AUTH-PRM-04")
def test_no_session_document(probe):
    pass


@rule("AUTH-PRM-05")
def test_sets_up_the_profile(profile_1):
    pass


@rule("AUTH-PRM-06")
def test_asked_for_by_a_fixture(asks_for_the_profile, probe):
    pass


@rule("AUTH-ASM-01")
def test_asked_for_without_a_function_fixture(listing, asks_for_the_profile):
    pass
"""


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_session_documents_exchanges_come_before_the_checks_own(pytester: pytest.Pytester, concurrency: str) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_checks=CHECKS)
    run = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "--concurrency", concurrency, "test_checks.py")
    assert run.ret == 0, run.output
    evidence = {rule: [e["url"] for e in result["evidence"]] for rule, result in run.by_rule.items()}
    assert evidence == {
        "AUTH-PRM-01": ["https://rs.test/listing", "https://rs.test/probe"],  # fetched by its own set-up
        "AUTH-PRM-02": ["https://rs.test/listing", "https://rs.test/probe", "https://rs.test/probes"],
        "AUTH-PRM-03": ["https://rs.test/listing"],
        "AUTH-PRM-04": ["https://rs.test/probe"],
        "AUTH-PRM-05": ["https://rs.test/profile"],
        # A fixture set up for the check asked for the profile from its body: the profile's exchanges are the
        # check's too; a later check whose fixture is set up already does not ask again.
        "AUTH-PRM-06": ["https://rs.test/profile", "https://rs.test/probe"],
        "AUTH-ASM-01": ["https://rs.test/listing"],
    }
