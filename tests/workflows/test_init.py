"""`conformance init`: the starting files, the login steps taken from a real login page served on 127.0.0.1,
idempotence and --force."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml

from conformance.cli._main import main
from conformance.cli.init import ACTION_REF, PREDEFINED_REDIRECT_URI, toml_string
from conformance.config import read_config_files, resolve
from conformance.host.login import LoginSteps, form_submission, parse_page
from conformance.host.login.page import _plan
from conformance.report.baseline import Baseline
from tests._serving import serve_http

LOGIN_PAGE = """<!doctype html><html><head><title>Sign in to Example</title></head><body>
<form id="search" action="/search"><input name="q"><button>Go</button></form>
<form id="login" method="post" action="/login/submit">
  <input type="hidden" name="csrf" value="tok-123">
  <label>E-mail <input type="email" name="email" autocomplete="username"></label>
  <label>Password <input type="password" name="pass"></label>
  <label><input type="checkbox" name="remember"> Remember me</label>
  <input type="text" name="otp" placeholder="one-time code">
  <button type="submit" name="action" value="login">Sign in</button>
</form></body></html>"""

# A hostile page: names and text that try to break out of TOML strings and comments.
HOSTILE_PAGE = """<html><head><title>x
[[steps]]
name = "injected"</title></head><body>
<form id="f" method="post" action="/a&#10;[[steps]]&#10;name=&quot;x&quot;">
<input type="text" name="user&#34;]
[[steps]]">
<input type="password" name="pw">
<input name="note&#10;evil = 1" value="x">
</form></body></html>"""

PAGES = {"/interaction/Zk3p9QvX2mLr8TbY": LOGIN_PAGE, "/hostile": HOSTILE_PAGE}


class _Handler(BaseHTTPRequestHandler):
    def _json(self, document: dict[str, object]) -> None:
        body = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # the MCP endpoint: 401 with the metadata URL, as a protected tool server answers
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.send_response(401)
        self.send_header("WWW-Authenticate", f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        query = dict(parse_qsl(urlsplit(self.path).query))
        if self.path == "/.well-known/oauth-protected-resource":
            return self._json({"resource": f"{base}/mcp", "authorization_servers": [base]})
        if self.path == "/.well-known/oauth-authorization-server":
            return self._json({"issuer": base, "authorization_endpoint": f"{base}/authorize"})
        if self.path.startswith("/authorize?"):
            known = query.get("client_id") == "vendor-client" and query.get("code_challenge_method") == "S256"
            known = known and query.get("redirect_uri") == PREDEFINED_REDIRECT_URI
            self.send_response(302 if known else 400)
            self.send_header("Location", "/login" if known else "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if self.path == "/login":  # the authorization server sends the browser on to its interaction page
            self.send_response(302)
            self.send_header("Location", "/interaction/Zk3p9QvX2mLr8TbY")
            self.end_headers()
            return None
        page = PAGES.get(self.path)
        self.send_response(200 if page else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        body = (page or "not found").encode()
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return None

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_http(_Handler) as origin:
        yield origin


def _init(directory: Path, *args: str) -> int:
    return main(["init", "--dir", str(directory), "--allow-insecure-loopback", *args])


def test_init_writes_every_file_from_the_real_login_page(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _init(tmp_path, "--login-url", f"{server}/login", "--platform-url", "https://sandbox.example.com")
    assert code == 0
    out = capsys.readouterr().out
    assert out.count("written") == 4

    # conformance.toml: what the harness reads, with the files it names.
    monkeypatch.chdir(tmp_path)
    settings = resolve(env={}, files=read_config_files(tmp_path))
    assert settings.get("platform_url") == "https://sandbox.example.com"
    assert settings.get("target_url") is None
    assert str(settings.get("login_steps")) == "login_steps.toml"
    baseline = Baseline.load(tmp_path / "conformance-baseline.toml")
    assert baseline.entries == {}

    # The login steps: parsed by the harness, and the login step applies to the page and fills the right fields.
    steps = LoginSteps.load(tmp_path / "login_steps.toml")
    assert [s.name for s in steps.steps] == ["login"]  # the search form is listed, commented
    login = steps.steps[0]
    assert login.fill == {"email": "{user}", "pass": "{password}"}
    text = (tmp_path / "login_steps.toml").read_text()
    assert "field otp (text): not filled" in text and "field remember (checkbox): not filled" in text
    assert "hidden (sent as is): csrf" in text and "Sign in to Example" in text
    page = parse_page(f"{server}/interaction/Qw8rTy5uIo1pAs7D", LOGIN_PAGE)  # another session id: still matches
    plan = _plan(login, page, "approve")
    assert plan is not None
    method, url, data = form_submission(page, plan, {"email": "u@example.com", "pass": "pw"})
    assert (method, url) == ("POST", f"{server}/login/submit")
    assert data is not None and data["csrf"] == "tok-123" and data["email"] == "u@example.com"

    # The CI workflow uses the action with the settings file.
    workflow = yaml.safe_load((tmp_path / ".github/workflows/conformance.yml").read_text())
    step = next(s for s in workflow["jobs"]["certify"]["steps"] if s.get("uses") == ACTION_REF)
    assert step["with"] == {"config": "conformance.toml", "platform-url": "https://sandbox.example.com"}
    assert workflow["permissions"]["id-token"] == "write"


def test_init_is_idempotent_and_overwrites_only_with_force(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _init(tmp_path, "--login-url", f"{server}/login") == 0
    first = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert _init(tmp_path, "--login-url", f"{server}/login") == 0
    out = capsys.readouterr().out
    assert "written" not in out and out.count("unchanged") == 3 and out.count("kept") == 1
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == first
    config = tmp_path / "conformance.toml"
    config.write_text('platform_url = "https://mine.example"\n')  # the vendor's edits survive
    assert _init(tmp_path, "--target-url", "https://mcp.example.com/mcp") == 0
    assert config.read_text() == 'platform_url = "https://mine.example"\n'
    assert "kept (exists; --force overwrites)" in capsys.readouterr().out
    assert _init(tmp_path, "--target-url", "https://mcp.example.com/mcp", "--force", "--ci", "none") == 0
    assert 'target_url = "https://mcp.example.com/mcp"' in config.read_text()
    assert "overwritten" in capsys.readouterr().out
    # Without --login-url the login steps are a template, still a valid steps file.
    assert LoginSteps.load(tmp_path / "login_steps.toml").steps[0].name == "login"


def test_a_hostile_login_page_cannot_inject_steps(server: str, tmp_path: Path) -> None:
    assert _init(tmp_path, "--login-url", f"{server}/hostile", "--ci", "none") == 0
    data = tomllib.loads((tmp_path / "login_steps.toml").read_text())
    steps = LoginSteps.parse(data)
    assert [s.name for s in steps.steps] == ["login"]
    assert set(data) == {"user_env", "password_env", "steps"}
    assert steps.steps[0].fill == {"pw": "{password}"}  # the user field's name cannot be addressed bare


def test_init_with_an_unreachable_login_page_is_a_clean_error(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _init(tmp_path, "--login-url", f"{server}/nope") == 2
    assert "answered 404" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    assert _init(tmp_path / "b", "--login-url", "http://127.0.0.1:1/login") == 2
    err = capsys.readouterr().err
    assert err.startswith("conformance:") and "Traceback" not in err


@pytest.mark.parametrize("value", ['a"b', "back\\slash\\u0041", "line\nbreak", "del\x7f", "lone \ud800", "ok é"])
def test_toml_string_round_trips(value: str) -> None:
    parsed = tomllib.loads(f"v = {toml_string(value)}")["v"]
    assert parsed == value.replace("\ud800", "\ufffd")


def test_init_reaches_the_login_page_by_discovery_and_an_authorization_request(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --login-url: PRM and AS metadata from --target-url, then the predefined client's authorization
    request, redirects followed to the page the user would sign in on."""
    args = ("--target-url", f"{server}/mcp", "--client-id", "vendor-client", "--ci", "none")
    assert _init(tmp_path, *args) == 0
    text = (tmp_path / "login_steps.toml").read_text()
    assert f"an authorization request to {server}/authorize" in text
    steps = LoginSteps.load(tmp_path / "login_steps.toml")
    assert steps.steps[0].fill == {"email": "{user}", "pass": "{password}"}
    assert 'client_id = "vendor-client"' in (tmp_path / "conformance.toml").read_text()
    # An unknown client: the authorization server refuses it, and init says so instead of writing a wrong file.
    assert _init(tmp_path / "other", "--target-url", f"{server}/mcp", "--client-id", "nobody") == 2
    assert "answered 400" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()  # nothing half-written
