"""The shared linking fixtures' pure parts: when a host refuses to start linking, and which rule it names."""

from __future__ import annotations

import json
import ssl
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import jwt
import pytest
import trustme

from conformance import Blocked
from conformance.config import Target, resolve
from conformance.core import _budget, _context
from conformance.core._exceptions import TargetTooSlow
from conformance.host._guard import UrlGuard
from conformance.host.asmeta import AsMetadata
from conformance.host.discovery import PrmDiscovery
from conformance.host.http import HostHTTP
from conformance.host.identity import HostIdentity
from conformance.host.oauth import ClientRegistry, OAuthClient, RedirectChoice, ScopeChoice, TokenEndpoint, TokenResult
from conformance.host.publisher import Publisher
from conformance.suites._cases import AttackRun
from conformance.suites._linking import HostClient, LinkedAccount, Linker, host_refusal, register_connection_client
from conformance.verdict._verdicts import NeedsUnmet
from tests.host.test_login import PASSWORD, REDIRECT, USER, FakeAS

ISSUER = "https://as.example"
RESOURCE = "https://tools.example/mcp"
GOOD: dict[str, Any] = {
    "issuer": ISSUER,
    "authorization_endpoint": f"{ISSUER}/auth",
    "token_endpoint": f"{ISSUER}/token",
    "code_challenge_methods_supported": ["S256"],
}


def refusal(prm: dict[str, Any], meta: dict[str, Any]) -> tuple[str, str] | None:
    discovery = PrmDiscovery(url=f"{RESOURCE}/.well-known", document=prm, via="root", challenge=None)
    as_meta = AsMetadata(expected_issuer=ISSUER, url=f"{ISSUER}/.well-known", via="oauth", document=meta)
    return host_refusal(discovery, as_meta, Target("tool_server", RESOURCE))


def test_a_conforming_server_is_not_refused() -> None:
    assert refusal({"resource": RESOURCE}, GOOD) is None


@pytest.mark.parametrize(
    ("prm", "meta", "rule", "words"),
    [
        ({"resource": "https://tools.example"}, GOOD, "AUTH-PRM-02", "not the URL the host connects to"),
        ({"resource": RESOURCE}, {**GOOD, "issuer": ISSUER + "/"}, "AUTH-ASM-02", "differs"),
        ({"resource": RESOURCE}, {**GOOD, "code_challenge_methods_supported": ["plain"]}, "AUTH-ASM-03", "no S256"),
        ({"resource": RESOURCE}, {**GOOD, "token_endpoint": "http://as.example/token"}, "AUTH-ASM-04", "https"),
    ],
)
def test_refusals_name_the_rule(prm: dict[str, Any], meta: dict[str, Any], rule: str, words: str) -> None:
    found = refusal(prm, meta)
    assert found is not None and found[0] == rule and words in found[1], found


# -- declining consent (AUTH-ISS-02/03) ------------------------------------------------------------------------


@dataclass
class RememberingAS(FakeAS):
    """Consent remembered for the client: a code at once, unless the request asks for consent (``prompt=consent``);
    ``honours_prompt=False``: never a page to decline."""

    honours_prompt: bool = True
    prompts: list[str | None] = field(default_factory=list)

    def respond(self, method: str, path: str, query: dict[str, str], form: dict[str, str], cookie: str | None):
        if path == "/auth":
            self.prompts.append(query.get("prompt"))
            if query.get("prompt") != "consent" or not self.honours_prompt:
                answer = urlencode({"code": "remembered", "state": query.get("state", ""), "iss": self.base})
                return 302, {"Location": f"{query['redirect_uri']}?{answer}"}, ""
        return super().respond(method, path, query, form, cookie)


def consent_linker(fake: RememberingAS, prompt_values: list[str] | None) -> Linker:
    http = HostHTTP(transport=httpx.MockTransport(fake.handler), guard=UrlGuard(allow_private_network=True))
    document = {**GOOD, "issuer": fake.base, "authorization_endpoint": f"{fake.base}/auth"}
    if prompt_values is not None:
        document["prompt_values_supported"] = prompt_values
    meta = AsMetadata(expected_issuer=fake.base, url=f"{fake.base}/.well-known", via="oauth", document=document)
    client = OAuthClient("dcr", "client-1", "none", (REDIRECT,))
    identity = HostIdentity(base_url="https://conformance-host.invalid", redirect_base=REDIRECT)
    redirect = RedirectChoice("stable", "test", identity.stable_document_url, REDIRECT, None)
    host = HostClient(
        client, redirect, identity, meta, RESOURCE, ScopeChoice((), "none"), TokenEndpoint(http, meta, client)
    )
    settings = resolve(cli={}, env={"CONFORMANCE_TEST_USER": USER, "CONFORMANCE_TEST_PASSWORD": PASSWORD})
    return Linker(http, settings, host, None)


def test_declining_asks_for_consent_when_the_metadata_lists_it() -> None:
    fake = RememberingAS()
    request, login, callback = consent_linker(fake, ["login", "consent"]).decline()
    assert fake.prompts == ["consent"] and request.params()["prompt"] == "consent"
    assert callback.error == "access_denied" and login.steps == ["login", "deny consent"]


def test_a_remembered_consent_is_asked_again_with_prompt_consent() -> None:
    fake = RememberingAS()
    _, _, callback = consent_linker(fake, None).decline()
    assert fake.prompts == [None, "consent"] and callback.error == "access_denied"


def test_a_server_that_never_asks_for_consent_says_what_would_reach_the_case() -> None:
    fake = RememberingAS(honours_prompt=False)
    with pytest.raises(NeedsUnmet) as caught:
        consent_linker(fake, ["consent"]).decline()
    assert fake.prompts == ["consent"]
    assert "prompt=consent was sent" in caught.value.need and "prompt_values_supported" in str(caught.value.option)


# -- registration refused in both forms (AUTH-DCR-01) ----------------------------------------------------------


def test_a_registration_refused_in_both_forms_is_a_need_not_a_failure() -> None:
    refused: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        refused.append(json.loads(request.content)["redirect_uris"][0])
        return httpx.Response(400, json={"error": "invalid_client_metadata", "error_description": "not accepted"})

    http = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True))
    host = consent_linker(RememberingAS(), None).host
    host.as_metadata.document["registration_endpoint"] = f"{host.as_metadata.expected_issuer}/register"
    host.redirect = RedirectChoice("stable", "test", "unused", "http://127.0.0.1/oauth/callback", None)
    with pytest.raises(NeedsUnmet) as caught:
        register_connection_client(http, host, ClientRegistry(), resolve(cli={}, env={}))
    assert refused == ["http://127.0.0.1/oauth/callback", "https://conformance-host.invalid/oauth/callback"]
    assert "--redirect-base" in str(caught.value.option) and "invalid_client_metadata" in caught.value.need


# -- the check's time budget (--max-check-time) -----------------------------------------------------------------


@dataclass
class SlowAS(RememberingAS):
    """Every answer after ``delay_s``."""

    delay_s: float = 0.3

    def respond(self, method: str, path: str, query: dict[str, str], form: dict[str, str], cookie: str | None):
        time.sleep(self.delay_s)
        return super().respond(method, path, query, form, cookie)


def test_a_flow_cut_short_by_the_check_s_time_budget_is_the_target_too_slow() -> None:
    """Out of time mid-flow: the check is blocked (target too slow), never an attempt naming AUTH-FLOW-01 or
    AUTH-FLOW-02 as a rule the target broke."""
    linker = consent_linker(SlowAS(), None)
    record = _context.begin(("AUTH-FLOW-01",))
    _budget.start_check(record, 0.1)
    try:
        with pytest.raises(TargetTooSlow, match=r"--max-check-time"):
            linker.attempt()
    finally:
        _context.end()


# -- the second client identity (AUTH-FLOW-03/04/06/07's other client kind) ------------------------------------


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    root = tmp_path_factory.mktemp("tls")
    files = {"ca": root / "ca.pem", "cert": root / "cert.pem", "key": root / "key.pem"}
    ca.cert_pem.write_to_path(str(files["ca"]))
    leaf.private_key_pem.write_to_path(str(files["key"]))
    for i, blob in enumerate(leaf.cert_chain_pems):
        blob.write_to_path(str(files["cert"]), append=i > 0)
    return files


def test_the_other_identity_is_published_under_the_configured_origin(tls: dict[str, Path]) -> None:
    """With --client-metadata-url, the authorization server fetches the host's documents from that origin only:
    the other client kind is published there too (a client id of its own), never at https://127.0.0.1:<port>."""
    fake = RememberingAS()  # a code at once: the control authorization succeeds
    linker = consent_linker(fake, None)
    origin = "https://host.vendor.example/conformance"
    with (
        Publisher(certfile=tls["cert"], keyfile=tls["key"], public_base_url=origin) as publisher,
        httpx.Client(verify=ssl.create_default_context(cafile=str(tls["ca"]))) as fetch,
    ):
        linker.publisher = publisher
        other = linker.other_identity("private_key_jwt")
        assert isinstance(other, OAuthClient), other
        assert other.client_id.startswith(f"{origin}/oauth/") and other.client_id.endswith("/client.json")
        assert other.auth_method == "private_key_jwt" and other.redirect_uris[0].startswith(f"{origin}/oauth/")
        local = f"https://127.0.0.1:{publisher.port}{urlsplit(other.client_id).path}"
        served = fetch.get(local).json()
        assert served["client_id"] == other.client_id
        assert served["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
        # One per run: the next check that asks gets the same client, still published, without a second control.
        assert linker.other_identity("private_key_jwt") is other
        assert fetch.get(local).json()["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
        assert fake.prompts == [None]  # the control authorization, by the published client
    linker.publisher = None
    elsewhere = linker.other_identity("none")  # documents published elsewhere: the cases are not tried
    assert isinstance(elsewhere, str) and "--publisher-certfile" in elsewhere


# -- a case refused for another reason proves nothing (AUTH-FLOW-06) -------------------------------------------


def test_a_replay_refused_for_its_client_authentication_is_not_tried() -> None:
    from conformance.suites.auth.test_flow import CROSS_AUTH, _replay

    def answer(status: int, body: dict[str, Any]) -> TokenResult:
        return TokenResult(httpx.Response(status, json=body), body, "private_key_jwt")

    granted = answer(200, {"access_token": "a", "token_type": "Bearer"})
    case = next(iter(CROSS_AUTH))
    refused_client, refused_code = answer(401, {"error": "invalid_client"}), answer(400, {"error": "invalid_grant"})
    run = AttackRun.of("AUTH-FLOW-06")
    _replay(run, case, lambda: granted, "{}", lambda: refused_client)()  # its authentication, not the reuse
    assert not run.tried and "client authentication" in run.untried[case]
    run = AttackRun.of("AUTH-FLOW-06")
    _replay(run, case, lambda: granted, "{}", lambda: refused_code)()
    assert [a.case for a in run.tried] == [case] and not run.problems


# -- the host's tokens: one per account and scope set, shared by the checks that only read them -----------------


def counting_linker() -> tuple[Linker, list[tuple[int, str]]]:
    """A linker whose authorizations are counted (account, scopes asked) instead of run."""
    linker = consent_linker(RememberingAS(), None)
    made: list[tuple[int, str]] = []

    def link(account: int = 1, scopes: Any = None, id_token_hint: str | None = None) -> Any:
        made.append((account, scopes if isinstance(scopes, str) else " ".join(scopes or ())))
        return SimpleNamespace(account=account, made=len(made))

    linker.link = link  # type: ignore[method-assign]
    return linker, made


def test_the_host_keeps_one_token_per_account_and_scope_set() -> None:
    linker, made = counting_linker()
    first = linker.shared(scopes=["files.read", "openid"])
    assert linker.shared(scopes="openid files.read") is first  # the same set, in another order
    other = linker.shared(scopes=["files.read"])
    second_user = linker.shared(account=2, scopes=["files.read", "openid"])
    assert len({id(first), id(other), id(second_user)}) == 3
    assert made == [(1, "files.read openid"), (1, "files.read"), (2, "files.read openid")]


def test_a_kept_authorization_is_the_shared_one() -> None:
    linker, made = counting_linker()
    linked = SimpleNamespace(account=1, attempt=SimpleNamespace(request=SimpleNamespace(scope="")))
    assert linker.keep(linked) is linked  # type: ignore[arg-type]
    assert linker.shared() is linked and not made  # the host's default scopes (none here): no new authorization


def test_checks_asking_at_once_share_one_authorization() -> None:
    linker, made = counting_linker()
    counted = linker.link

    def slow_link(**kwargs: Any) -> Any:
        time.sleep(0.05)
        return counted(**kwargs)

    linker.link = slow_link  # type: ignore[method-assign]
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda _: linker.shared(scopes=["files.read"]), range(4)))
    assert len(made) == 1 and all(f is found[0] for f in found)


def test_a_failed_authorization_is_not_kept() -> None:
    linker, made = counting_linker()
    counted = linker.link

    def failing_once(**kwargs: Any) -> Any:
        counted(**kwargs)
        if len(made) == 1:
            raise Blocked("AUTH-FLOW-01", "the login failed")
        return SimpleNamespace(made=len(made))

    linker.link = failing_once  # type: ignore[method-assign]
    with pytest.raises(Blocked):
        linker.shared(scopes=["files.read"])
    assert linker.shared(scopes=["files.read"]).made == 2  # the next asker authorizes again


def test_a_scope_upgrade_is_made_once_and_read_by_each_asker() -> None:
    linker = consent_linker(RememberingAS(), None)
    asked: list[str] = []

    def attempt(**kwargs: Any) -> Any:
        asked.append(" ".join(kwargs["scopes"]))
        return SimpleNamespace(ok=True, exchanges=[])

    linker.attempt = attempt  # type: ignore[method-assign]
    upgrade = linker.upgrade(["openid"], ["openid", "files.read"])
    assert linker.upgrade(["openid"], ["files.read", "openid"]) is upgrade
    linker.upgrade(["openid", "email"], ["openid", "files.read"])  # from another grant: an upgrade of its own
    assert asked == ["openid files.read", "openid files.read"]


def test_an_expiring_shared_token_is_renewed_once_when_asked_at_once() -> None:
    def token(lifetime: int) -> str:
        return jwt.encode({"exp": int(time.time()) + lifetime}, "k" * 32, algorithm="HS256")

    first = token(5)  # within the renewal margin
    result = TokenResult(httpx.Response(200), {"access_token": first, "token_type": "Bearer"}, "none")
    attempt = SimpleNamespace(request=SimpleNamespace(scope=""))
    account = LinkedAccount(1, RESOURCE, result, None, attempt, first, None, None, ())  # type: ignore[arg-type]
    renewed: list[str] = []

    def renew() -> None:
        time.sleep(0.05)
        renewed.append("renewed")
        account.current_token = token(3600)

    account.renew = renew  # type: ignore[method-assign]
    with ThreadPoolExecutor(max_workers=4) as pool:
        tokens = list(pool.map(lambda _: account.access_token, range(4)))
    assert renewed == ["renewed"] and len(set(tokens)) == 1 and tokens[0] != first
