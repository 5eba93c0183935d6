"""A secret the run learns after it was written into a report reaches none of pytest's outputs either.

A check's message, a skip reason, captured output and log records are recorded when the check ends; a later check
may learn that the text held a secret (an authorization code, a token). The last redaction pass covers what pytest
itself prints and writes: the terminal summary (failures, skip reasons, captured sections), junit.xml (captured
output included) and the log file, besides report.json and report.html.
"""

from __future__ import annotations

import pytest

from tests._checks_run import run_checks

LATE = "late-secret-7c4e2a9b"

CHECKS = """
import logging

import pytest
from conformance import fail, rule

LATE = "late-" + "secret-7c4e2a9b"  # not in the source as one string: the test file is not an output

@rule("AUTH-PRM-01")
def test_skipped_with_it():
    pytest.skip(f"skipped near {LATE}")

@rule("AUTH-PRM-02")
def test_fails_with_it():
    fail(f"the target said {LATE}")

@rule("AUTH-PRM-03")
def test_prints_and_logs_it():
    print(f"stdout {LATE}")
    logging.getLogger("target").warning("log %s", LATE)
    fail("see the captured output")

@rule("AUTH-PRM-05")
def test_records_it(host_http):
    from conformance.host.http import record_exchange

    record_exchange(
        host_http.redactor, method="GET", url=f"https://127.0.0.1:1/cb?state={LATE}", status=200,
        response_headers={"content-type": "text/plain", "set-cookie": f"sid={LATE}"}, response_body=LATE.encode(),
    )
    fail("see the evidence")

@rule("AUTH-PRM-04")
def test_learns_it(host_http):
    host_http.redactor.add_secret(LATE)
"""


def test_a_secret_learnt_late_is_scrubbed_from_pytests_outputs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_late=CHECKS)
    result = run_checks(
        pytester,
        "--target-url",
        "https://127.0.0.1:1/mcp",
        "-rA",
        "--log-level",
        "INFO",
        "--log-file",
        "out/run.log",
        "-o",
        "junit_logging=all",
        "test_late.py",
        how="subprocess",
    )
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    # The checks ran as written: the skip reason, the failure and the captured sections are all shown.
    assert "skipped near [REDACTED]" in output and "the target said [REDACTED]" in output, output
    assert "stdout [REDACTED]" in output and "log [REDACTED]" in output, output
    out = pytester.path / "out"
    names = ("report.json", "report.html", "report.har", "junit.xml", "run.log")
    written = {name: (out / name).read_text() for name in names}
    assert "[REDACTED]" in written["junit.xml"] and "[REDACTED]" in written["run.log"]
    # The exchange recorded before the secret was known is in the HAR, scrubbed (URL, cookie, body).
    assert "https://127.0.0.1:1/cb?state=[REDACTED]" in written["report.har"]
    assert LATE not in output
    assert not [name for name, text in written.items() if LATE in text]
