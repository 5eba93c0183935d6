"""Login drivers against a tiny fake AS whose pages copy the reference IdP's (and devInteractions') forms."""

from __future__ import annotations

import html
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest

from conformance.core import _context
from conformance.core._exceptions import ConfigError
from conformance.host._guard import UrlGuard
from conformance.host.http import HostHTTP
from conformance.host.login import (
    BrowserDriver,
    Credentials,
    FormDriver,
    LoginError,
    LoginSteps,
    ManualDriver,
    MissingCredentials,
    Selector,
    browser_available,
    make_driver,
    parse_page,
)
from conformance.host.oauth import parse_callback
from conformance.host.publisher import CallbackHit
from tests._serving import running

USER, PASSWORD = "alice", "correct horse"
REDIRECT = "https://host.example/oauth/callback"


def login_page(uid: str, message: str = "") -> str:
    # The reference IdP's login page (conformance/reference/idp/provider.js).
    error = f'<p class="error">{html.escape(message)}</p>' if message else ""
    return (
        f"<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Sign in</h1>{error}"
        f'<form id="login" method="post" action="/interaction/{uid}/login" autocomplete="off">'
        '<label>Login <input name="login" type="text" autofocus></label>'
        '<label>Password <input name="password" type="password"></label>'
        '<button type="submit" name="submit" value="login">Sign in</button></form>'
        f'<form id="cancel" method="post" action="/interaction/{uid}/abort">'
        '<button type="submit" name="cancel" value="cancel">Cancel</button></form></body></html>'
    )


def consent_page(uid: str) -> str:
    return (
        "<!DOCTYPE html><html><head><title>Authorize</title></head><body><h1>Authorize</h1>"
        f'<form id="consent" method="post" action="/interaction/{uid}/confirm">'
        '<button type="submit" name="decision" value="approve">Allow</button></form>'
        f'<form id="deny" method="post" action="/interaction/{uid}/abort">'
        '<button type="submit" name="decision" value="deny">Deny</button></form></body></html>'
    )


def dev_login_page(uid: str) -> str:
    # node-oidc-provider devInteractions login (lib/views/login.js).
    return (
        f'<html><body><form autocomplete="off" action="/interaction/{uid}/login" method="post">'
        '<input type="hidden" name="prompt" value="login"/>'
        '<input required type="text" name="login" placeholder="Enter any login" autofocus="on" value="">'
        '<input required type="password" name="password" placeholder="and password" autofocus="on">'
        '<button type="submit" class="login login-submit">Sign-in</button></form>'
        f'<a href="/interaction/{uid}/abort">[ Cancel ]</a></body></html>'
    )


def dev_consent_page(uid: str) -> str:
    return (
        f'<html><body><ul><li>scopes:</li></ul><form autocomplete="off" action="/interaction/{uid}/confirm" '
        'method="post"><input type="hidden" name="prompt" value="consent"/>'
        '<button autofocus type="submit" class="login login-submit">Continue</button></form>'
        f'<a href="/interaction/{uid}/abort">[ Cancel ]</a></body></html>'
    )


@dataclass
class FakeAS:
    """Authorization endpoint, login and consent with a session cookie, like node-oidc-provider."""

    base: str = "https://as.example"
    dev: bool = False  # devInteractions pages
    issuer_in_response: bool = True
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    posts: list[dict[str, str]] = field(default_factory=list)

    def respond(self, method: str, path: str, query: dict[str, str], form: dict[str, str], cookie: str | None):
        if path == "/auth":
            sid = secrets.token_hex(4)
            self.sessions[sid] = {"params": query, "user": None}
            return 302, {"Location": f"/interaction/{sid}", "Set-Cookie": f"_session={sid}; Path=/; HttpOnly"}, ""
        parts = path.split("/")
        if len(parts) < 3 or parts[1] != "interaction":
            return 404, {}, "not found"
        uid = parts[2]
        if cookie != uid or uid not in self.sessions:
            return 400, {"Content-Type": "text/html"}, "<title>Error</title><p>session not found (no cookie)</p>"
        session = self.sessions[uid]
        action = parts[3] if len(parts) > 3 else None
        if method == "POST":
            self.posts.append(form)
        if action is None:
            page = (
                (dev_login_page if self.dev else login_page)(uid)
                if session["user"] is None
                else (dev_consent_page if self.dev else consent_page)(uid)
            )
            return 200, {"Content-Type": "text/html; charset=utf-8"}, page
        if action == "login":
            if form.get("login") == USER and form.get("password") == PASSWORD:
                session["user"] = USER
                return 303, {"Location": f"{self.base}/interaction/{uid}"}, ""
            return 200, {"Content-Type": "text/html"}, login_page(uid, "Invalid login or password.")
        params = session["params"]
        answer = {"code": "code-" + uid} if action == "confirm" else {"error": "access_denied"}
        answer["state"] = params.get("state", "")
        if self.issuer_in_response:
            answer["iss"] = self.base
        return 303, {"Location": params["redirect_uri"] + "?" + urlencode(answer)}, ""

    def handler(self, request: httpx.Request) -> httpx.Response:
        form = dict(parse_qsl(request.content.decode())) if request.method == "POST" else {}
        cookies = dict(c.strip().split("=", 1) for c in request.headers.get("cookie", "").split(";") if "=" in c)
        status, headers, body = self.respond(
            request.method, request.url.path, dict(parse_qsl(request.url.query.decode())), form, cookies.get("_session")
        )
        return httpx.Response(status, headers=headers, text=body)


def client_for(fake: FakeAS) -> HostHTTP:
    return HostHTTP(transport=httpx.MockTransport(fake.handler), guard=UrlGuard(allow_private_network=True), retry=None)


def auth_url(fake: FakeAS, state: str = "st-1") -> str:
    return f"{fake.base}/auth?" + urlencode({"redirect_uri": REDIRECT, "state": state, "client_id": "c"})


CREDS = Credentials(USER, PASSWORD)


# -- steps and selectors ---------------------------------------------------------------------------------------


def test_bundled_steps_load_and_name_the_credential_variables() -> None:
    steps = LoginSteps.default()
    assert steps.user_env == "CONFORMANCE_TEST_USER" and steps.password_env == "CONFORMANCE_TEST_PASSWORD"
    assert [s.name for s in steps.steps][:3] == ["login", "approve consent", "deny consent"]
    assert steps.steps[0].fill == {"login": "{user}", "password": "{password}"}


def test_steps_file_errors_are_config_errors(tmp_path: Path) -> None:
    cases = {
        "empty.toml": "",
        "unknown.toml": '[[steps]]\nmatch = "x"\nclik = "button"\n',
        "decision.toml": '[[steps]]\ndecision = "maybe"\n',
        "regex.toml": '[[steps]]\nmatch = "("\n',
        "env.toml": 'user_env = "not a name"\n[[steps]]\nmatch = "x"\n',
        "syntax.toml": "[[steps]\n",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ConfigError):
            LoginSteps.load(tmp_path / name)


def test_credentials_come_from_the_named_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_USER", "bob")
    monkeypatch.delenv("MY_PASS", raising=False)
    with pytest.raises(MissingCredentials, match="MY_PASS") as info:
        Credentials.from_env("MY_USER", "MY_PASS")
    assert info.value.variable == "MY_PASS"
    monkeypatch.setenv("MY_PASS", "pw")
    assert Credentials.from_env("MY_USER", "MY_PASS") == Credentials("bob", "pw")


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("#login", ["form#login"]),
        ("form#consent", ["form#consent"]),
        ("button[value=approve]", ["button:Allow"]),
        ('button[name="decision"][value="deny"]', ["button:Deny"]),
        ("[name^=pass]", ["input:password"]),
        ("#login button", ["button:Sign in"]),
        ("input[type=text]", ["input:login"]),
        ("a[href$=abort]", ["a:[ Cancel ]"]),
        (".error", ["p"]),
    ],
)
def test_css_ish_selectors(selector: str, expected: list[str]) -> None:
    page = parse_page(
        "https://as.example/i",
        login_page("u1", "bad").replace("</body>", '<a href="/interaction/u1/abort">[ Cancel ]</a></body>')
        + consent_page("u1"),
    )
    found = []
    for element in Selector.parse(selector).select(page):
        if element.tag == "form":
            found.append(f"form#{element.get('id')}")
        elif element.tag in ("button", "a"):
            found.append(f"{element.tag}:{element.text.strip()}")
        elif element.tag == "input":
            found.append(f"input:{element.get('name')}")
        else:
            found.append(element.tag)
    assert found[: len(expected)] == expected
    assert Selector.parse(selector).css()


def test_unsupported_selectors_are_refused() -> None:
    for bad in ("a > b", "div:has(p)", "a b c", ""):
        with pytest.raises(ConfigError):
            Selector.parse(bad)


def test_form_data_set_follows_html_rules() -> None:
    from conformance.host.login import LoginStep, form_submission
    from conformance.host.login.page import _plan

    page = parse_page(
        "https://as.example/i/1",
        '<form method="post"><input type="hidden" name="h" value="1"><input name="t">'
        '<input type="checkbox" name="c1" value="on" checked><input type="checkbox" name="c2" value="on">'
        '<input name="off" value="x" disabled><select name="s"><option value="a">A</option>'
        '<option value="b" selected>B</option></select><textarea name="ta">hello</textarea>'
        '<input type="submit" name="go" value="Go"><input type="submit" name="other" value="No"></form>',
    )
    plan = _plan(LoginStep(name="s", fill={"t": "typed"}), page, "approve")
    assert plan is not None
    method, url, data = form_submission(page, plan, {"t": "typed"})
    assert (method, url) == ("POST", "https://as.example/i/1")
    assert data == {"h": "1", "t": "typed", "c1": "on", "ta": "hello", "go": "Go", "s": "b"}
    get_page = parse_page("https://as.example/p", '<form action="/next" method="get"><input name="q" value="1"></form>')
    get_plan = _plan(LoginStep(name="g"), get_page, "approve")
    assert get_plan is not None
    assert form_submission(get_page, get_plan, {})[:2] == ("GET", "https://as.example/next?q=1")


# -- the form driver -------------------------------------------------------------------------------------------


def test_form_driver_logs_in_consents_and_returns_the_callback_unfollowed() -> None:
    fake = FakeAS()
    client = client_for(fake)
    result = FormDriver(http=client, steps=LoginSteps.default(), credentials=CREDS).login(auth_url(fake), REDIRECT)
    callback = parse_callback(result.require_callback())
    assert callback.code and callback.state == "st-1" and callback.iss == fake.base
    assert result.steps == ["login", "approve consent"]
    assert fake.posts[0] == {"login": USER, "password": PASSWORD, "submit": "login"}
    assert fake.posts[1] == {"decision": "approve"}
    assert not any(line.startswith("GET https://host.example") for line in result.visited)  # never followed
    assert client.redactor.scrub(f"x {PASSWORD} {callback.code}") == "x [REDACTED] [REDACTED]"


def test_form_driver_declines_consent_with_the_deny_step() -> None:
    fake = FakeAS()
    driver = FormDriver(http=client_for(fake), steps=LoginSteps.default(), credentials=CREDS)
    result = driver.login(auth_url(fake, "st-2"), REDIRECT, decision="deny")
    callback = parse_callback(result.require_callback())
    assert callback.error == "access_denied" and callback.iss == fake.base and callback.state == "st-2"
    assert result.steps == ["login", "deny consent"] and fake.posts[-1] == {"decision": "deny"}


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_form_driver_handles_dev_interactions_pages(decision: Any) -> None:
    fake = FakeAS(dev=True)
    driver = FormDriver(http=client_for(fake), steps=LoginSteps.default(), credentials=CREDS)
    callback = parse_callback(driver.login(auth_url(fake), REDIRECT, decision=decision).require_callback())
    if decision == "approve":
        assert callback.code and fake.posts[-1] == {"prompt": "consent"}
        assert fake.posts[0] == {"prompt": "login", "login": USER, "password": PASSWORD}
    else:
        assert callback.error == "access_denied"


def test_wrong_password_stops_with_the_page_message() -> None:
    fake = FakeAS()
    driver = FormDriver(http=client_for(fake), steps=LoginSteps.default(), credentials=Credentials(USER, "nope"))
    result = driver.login(auth_url(fake), REDIRECT)
    assert result.callback_url is None and result.stopped is not None
    assert "repeated" in result.stopped and "Invalid login or password." in result.stopped
    with pytest.raises(LoginError, match="Invalid login"):
        result.require_callback()
    # The account was refused at the sign-in page: the user's configuration, not the authorization server's fault.
    assert result.config_problem is not None and "did not accept the test account" in result.config_problem


@dataclass
class ResumingAS(FakeAS):
    """node-oidc-provider's way after a form: the POST redirects to a resume URL (a GET) that ends the interaction
    and starts the next one (consent) under a new uid. The first ``drops`` resumes are carried out, then their
    connection closes before the answer; a resume of an ended interaction is a 400 page."""

    drops: int = 1
    authorizations: list[str | None] = field(default_factory=list)  # the Cookie header of each authorization

    def handler(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/auth":
            self.authorizations.append(request.headers.get("cookie"))
        if path.startswith("/resume/"):
            session = self.sessions.pop(path.split("/")[2], None)  # the interaction ends, answered or not
            if session is None:
                return httpx.Response(400, headers={"Content-Type": "text/html"}, text="<p>interaction not found</p>")
            uid = secrets.token_hex(4)
            self.sessions[uid] = session
            if self.drops > 0:
                self.drops -= 1
                raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")
            return httpx.Response(
                303, headers={"Location": f"/interaction/{uid}", "Set-Cookie": f"_session={uid}; Path=/"}
            )
        response = super().handler(request)
        location = response.headers.get("location", "")
        if request.method == "POST" and location.startswith(f"{self.base}/interaction/"):
            response.headers["location"] = location.replace("/interaction/", "/resume/")
        return response


def test_a_login_stopped_by_the_answer_to_a_resent_request_starts_again_once() -> None:
    fake = ResumingAS(drops=1)
    driver = FormDriver(http=client_for(fake), steps=LoginSteps.default(), credentials=CREDS)
    record = _context.begin()
    try:
        result = driver.login(auth_url(fake), REDIRECT)
    finally:
        _context.end()
    assert parse_callback(result.require_callback()).code and len(fake.authorizations) == 2
    assert fake.authorizations[1] is not None  # the user's browser kept its cookies, as a browser does
    started_again = [line for line in result.visited if "started again" in line]
    assert len(started_again) == 1 and "/resume/" in started_again[0]
    assert any("sent once more" in note for note in record.notes) and started_again[0] in record.notes


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh session", "deny"])
def test_a_login_that_needs_a_fresh_session_starts_again_from_one(fresh: bool) -> None:
    fake = ResumingAS(drops=1)
    driver = FormDriver(http=client_for(fake), steps=LoginSteps.default(), credentials=CREDS, fresh_session=fresh)
    callback = parse_callback(
        driver.login(auth_url(fake), REDIRECT, decision="approve" if fresh else "deny").require_callback()
    )
    assert (callback.code is not None) if fresh else (callback.error == "access_denied")
    assert fake.authorizations == [None, None]  # both passes began without the AS session's cookies


def test_a_login_stopped_again_after_starting_again_keeps_its_stop() -> None:
    fake = ResumingAS(drops=2)
    result = FormDriver(http=client_for(fake), steps=LoginSteps.default(), credentials=CREDS).login(
        auth_url(fake), REDIRECT
    )
    assert result.callback_url is None and len(fake.authorizations) == 2
    assert result.stopped is not None and result.stopped.startswith("400 at")
    assert "interaction not found" in result.stopped and "started again after GET" in result.stopped


def test_a_login_stopped_by_an_answer_sent_once_is_not_started_again() -> None:
    fake = ResumingAS(drops=0)
    driver = FormDriver(http=client_for(fake), steps=LoginSteps.default(), credentials=Credentials(USER, "nope"))
    result = driver.login(auth_url(fake), REDIRECT)
    assert result.stopped is not None and "Invalid login" in result.stopped and len(fake.authorizations) == 1
    assert not any("started again" in line for line in result.visited)


def test_a_sign_in_page_no_step_fits_is_a_configuration_problem() -> None:
    fake = FakeAS()
    other_fields = LoginSteps.parse(
        {"steps": [{"name": "sign in", "fill": {"username": "{user}", "pw": "{password}"}}]}
    )
    result = FormDriver(http=client_for(fake), steps=other_fields, credentials=CREDS).login(auth_url(fake), REDIRECT)
    assert result.stopped is not None and "no login step applies" in result.stopped
    assert result.config_problem is not None and result.config_problem.startswith("login steps that fit the sign-in")


def test_a_page_without_an_applicable_step_and_error_pages_stop_cleanly() -> None:
    fake = FakeAS()
    only_login = LoginSteps.parse({"steps": [{"name": "login", "fill": {"login": "{user}", "password": "{password}"}}]})
    result = FormDriver(http=client_for(fake), steps=only_login, credentials=CREDS).login(auth_url(fake), REDIRECT)
    assert result.stopped is not None and "no login step applies" in result.stopped and "Authorize" in result.stopped
    assert result.config_problem is None  # a consent page without a fitting step: no sign-in page

    def error_page(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, text="<title>Error</title><p>redirect_uri did not match</p>")

    bad = HostHTTP(transport=httpx.MockTransport(error_page), guard=UrlGuard(allow_private_network=True), retry=None)
    stopped = FormDriver(http=bad, steps=LoginSteps.default(), credentials=CREDS).login(auth_url(fake), REDIRECT)
    assert (
        stopped.final_status == 400 and stopped.stopped is not None and "redirect_uri did not match" in stopped.stopped
    )
    assert stopped.config_problem is None  # the authorization server's error page: the flow's own verdict


def test_the_driver_does_not_leave_the_authorization_server() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": "https://elsewhere.example/phish"})

    client = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True), retry=None)
    result = FormDriver(http=client, steps=LoginSteps.default(), credentials=CREDS).login(
        "https://as.example/auth", REDIRECT
    )
    assert result.stopped is not None and "left the authorization server" in result.stopped


def test_an_existing_session_goes_straight_to_the_callback() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": f"{REDIRECT}?code=c&state=s"})

    client = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True), retry=None)
    result = FormDriver(http=client, steps=LoginSteps.default()).login("https://as.example/auth", REDIRECT)
    assert result.callback_url == f"{REDIRECT}?code=c&state=s" and result.steps == []
    assert result.notes == ["no approve step ran (consent was not asked): the decision did not apply"]


def test_the_backend_never_carries_the_browsers_cookies() -> None:
    """Two user agents: the login pages' session cookie stays in the user's browser; the host's backend (token and
    registration requests) sends none, even to the authorization server's own origin."""
    fake = FakeAS()
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path in ("/token", "/register"):
            seen.append(request.headers.get("cookie"))
            return httpx.Response(200, headers={"Set-Cookie": "backend=1; Path=/"}, json={})
        return fake.handler(request)

    client = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True), retry=None)
    result = FormDriver(http=client, steps=LoginSteps.default(), credentials=CREDS).login(auth_url(fake), REDIRECT)
    assert result.callback_url is not None and client.browser._client.cookies.get("_session") is not None
    client.post(f"{fake.base}/register", json={})
    client.post(f"{fake.base}/token", data={"grant_type": "authorization_code"})
    assert seen == [None, None]  # nor the cookie the backend's own answer set
    client.clear_cookies()  # a fresh browser profile
    assert client.browser._client.cookies.get("_session") is None


def test_a_deny_starts_from_a_fresh_session() -> None:
    fake = FakeAS()
    client = client_for(fake)
    driver = FormDriver(http=client, steps=LoginSteps.default(), credentials=CREDS)
    driver.login(auth_url(fake), REDIRECT)
    assert client.browser._client.cookies.get("_session") is not None  # the browser keeps the AS session
    sessions = set(fake.sessions)
    result = driver.login(auth_url(fake, "st-d"), REDIRECT, decision="deny")
    assert result.notes == [] and result.steps == ["login", "deny consent"]
    assert len(set(fake.sessions) - sessions) == 1


def test_credentials_default_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAS()
    monkeypatch.delenv("CONFORMANCE_TEST_USER", raising=False)
    with pytest.raises(MissingCredentials, match="CONFORMANCE_TEST_USER"):
        FormDriver(http=client_for(fake), steps=LoginSteps.default()).login(auth_url(fake), REDIRECT)
    monkeypatch.setenv("CONFORMANCE_TEST_USER", USER)
    monkeypatch.setenv("CONFORMANCE_TEST_PASSWORD", PASSWORD)
    driver = make_driver("form", http=client_for(fake))
    assert parse_callback(driver.login(auth_url(fake), REDIRECT).require_callback()).code


def test_make_driver_validates_its_choice() -> None:
    client = client_for(FakeAS())
    with pytest.raises(ConfigError, match="unknown login driver"):
        make_driver("telepathy", http=client)
    with pytest.raises(ConfigError, match="publisher"):
        make_driver("manual", http=client)
    assert isinstance(make_driver("browser", http=client), BrowserDriver)


# -- the manual driver -----------------------------------------------------------------------------------------


class StubPublisher:
    def __init__(self, hit: CallbackHit | None) -> None:
        self.hit = hit
        self.waited: list[tuple[float, str | None]] = []

    def wait_for_callback(
        self, timeout: float, *, since: float | None = None, state: str | None = None
    ) -> CallbackHit | None:
        self.waited.append((timeout, state))
        return self.hit


def test_manual_driver_prints_the_url_and_waits_boundedly() -> None:
    printed: list[str] = []
    hit = CallbackHit(url=f"{REDIRECT}?code=m&state=s9", path="/oauth/callback", params={}, at=time.time())
    stub = StubPublisher(hit)
    driver = ManualDriver(publisher=stub, timeout_s=7, write=printed.append)  # type: ignore[arg-type]
    result = driver.login("https://as.example/auth?x=1", REDIRECT, state="s9")
    assert result.callback_url == hit.url and stub.waited == [(7, "s9")]
    assert "https://as.example/auth?x=1" in printed[0] and "7s" in printed[0]
    silent = ManualDriver(publisher=StubPublisher(None), timeout_s=1, write=printed.append)  # type: ignore[arg-type]
    assert silent.login("https://as.example/auth", REDIRECT).stopped == "no callback within 1s"


# -- the browser driver ----------------------------------------------------------------------------------------


@pytest.fixture
def fake_as_server() -> Iterator[FakeAS]:
    fake = FakeAS()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            form = dict(parse_qsl(self.rfile.read(length).decode())) if self.command == "POST" else {}
            cookies = dict(c.strip().split("=", 1) for c in (self.headers.get("Cookie") or "").split(";") if "=" in c)
            status, headers, body = fake.respond(
                self.command, parts.path, dict(parse_qsl(parts.query)), form, cookies.get("_session")
            )
            payload = body.encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.base = f"http://127.0.0.1:{server.server_address[1]}"
    with running(server, "fake-as"):
        yield fake


def test_browser_driver_runs_the_same_steps_in_chromium(fake_as_server: FakeAS) -> None:
    if why := browser_available():  # asked when the test runs: asking imports Playwright
        pytest.skip(why)
    driver = BrowserDriver(steps=LoginSteps.default(), credentials=CREDS, timeout_s=20)
    result = driver.login(auth_url(fake_as_server, "st-b"), REDIRECT)
    callback = parse_callback(result.require_callback())
    assert callback.code and callback.state == "st-b" and callback.iss == fake_as_server.base
    assert result.steps == ["login", "approve consent"]
    assert fake_as_server.posts[0]["login"] == USER


def test_browser_unavailable_is_reported_not_crashed(tmp_path: Path) -> None:
    why = browser_available(str(tmp_path / "no-chromium"))
    assert why is not None and "not" in why


def test_form_posts_carry_the_origin_of_their_page_as_a_browser_sends_it() -> None:
    """A CSRF guard that refuses a form POST without Origin (better-auth's does) is met as a browser meets it."""
    fake = FakeAS()
    origins: list[str | None] = []

    def guarded(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            origins.append(request.headers.get("origin"))
            if request.headers.get("origin") != fake.base:
                return httpx.Response(403, json={"code": "MISSING_OR_NULL_ORIGIN"})
        return fake.handler(request)

    client = HostHTTP(transport=httpx.MockTransport(guarded), guard=UrlGuard(allow_private_network=True), retry=None)
    result = FormDriver(http=client, steps=LoginSteps.default(), credentials=CREDS).login(auth_url(fake), REDIRECT)
    assert parse_callback(result.require_callback()).code
    assert origins == [fake.base, fake.base]
