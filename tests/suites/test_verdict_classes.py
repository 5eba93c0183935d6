"""The classes of false verdicts, each proven on the smallest thing that shows it.

- a check never spends a shared session (the shared token renews itself: refresh, else link again);
- no vacuous passes (AUTH-REAUTH-01 needs two different scope sets; PROF-08 needs its three cases).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import jwt
import pytest

from conformance.host.oauth import AuthorizationRequest, OAuthClient, TokenResult
from conformance.suites._linking import FlowAttempt, LinkedAccount
from conformance.suites.auth.test_reauth import scope_sets
from tests._checks_run import DEAD_TOOL_SERVER, run_checks
from tests._preloaded import mcp_sdk  # noqa: F401 - a fixture
from tests._serving import serve_http

# The runs below certify a tool server at https://127.0.0.1:1/mcp, where nothing listens: their stubs stand for
# everything the checks read, so the target is taken as given (without this, the harness finds nothing answering
# there and skips every check for want of a reachable target).
TARGET_AS_GIVEN = """

@pytest.fixture(scope="session")
def tool_server_target(conformance_settings):
    return conformance_settings.target("tool_server")
"""


def makeconftest(pytester: pytest.Pytester, source: str) -> None:
    pytester.makeconftest("import pytest\n" + source + TARGET_AS_GIVEN)


def _jwt(exp: float) -> str:
    return jwt.encode({"sub": "alice", "exp": int(exp), "iat": int(time.time())}, "k" * 32, algorithm="HS256")


def _token(access: str, refresh: str | None = None) -> TokenResult:
    body: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "expires_in": 60}
    if refresh:
        body["refresh_token"] = refresh
    return TokenResult(httpx.Response(200, json=body), body, "none")


def _attempt(token: TokenResult) -> FlowAttempt:
    request = AuthorizationRequest(
        "https://as/authorize", "client", "https://host/cb", "https://rs/mcp", "scope", "https://as", False
    )
    return FlowAttempt(request=request, client=OAuthClient("dcr", "client", "none"), token=token)


class _Tokens:
    """A token endpoint that refuses every refresh (an AS that does not rotate or has revoked the grant)."""

    client = OAuthClient("dcr", "client", "none")

    def __init__(self) -> None:
        self.refreshes = 0

    def refresh(self, refresh_token: str, **_: Any) -> TokenResult:
        self.refreshes += 1
        body = {"error": "invalid_grant"}
        return TokenResult(httpx.Response(400, json=body), body, "none")


@pytest.mark.parametrize("refresh_token", [None, "rt-refused"])
def test_an_expired_shared_token_that_cannot_be_refreshed_is_replaced_by_linking_again(
    refresh_token: str | None,
) -> None:
    expired = _jwt(time.time() - 5)
    relinked: list[str] = []

    def relink() -> FlowAttempt:
        token = _jwt(time.time() + 600)
        relinked.append(token)
        return _attempt(_token(token))

    tokens = _Tokens()
    account = LinkedAccount.from_attempt(
        1,
        "https://rs/mcp",
        tokens,
        _attempt(_token(expired, refresh_token)),
        relink=relink,  # type: ignore[arg-type]
    )
    assert account.access_token == relinked[0] != expired
    assert tokens.refreshes == (1 if refresh_token else 0)
    assert account.access_token == relinked[0] and len(relinked) == 1  # a live token is not renewed again
    assert account.renewals == ["linked again (the token expired and could not be refreshed)"]


def test_a_live_shared_token_is_used_as_is() -> None:
    live = _jwt(time.time() + 600)
    account = LinkedAccount.from_attempt(
        1,
        "https://rs/mcp",
        _Tokens(),
        _attempt(_token(live)),
        relink=lambda: pytest.fail("relinked"),  # type: ignore[arg-type]
    )
    assert account.access_token == live and account.auth_header == {"Authorization": f"Bearer {live}"}


# -- no vacuous passes -----------------------------------------------------------------------------------------


def test_reauthorization_needs_two_different_scope_sets() -> None:
    assert scope_sets(["openid", "read", "write"], []) == (("openid", "read"), ("openid", "read", "write"))
    assert scope_sets(["openid", "read"], ["openid", "read", "admin"]) == (
        ("openid", "read"),
        ("openid", "read", "admin"),
    )
    assert scope_sets(["openid", "read"], ["openid", "read", "offline_access"]) is None  # first X, then X
    assert scope_sets(["read"], []) is None


PROF_08_STUBS = """
import pytest
from types import SimpleNamespace

class Caller:
    name = "whoami"
    def result(self, token, who):
        return {"structuredContent": {"id": "user-1"}}

@pytest.fixture(scope="session")
def profile_1():
    return SimpleNamespace(id="user-1")

@pytest.fixture(scope="session")
def profile_caller():
    return Caller()

@pytest.fixture(scope="session")
def profile_tool():
    return {"name": "whoami", "securitySchemes": [{"type": "oauth2", "scopes": ["profile:read"]}]}

@pytest.fixture(scope="session")
def linker():
    return SimpleNamespace(
        concurrency=2,
        host=SimpleNamespace(scopes=SimpleNamespace(scopes=("openid", "profile:read", "files"))),
        upgraded=lambda before, after: SimpleNamespace(access_token="at", refresh_token=None),
    )

@pytest.fixture(scope="session")
def link_account():
    # An authorization server that issues no refresh token: the refresh case cannot be exercised.
    return lambda **kw: SimpleNamespace(access_token="at", refresh_token=None)
"""


def test_prof_08_is_not_passed_after_two_of_its_three_cases(pytester: pytest.Pytester) -> None:
    makeconftest(pytester, PROF_08_STUBS)
    pytester.makepyfile(test_ids="from conformance.suites.profile.test_ids import test_id_is_stable")
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_ids.py").first
    assert result["rule"] == "PROF-08" and result["status"] == "skipped", result
    assert "a token refresh (no refresh token was issued)" in result["message"]
    assert "cases run: a new connection, a scope upgrade" in result["message"]


def test_prof_08_upgrades_beyond_the_requested_scopes_when_the_tool_needs_them_all(pytester: pytest.Pytester) -> None:
    """The profile tool needs every scope the host requests: the upgrade asks for one the authorization server
    advertises beyond them (as AUTH-REAUTH-01 does), instead of skipping with "nothing to add"."""
    stubs = PROF_08_STUBS.replace('("openid", "profile:read", "files")', '("openid", "profile:read")').replace(
        "scopes=SimpleNamespace(scopes=",
        "as_metadata=SimpleNamespace(scopes_supported=['openid', 'profile:read', 'files:write']), "
        "scopes=SimpleNamespace(scopes=",
    )
    makeconftest(pytester, stubs)
    pytester.makepyfile(test_ids="from conformance.suites.profile.test_ids import test_id_is_stable")
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_ids.py").first
    assert "cases run: a new connection, a scope upgrade" in result["message"], result
    assert "after a scope upgrade (openid profile:read → openid profile:read files:write)" in result["message"]


# -- a summary rule cannot fail where its parts were skipped ---------------------------------------------------

CHAL_STUBS = """
import httpx
import pytest
from conformance.host.challenge import Challenge
from conformance.judges.declarations import DeclarationChecker
from conformance.host.mcp import RawResult
from conformance.suites._tool_access import CallOutcome, Listing
from conformance.suites.auth import test_tools

TOOL = {"name": "files", "inputSchema": {"type": "object"},
        "securitySchemes": [{"type": "oauth2", "scopes": ["files:read"]}]}

@pytest.fixture(scope="session")
def listing():
    return Listing([TOOL], [], [], DeclarationChecker(vendor="openai"), False)

@pytest.fixture(scope="session")
def anonymous():
    raw = RawResult(status=401, headers=httpx.Headers(), message=None, messages=[],
                    challenge=Challenge("Bearer", PARAMS), step="initialize", session_id=None,
                    content_type="", body=b"")
    return test_tools.Anonymous({"files": CallOutcome(raw)})
"""


@pytest.mark.parametrize(
    ("params", "status"),
    [
        (
            {"resource_metadata": "https://rs/.well-known", "error": "invalid_token", "error_description": "login"},
            "skipped",
        ),
        ({"resource_metadata": "https://rs/.well-known"}, "skipped"),
    ],
    ids=["401-with-error-and-description", "401-bare"],
)
def test_chal_02_is_never_more_decided_than_chal_01(
    pytester: pytest.Pytester, params: dict[str, str], status: str
) -> None:
    """The summary of PRM-01, TOOL-02 and CHAL-01: an endpoint-level 401 is no runtime error result, so with
    CHAL-01 skipped the summary is skipped too, whatever that 401's challenge carries."""
    makeconftest(pytester, CHAL_STUBS.replace("PARAMS", repr(params)))
    pytester.makepyfile(
        test_chal="""
import pytest
from conformance.suites.auth.test_tools import test_in_call_auth_errors_carry_challenges, test_linking_ui_can_appear

@pytest.fixture(scope="session")
def metadata_published():
    return True  # the metadata is published (what the run's discovery finds)
"""
    )
    results = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_chal.py").by_rule
    assert results["AUTH-CHAL-01"]["status"] == "skipped"
    assert results["AUTH-CHAL-02"]["status"] == status, results["AUTH-CHAL-02"]
    assert "as AUTH-CHAL-01 needs" in results["AUTH-CHAL-02"]["message"]


# -- endpoint-wide protection gets the token attack suite ------------------------------------------------------


class _EndpointProtected(BaseHTTPRequestHandler):
    """An MCP endpoint protected as a whole (no per-tool securitySchemes) that accepts *any* bearer token."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Bearer ") or len(auth) <= len("Bearer "):
            challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'
            self._send(401, b"", {"WWW-Authenticate": challenge})
            return
        method = body.get("method")
        if "id" not in body:
            self._send(202, b"")
            return
        results: dict[str, Any] = {
            "initialize": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "endpoint-protected", "version": "1"},
            },
            "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
        }
        answer = {"jsonrpc": "2.0", "id": body["id"], "result": results.get(method, {})}
        self._send(200, json.dumps(answer).encode(), {"Content-Type": "application/json"})

    def do_DELETE(self) -> None:
        self._send(200, b"")

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint_protected() -> Iterator[str]:
    with serve_http(_EndpointProtected) as origin:
        yield f"{origin}/mcp"


TOKEN_STUBS = """
import pytest
from types import SimpleNamespace

@pytest.fixture(scope="session")
def linked_account(tool_server_target):
    return SimpleNamespace(access_token="opaque-linked-token", scopes=(), resource=tool_server_target.base_url,
                           refresh_token=None, id_token=None)
"""


@pytest.mark.usefixtures("mcp_sdk")  # the token checks load the SDK in the run
def test_endpoint_wide_protection_gets_the_token_checks(pytester: pytest.Pytester, endpoint_protected: str) -> None:
    makeconftest(pytester, TOKEN_STUBS)
    pytester.makepyfile(
        test_tok="from conformance.suites.auth.test_tokens import probe, control, accepted, "
        "test_valid_token_is_accepted, test_missing_or_malformed_authorization, test_tampered_token_is_refused"
    )
    results = run_checks(
        pytester, "--target-url", endpoint_protected, "--allow-insecure-loopback", "test_tok.py"
    ).by_rule
    assert results["AUTH-TOK-01"]["status"] == "passed", results["AUTH-TOK-01"]
    # Any bearer value is taken, malformed ones too: AUTH-TOK-02's attack table names them.
    assert results["AUTH-TOK-02"]["status"] == "failed", results["AUTH-TOK-02"]
    assert "'Bearer' with a value outside the b64token syntax" in results["AUTH-TOK-02"]["message"]
    assert "no Authorization header" not in results["AUTH-TOK-02"]["message"].split("cases tried")[0]
    # The server takes any bearer token: the violation is reported, not hidden behind "no oauth2 tool".
    assert results["AUTH-TOK-03"]["status"] == "failed", results["AUTH-TOK-03"]
    assert "the MCP endpoint (tools/list)" in results["AUTH-TOK-03"]["message"] + results["AUTH-TOK-01"]["message"]


# -- a rule judges only what it names; client identity friction -------------------------------------------------

DCR_STUBS = """
import pytest
from types import SimpleNamespace
from conformance.host.oauth import OAuthClient
from conformance.suites._linking import FlowAttempt

CLIENT = OAuthClient("KIND", "configured-client", "client_secret_basic", client_secret="s3cret")

class Registry:
    registrations = 0
    def get_or_register(self, *a, **k):
        raise AssertionError("the host registered a client the user did not ask for")

class Linker:
    def __init__(self):
        self.host = SimpleNamespace(client=CLIENT, tokens=object(), resource="https://rs/mcp",
                                    as_metadata=SimpleNamespace(registration_endpoint="https://as/register"),
                                    redirect=SimpleNamespace(redirect_uri="https://h/cb"), identity=None)
        self.http = None
    def attempt(self, **kw):
        raise AssertionError("a first use that failed is not tried again")

@pytest.fixture(scope="session")
def linker():
    return Linker()

@pytest.fixture(scope="session")
def client_registry():
    return Registry()

@pytest.fixture(scope="session")
def as_metadata(linker):
    return linker.host.as_metadata

@pytest.fixture(scope="session")
def first_link():
    # The first authorization already failed at the token endpoint (AUTH-FLOW-02's verdict).
    return FlowAttempt(request=None, client=CLIENT, rule="AUTH-FLOW-02", problem="token request: invalid_client")
"""


def test_a_predefined_client_is_judged_and_nothing_is_registered(pytester: pytest.Pytester) -> None:
    makeconftest(pytester, DCR_STUBS.replace("KIND", "predefined"))
    pytester.makepyfile(
        test_dcr="from conformance.suites.auth.test_dcr import connection_client, test_registration_returns_a_client, "
        "test_registered_client_stays_valid"
    )
    registration = ("--client-registration", "predefined", "--client-id", "configured-client")
    results = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, *registration, "test_dcr.py").by_rule
    assert results["AUTH-DCR-01"]["status"] == "skipped", results["AUTH-DCR-01"]
    assert "--client-registration predefined" in results["AUTH-DCR-01"]["message"]
    # The configured client's first use failed: that is the flow's verdict, not "the client stopped being valid".
    assert results["AUTH-DCR-02"]["status"] == "blocked", results["AUTH-DCR-02"]
    assert results["AUTH-DCR-02"]["blocked_by"] == "AUTH-FLOW-02"


def test_dcr_auth_method_defaults_to_the_as_first_supported() -> None:
    from conformance.host.oauth import DCR_METHODS, RegistrationError, dcr_auth_method

    assert dcr_auth_method(["client_secret_post", "private_key_jwt"], DCR_METHODS) == "client_secret_post"
    assert dcr_auth_method(["tls_client_auth", "none"], DCR_METHODS) == "none"
    assert dcr_auth_method(None, DCR_METHODS) == "client_secret_basic"  # RFC 8414's default
    with pytest.raises(RegistrationError):
        dcr_auth_method(["tls_client_auth"], DCR_METHODS)


IDENTITY_STUBS = """
import pytest
from conformance.host.asmeta import AsMetadata

@pytest.fixture(scope="session")
def as_metadata():
    return AsMetadata(expected_issuer="https://as.example", url="https://as.example/.well-known", via="oauth",
                      document={"issuer": "https://as.example", "registration_endpoint": "https://as.example/reg"})
"""


@pytest.mark.parametrize(
    ("flags", "redirect"),
    [
        ((), "http://127.0.0.1/oauth/callback"),
        (("--redirect-base", "https://vendor.example/cb"), "https://vendor.example/cb"),
    ],
)
def test_a_dcr_only_server_needs_no_publisher(pytester: pytest.Pytester, flags: tuple[str, ...], redirect: str) -> None:
    makeconftest(pytester, IDENTITY_STUBS)
    pytester.makepyfile(
        test_identity=f"""
def test_identity(host_identity):
    assert host_identity.redirect_uri() == {redirect!r}
    assert host_identity.callback_redirect_uri("conformance") == {redirect + "/conformance"!r}
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--target-url", DEAD_TOOL_SERVER, *flags, "test_identity.py")
    result.assert_outcomes(passed=1)


# -- findings of the third-party targets -------------------------------------------------------------------------

FLOW_06_STUBS = """
import httpx
import pytest
from types import SimpleNamespace
from conformance.host.oauth import TokenResult

class Attempt:
    request = None
    accepted = SimpleNamespace(code="c")
    def require(self):  # the first exchange: a token without a refresh token (the after-refresh case does not apply)
        body = {"access_token": "a", "token_type": "Bearer"}
        return TokenResult(httpx.Response(200, json=body), body, "none")

class Tokens:
    def exchange(self, request, accepted):
        body = {"error": "server_error"}
        return TokenResult(httpx.Response(500, json=body), body, "none")

@pytest.fixture(scope="session")
def linker():
    client = SimpleNamespace(decision=None, auth_method="none")  # one client authentication: no cross-auth case
    return SimpleNamespace(
        attempt=lambda: Attempt(),
        request=lambda: None,
        code=lambda request: Attempt.accepted,
        host=SimpleNamespace(tokens=Tokens(), client=client),
        concurrency=2,  # its cases at once, as a host's linker runs them
    )

@pytest.fixture(scope="session")
def linked_account():
    return None
"""


def test_flow_06_judges_that_the_code_works_once_not_the_error_code(pytester: pytest.Pytester) -> None:
    makeconftest(pytester, FLOW_06_STUBS)
    pytester.makepyfile(test_flow="from conformance.suites.auth.test_flow import test_code_works_once")
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_flow.py").first
    assert result["rule"] == "AUTH-FLOW-06" and result["status"] == "passed", result
    assert "500" in result["message"] and "invalid_grant" in result["message"]


PROF_10_STUBS = """
import pytest
from types import SimpleNamespace
from conformance.suites.profile.client import known_facts

@pytest.fixture(scope="session")
def profiles(conformance_settings):
    account = SimpleNamespace(id_token=None, access_token="opaque", account=1)
    login = conformance_settings.get("test_user")
    return [SimpleNamespace(record={"id": "vendor.tester@example.com"}, known=known_facts(account, login),
                            account=account)]
"""


@pytest.mark.parametrize(("login", "status"), [("vendor.tester@example.com", "failed"), ("", "skipped")])
def test_prof_10_compares_the_login_email_and_never_passes_on_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, login: str, status: str
) -> None:
    monkeypatch.setenv("CONFORMANCE_TEST_USER", login)
    makeconftest(pytester, PROF_10_STUBS)
    pytester.makepyfile(test_result="from conformance.suites.profile.test_result import test_id_encodes_no_identity")
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_result.py").first
    assert result["rule"] == "PROF-10" and result["status"] == status, result


TOOL_05_STUBS = """
import pytest
from types import SimpleNamespace
from conformance.judges.declarations import DeclarationChecker
from conformance.suites._tool_access import Listing
from conformance.suites.auth.test_tools import Anonymous

@pytest.fixture(scope="session")
def listing():
    return Listing([{"name": "search", "inputSchema": {"type": "object"}}], [], [], DeclarationChecker(vendor="openai"),
                   True)

@pytest.fixture(scope="session")
def anonymous():
    return Anonymous()

@pytest.fixture(scope="session")
def linked_account():
    return SimpleNamespace(access_token="at")
"""


def test_tool_05_skip_names_what_would_let_it_run(pytester: pytest.Pytester) -> None:
    makeconftest(pytester, TOOL_05_STUBS)
    pytester.makepyfile(
        test_tools="from conformance.suites.auth.test_tools import test_structured_content_matches_output_schema"
    )
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_tools.py").first
    assert result["status"] == "skipped" and "readOnlyHint" in result["need"], result


DCR_02_STUBS = """
import httpx
import pytest
from types import SimpleNamespace
from conformance.host.oauth import OAuthClient, TokenResult
from conformance.suites._linking import FlowAttempt

CLIENT = OAuthClient("dcr", "registered", "none")
BODY = {"access_token": "at", "token_type": "Bearer"}
REFRESH = None  # a refresh token in the token responses, and the refresh answer (status, body)

def ok():
    body = {**BODY, "refresh_token": "rt"} if REFRESH else BODY
    return FlowAttempt(request=None, client=CLIENT, token=TokenResult(httpx.Response(200, json=body), body, "none"))

class Tokens:
    def refresh(self, token, resource=None):
        status, body = REFRESH
        return TokenResult(httpx.Response(status, json=body), body, "none")

@pytest.fixture(scope="session")
def linker():
    host = SimpleNamespace(client=CLIENT, tokens=Tokens(), resource="https://rs/mcp")
    return SimpleNamespace(host=host, attempt=lambda **kw: ok())

@pytest.fixture(scope="session")
def first_link():
    return ok()

@pytest.fixture(scope="session")
def connection_client():
    return CLIENT
"""


def _dcr_02(pytester: pytest.Pytester, refresh: str) -> dict[str, Any]:
    makeconftest(pytester, DCR_02_STUBS.replace("REFRESH = None", f"REFRESH = {refresh}"))
    pytester.makepyfile(test_dcr="from conformance.suites.auth.test_dcr import test_registered_client_stays_valid")
    result: dict[str, Any] = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_dcr.py").first
    assert result["rule"] == "AUTH-DCR-02", result
    return result


def test_dcr_02_without_a_refresh_token_judges_the_second_authorization(pytester: pytest.Pytester) -> None:
    result = _dcr_02(pytester, "None")
    assert result["status"] == "passed", result
    assert "no refresh token was issued: the refresh case does not apply" in result["message"]


def test_dcr_02_reports_a_refresh_refused_for_another_reason(pytester: pytest.Pytester) -> None:
    result = _dcr_02(pytester, '(400, {"error": "invalid_grant"})')
    assert result["status"] == "passed", result
    assert "a refresh was refused (400 invalid_grant), not for the client" in result["message"]


def test_dcr_02_fails_a_refresh_refused_with_invalid_client(pytester: pytest.Pytester) -> None:
    result = _dcr_02(pytester, '(401, {"error": "invalid_client"})')
    assert result["status"] == "failed", result
    assert "refresh: 401 invalid_client" in result["message"]


@pytest.mark.parametrize(("meta", "option"), [({"acme/profile": True}, "--vendor-prefix acme"), ({}, "optional")])
def test_no_profile_tool_hint_names_a_remedy_that_can_work(
    pytester: pytest.Pytester, meta: dict[str, Any], option: str
) -> None:
    makeconftest(
        pytester,
        f"""
import pytest
from conformance.judges.declarations import DeclarationChecker
from conformance.suites._tool_access import Listing

@pytest.fixture(scope="session")
def listing():
    tool = {{"name": "whoami", "inputSchema": {{"type": "object"}}, "_meta": {meta!r}}}
    return Listing([tool], [], [], DeclarationChecker(vendor="openai"), False)
""",
    )
    pytester.makepyfile(
        test_profile="""
from conformance import rule
from conformance.suites.profile.conftest import profile_search, profile_tool

@rule("PROF-03")
def test_uses_the_profile_tool(profile_tool):
    pass
"""
    )
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_profile.py").first
    assert result["status"] == "skipped" and option in result["option"], result


def test_a_dcr_host_is_not_incomplete_for_want_of_a_cimd_publisher(pytester: pytest.Pytester) -> None:
    makeconftest(
        pytester,
        """
import pytest
from types import SimpleNamespace
from conformance.host.oauth import OAuthClient

@pytest.fixture(scope="session")
def linker():
    return SimpleNamespace(host=SimpleNamespace(client=OAuthClient("dcr", "registered", "none")))

@pytest.fixture(scope="session")
def first_link():
    return None
""",
    )
    pytester.makepyfile(
        test_cimd="""
from conformance.suites.auth import test_cimd as checks

cimd_publisher = getattr(checks, "cimd_publisher", None)
second_publisher = checks.second_publisher
test_document_url_is_the_client_id = checks.test_document_url_is_the_client_id
test_private_key_jwt_is_accepted = checks.test_private_key_jwt_is_accepted
"""
    )
    report = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_cimd.py").report
    assert {r["rule"] for r in report["results"]} == {"AUTH-CIMD-01", "AUTH-CIMD-02"}
    for result in report["results"]:
        assert result["status"] == "skipped" and not result["incomplete"], result
        assert "identified by CIMD" in result["need"], result
    assert report["verdict"]["missing"] == []


def test_a_predefined_client_defaults_to_the_as_first_method() -> None:
    from conformance.host.asmeta import AsMetadata
    from conformance.host.oauth import predefined_client

    meta = AsMetadata(
        expected_issuer="https://as",
        url="https://as/.well-known",
        via="oauth",
        document={
            "issuer": "https://as",
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
        },
    )
    assert predefined_client("c", client_secret="s", as_meta=meta).auth_method == "client_secret_post"
    assert predefined_client("c", as_meta=meta).auth_method == "none"
    assert predefined_client("c", client_secret="s", auth_method="client_secret_basic").auth_method == (
        "client_secret_basic"
    )


def test_a_refused_predefined_client_is_a_configuration_need_not_a_failure(pytester: pytest.Pytester) -> None:
    makeconftest(
        pytester,
        """
import httpx
import pytest
from conformance.host.oauth import OAuthClient, TokenResult
from conformance.suites._linking import FlowAttempt

@pytest.fixture(scope="session")
def first_link():
    body = {"error": "invalid_client"}
    token = TokenResult(httpx.Response(401, json=body), body, "client_secret_basic")
    client = OAuthClient("predefined", "c", "client_secret_basic", client_secret="s")
    return FlowAttempt(request=None, client=client, token=token,
                       need=("a predefined client the authorization server accepts", "CONFORMANCE_CLIENT_SECRET"))
""",
    )
    pytester.makepyfile(test_flow="from conformance.suites.auth.test_flow import test_token_request_returns_bearer")
    report = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_flow.py").report
    result = report["results"][0]
    assert result["rule"] == "AUTH-FLOW-02" and result["status"] == "skipped" and result["incomplete"], result
    assert report["verdict"]["status"] == "INCOMPLETE"


@pytest.mark.usefixtures("mcp_sdk")  # the token checks load the SDK in the run
def test_endpoint_wide_insufficient_scope_is_judged(pytester: pytest.Pytester, endpoint_protected: str) -> None:
    makeconftest(
        pytester,
        TOKEN_STUBS
        + """
from conformance.host.challenge import Challenge
from conformance.host.discovery import PrmDiscovery

@pytest.fixture(scope="session")
def prm_discovery(tool_server_target):
    return PrmDiscovery(url="http://127.0.0.1/.well-known", document={}, via="root",
                        challenge=Challenge("Bearer", {"scope": "mcp:tools"}))

@pytest.fixture(scope="session")
def linker():
    return SimpleNamespace(host=SimpleNamespace(scopes=SimpleNamespace(scopes=("openid", "mcp:tools"))))

@pytest.fixture(scope="session")
def link_account():
    return lambda scopes=None, **kw: SimpleNamespace(current_token="downscoped", scopes=tuple(scopes or ()))

@pytest.fixture(scope="session")
def harness_issuer_or_none():
    return None  # no harness issuer: the nearly-right scope cases are not tried, the named one decides
""",
    )
    pytester.makepyfile(
        test_tok="from conformance.suites.auth.test_tokens import probe, control, accepted, scope_probe, "
        "test_insufficient_scope"
    )
    result = run_checks(pytester, "--target-url", endpoint_protected, "--allow-insecure-loopback", "test_tok.py").first
    # The endpoint takes any bearer token, one without the scope its challenge requires too.
    assert result["rule"] == "AUTH-TOK-08" and result["status"] == "failed", result
    assert "mcp:tools" in result["message"]


READ_ONLY_LISTING = """
import pytest
from conformance.judges.declarations import DeclarationChecker
from conformance.suites._tool_access import Listing
from conformance.suites.auth.test_tools import Anonymous

TOOLS = [{"name": "search", "description": "d", "inputSchema": {"type": "object"},
          "annotations": {"readOnlyHint": True}}]

@pytest.fixture(scope="session")
def listing():
    checker = DeclarationChecker(vendor="openai")
    return Listing(TOOLS, checker.check_tools(TOOLS), [], checker, False)

@pytest.fixture(scope="session")
def anonymous():
    return Anonymous()
"""


def test_conditional_tool_rules_are_not_passed_on_nothing(pytester: pytest.Pytester) -> None:
    """AUTH-TOOL-04 with no tool that is not read-only, AUTH-TOOL-02 with no declaration, AUTH-TOOL-06 with no
    profile marker: nothing to judge is skipped, never passed."""
    makeconftest(pytester, READ_ONLY_LISTING)
    pytester.makepyfile(
        test_tools="from conformance.suites.auth.test_tools import test_tools_that_write_are_not_anonymous, "
        "test_security_schemes, test_profile_marker_is_boolean, empty_credentials, empty_credentials_or_need"
    )
    results = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_tools.py").by_rule
    assert set(results) == {"AUTH-TOOL-02", "AUTH-TOOL-04", "AUTH-TOOL-06"}
    for rule, result in results.items():
        assert result["status"] == "skipped" and not result["incomplete"], (rule, result)


ISS_03_STUBS = """
from types import SimpleNamespace
from conformance.host.asmeta import AsMetadata
from conformance.host.oauth import AuthorizationRequest, parse_callback
from conformance.suites.auth.client import Declined
from conformance.suites._linking import FlowAttempt

ISSUER = "https://as.test"

def auth_request():
    return AuthorizationRequest("https://as.test/authorize", "c", "http://127.0.0.1/oauth/callback", None, "openid",
                                ISSUER, True)

@pytest.fixture(scope="session")
def as_metadata():
    return AsMetadata(expected_issuer=ISSUER, url=ISSUER + "/.well-known", via="oauth",
                      document={"issuer": ISSUER, "authorization_response_iss_parameter_supported": True})

@pytest.fixture(scope="session")
def first_link():
    request = auth_request()
    callback = parse_callback(f"{request.redirect_uri}?code=c&state={request.state}&iss=https%3A%2F%2Fas.test")
    return FlowAttempt(request=request, client=SimpleNamespace(), callback=callback)

@pytest.fixture(scope="session")
def declined():
    request = auth_request()  # the AS omits iss from its error redirect: AUTH-ISS-02's defect
    callback = parse_callback(f"{request.redirect_uri}?error=access_denied&state={request.state}")
    return Declined(request=request, login=None, callback=callback)
"""


def test_iss_03_is_the_hosts_rule_and_never_charges_the_server_twice(pytester: pytest.Pytester) -> None:
    """An authorization server omitting iss from an error redirect: the host refuses it, which is what AUTH-ISS-03
    asks of the host; the server's defect is AUTH-ISS-02's alone, so AUTH-ISS-03 passes and says so."""
    makeconftest(pytester, ISS_03_STUBS)
    pytester.makepyfile(test_iss="from conformance.suites.auth.test_iss import test_host_refuses_what_rfc_9207_refuses")
    result = run_checks(pytester, "--target-url", DEAD_TOOL_SERVER, "test_iss.py").first
    assert result["rule"] == "AUTH-ISS-03" and result["status"] == "passed", result
    assert "the host refused the error response (iss_missing)" in result["message"], result
    assert "judged under AUTH-ISS-01/02" in result["message"]
    assert "self-test" in result["message"]


@pytest.mark.usefixtures("mcp_sdk")  # the token checks load the SDK in the run
def test_tok_06_says_the_alt_resource_was_refused_not_missing(
    pytester: pytest.Pytester, endpoint_protected: str
) -> None:
    """--alt-resource given, the authorization server refuses to issue a token for it, no harness issuer: the skip
    says what happened to the option given and names what is left (harness-issued tokens), not --alt-resource."""
    makeconftest(
        pytester,
        TOKEN_STUBS
        + """
@pytest.fixture(scope="session")
def harness_issuer():
    return None

class Linker:
    def request(self, **kw):
        return SimpleNamespace(**kw)
    def attempt(self, request=None, **kw):
        return SimpleNamespace(ok=False, token=None, problem="invalid_target: resource not allowed")

@pytest.fixture(scope="session")
def linker():
    return Linker()
""",
    )
    pytester.makepyfile(
        test_tok="from conformance.suites.auth.test_tokens import probe, control, accepted, "
        "test_token_for_another_audience_is_refused"
    )
    alt = "https://other.example/mcp"
    args = ("--target-url", endpoint_protected, "--allow-insecure-loopback", "--alt-resource", alt, "test_tok.py")
    result = run_checks(pytester, *args).first
    assert result["rule"] == "AUTH-TOK-06" and result["status"] == "skipped", result
    assert f"--alt-resource was given: no token for {alt}: invalid_target" in result["need"], result
    assert result["option"] and "--alt-resource" not in result["option"], result
