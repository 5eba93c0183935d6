"""PROF-09 over its cases: two accounts get two ids, and account 1's subject under another trusted issuer (the
harness's test issuer) gets an id other than account 1's (contract A Profile id rules 3 and 6).

The check runs (pytester, forked) against a stub profile tool that answers each token by its (iss, sub), or by its
sub alone when told to (the careless store); account 2 and the test issuer are present or not as each test says.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests._checks_run import DEAD_TOOL_SERVER, run_checks

STUBS = """
import time
from pathlib import Path
from types import SimpleNamespace
import jwt, pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from conformance import needs
from conformance.host._redact import Redactor
from conformance.suites.profile.client import AccountProfile

BY_SUBJECT = {BY_SUBJECT!r}  # the stub keys profiles by sub alone
SECOND = {SECOND!r}  # a second test account is configured
ISSUER = {ISSUER!r}  # the harness's test issuer is configured

KEY_FILE = Path("test-issuer-key.pem")
KEY_FILE.write_bytes(
    ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
)

def account(sub):
    claims = {{"iss": "https://as.test", "sub": sub, "aud": "https://rs.test/mcp", "exp": int(time.time()) + 300}}
    token = jwt.encode(claims, "k" * 32, algorithm="HS256")
    return SimpleNamespace(access_token=token, id_token=None, scopes=("tools.read",), resource="https://rs.test/mcp")

def profile_id(token):
    claims = jwt.decode(token, options={{"verify_signature": False}})
    return "usr_" + (claims["sub"] if BY_SUBJECT else f"{{claims['iss']}}|{{claims['sub']}}")

class Outcome:
    refused_http = auth_error_result = False
    def __init__(self, token):
        self.result = {{"structuredContent": {{"id": profile_id(token)}}}}
    def describe(self):
        return "a profile"

class Caller:
    name = "get_profile"
    def call(self, token=None, **kw):
        return Outcome(token)

def profile(sub):
    acct = account(sub)
    return AccountProfile(acct, {{"structuredContent": {{"id": profile_id(acct.access_token)}}}}, {{}})

@pytest.fixture(scope="session")
def profile_1():
    return profile("alice")

@pytest.fixture(scope="session")
def profile_2():
    if not SECOND:
        needs("a second test account", "CONFORMANCE_TEST_USER_2 and CONFORMANCE_TEST_PASSWORD_2")
    return profile("bob")

@pytest.fixture(scope="session")
def profile_caller():
    return Caller()

@pytest.fixture(scope="session")
def profile_tool():
    return {{"name": "get_profile", "securitySchemes": [{{"type": "oauth2", "scopes": ["tools.read"]}}]}}

@pytest.fixture(scope="session")
def conformance_settings():
    values = {{"test_issuer": "https://test-issuer.test", "test_issuer_key_file": str(KEY_FILE.resolve())}}
    return SimpleNamespace(get=lambda name, default=None: values.get(name, default) if ISSUER else default)

@pytest.fixture(scope="session")
def host_http():
    return SimpleNamespace(redactor=Redactor())
"""


def run(pytester: pytest.Pytester, *, by_subject: bool = False, second: bool = True, issuer: bool = True) -> Any:
    pytester.makeconftest(STUBS.format(BY_SUBJECT=by_subject, SECOND=second, ISSUER=issuer))
    pytester.makepyfile(
        test_t="from conformance.suites.profile.test_ids import test_distinct_profiles_distinct_ids\n"
        "from conformance.suites.profile.conftest import profile_2_or_need\n"
    )
    results = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_t.py", how="forked").results
    (result,) = [r for r in results if r["rule"] == "PROF-09"]
    return result


def test_one_id_per_subject_whatever_the_issuer_fails_naming_the_case(pytester: pytest.Pytester) -> None:
    result = run(pytester, by_subject=True)
    assert result["status"] == "failed", result
    assert "under the test issuer" in result["message"] and "Profile id rules 3, 6" in result["message"], result


def test_ids_per_issuer_and_subject_pass_with_both_cases_tried(pytester: pytest.Pytester) -> None:
    result = run(pytester)
    assert result["status"] == "passed", result
    assert "cases tried (2/2)" in str(result), result


def test_without_a_second_account_the_rule_is_skipped_naming_it(pytester: pytest.Pytester) -> None:
    result = run(pytester, second=False)
    assert result["status"] == "skipped", result
    assert "two test accounts" in str(result) and "CONFORMANCE_TEST_USER_2" in str(result), result


def test_without_the_test_issuer_two_accounts_still_decide(pytester: pytest.Pytester) -> None:
    result = run(pytester, issuer=False)
    assert result["status"] == "passed", result
    assert "cases tried (1/2)" in str(result) and "--test-issuer" in str(result), result
