"""Every copy of a document: each well-known copy of the AS metadata is judged (AUTH-ASM-01 endpoints agree,
AUTH-ASM-02 the issuer of each), and AUTH-CHAL-02 tells the tools that need a linked account from the others."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from conformance.host._guard import UrlGuard
from conformance.host.asmeta import as_metadata_urls, discover_as_metadata
from conformance.host.http import HostHTTP
from conformance.host.mcp import RawResult
from conformance.suites._cases import case_count
from conformance.suites._tool_access import CallOutcome
from conformance.suites.auth import test_asmeta, test_prm, test_tools
from conformance.suites.profile import test_result
from tests._checks_run import DEAD_TOOL_SERVER, run_checks
from tests.suites.test_verdict_classes import makeconftest

ISSUER = "https://as.example/tenant"


def metadata(issuer: str, **extra: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": "https://as.example/authorize",
        "token_endpoint": "https://as.example/token",
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }


def client(handler: Any) -> HostHTTP:
    # allow_private_network: no DNS look-ups for the made-up hosts of these tests.
    return HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True), retry=None)


def test_every_served_copy_is_kept_with_its_location() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/.well-known/oauth-authorization-server"):
            return httpx.Response(200, json=metadata(ISSUER))
        if request.url.path == "/tenant/.well-known/openid-configuration":
            return httpx.Response(200, json=metadata(ISSUER + "/", token_endpoint="https://as.example/v1/token"))
        return httpx.Response(404)

    found = discover_as_metadata(client(handler), ISSUER, try_all=True)
    assert found.issuer_matches and found.via == "oauth-authorization-server (path inserted)"
    cases = {test_asmeta.copy_case(via): doc["issuer"] for via, _, doc in found.copies}
    assert cases == {test_asmeta.COPY_OAUTH: ISSUER, test_asmeta.COPY_OIDC_APPENDED: ISSUER + "/"}
    wrong = test_asmeta.disagreements(found.copies, ("token_endpoint", "authorization_endpoint"))
    assert len(wrong) == 1 and wrong[0].startswith("token_endpoint differs: ") and "v1/token" in wrong[0]


def test_each_location_of_an_issuer_is_one_case() -> None:
    with_path = {test_asmeta.copy_case(via) for via, _ in as_metadata_urls(ISSUER)}
    assert with_path == {test_asmeta.COPY_OAUTH, test_asmeta.COPY_OIDC, test_asmeta.COPY_OIDC_APPENDED}
    pathless = {test_asmeta.copy_case(via) for via, _ in as_metadata_urls("https://as.example")}
    assert pathless == {test_asmeta.COPY_OAUTH, test_asmeta.COPY_OIDC}


def test_a_member_one_copy_omits_is_no_disagreement() -> None:
    copies = [
        ("a", "https://as.example/1", metadata(ISSUER, registration_endpoint="https://as.example/reg")),
        ("b", "https://as.example/2", metadata(ISSUER)),
    ]
    assert test_asmeta.disagreements(copies, test_asmeta.CONSISTENT_MEMBERS) == []


def outcome(status: int, body: dict[str, Any] | None) -> CallOutcome:
    raw = RawResult(status, httpx.Headers(), body, [], None, "call", None, "", b"")
    return CallOutcome(raw)


def test_a_tool_demands_authorization_by_a_401_or_an_auth_error_result() -> None:
    challenge = {"mcp/www_authenticate": ['Bearer resource_metadata="https://rs/x", error="invalid_token"']}
    auth_error = {"result": {"isError": True, "content": [{"type": "text", "text": "no"}], "_meta": challenge}}
    data = {"result": {"isError": False, "content": [{"type": "text", "text": "rows"}]}}
    assert test_tools.demands_authorization(outcome(401, None))
    assert test_tools.demands_authorization(outcome(200, auth_error))
    assert not test_tools.demands_authorization(outcome(200, data))
    assert not test_tools.demands_authorization("the request failed")
    assert not test_tools.demands_authorization(None)


def test_the_tables_are_in_the_rules_listing() -> None:
    assert test_asmeta.ASM01 and test_asmeta.ASM02 and test_prm.PRM05 and test_tools.CHAL02
    assert test_result.PROF12 and test_result.PROF14
    counts = {r: case_count(r) for r in ("AUTH-ASM-01", "AUTH-ASM-02", "AUTH-PRM-05", "AUTH-CHAL-02")}
    assert counts == {"AUTH-ASM-01": 7, "AUTH-ASM-02": 4, "AUTH-PRM-05": 3, "AUTH-CHAL-02": 2}
    assert (case_count("PROF-12"), case_count("PROF-14")) == (5, 6)


# -- AUTH-CHAL-02 judges each tool that needs a linked account -------------------------------------------------

CHAL_STUBS = """
import httpx
import pytest
from conformance.judges.declarations import DeclarationChecker
from conformance.host.mcp import RawResult
from conformance.suites._tool_access import CallOutcome, Listing
from conformance.suites.auth import test_tools

CHALLENGE = 'Bearer resource_metadata="https://rs/.well-known", error="invalid_token", error_description="log in"'
DECLARED = {"name": "files", "inputSchema": {"type": "object"},
            "securitySchemes": [{"type": "oauth2", "scopes": ["files:read"]}]}
NOTES = {"name": "notes", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
if DECLARE_NOTES:
    NOTES["securitySchemes"] = DECLARED["securitySchemes"]

@pytest.fixture(scope="module")
def listing():
    return Listing([DECLARED, NOTES], [], [], DeclarationChecker(vendor="openai"), False)

def auth_error():
    result = {"isError": True, "content": [{"type": "text", "text": "log in"}],
              "_meta": {"mcp/www_authenticate": [CHALLENGE]}}
    raw = RawResult(status=200, headers=httpx.Headers(), message={"result": result}, messages=[], challenge=None,
                    step="call", session_id=None, content_type="application/json", body=b"")
    return CallOutcome(raw)

@pytest.fixture(scope="module")
def anonymous():
    return test_tools.Anonymous({"files": auth_error(), "notes": auth_error()})
"""


@pytest.mark.parametrize(("declare_notes", "status"), [(True, "passed"), (False, "failed")])
def test_chal_02_judges_every_tool_that_needs_a_linked_account(
    pytester: pytest.Pytester, declare_notes: bool, status: str
) -> None:
    """A tool declaring nothing whose anonymous call demands authorization: the linking UI would not appear for it,
    though the first oauth2 tool is fine."""
    makeconftest(pytester, CHAL_STUBS.replace("DECLARE_NOTES", repr(declare_notes)))
    pytester.makepyfile(
        test_chal="""
import pytest
from conformance.suites.auth.test_tools import test_linking_ui_can_appear

@pytest.fixture(scope="session")
def metadata_published():
    return True  # the metadata is published (what the run's discovery finds)
"""
    )
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_chal.py").first
    assert result["status"] == status, result
    if status == "failed":
        assert "the linking UI would not appear for 'notes': the tool declares no securitySchemes" in result["message"]
        assert "'files'" not in result["message"].split("cases tried")[0]
    else:
        assert "cases tried (1/2)" in result["message"] or "cases tried (2/2)" in result["message"], result
