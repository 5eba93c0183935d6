"""No secret in any byte the run writes, against a target that reflects everything it is sent.

One HTTPS server stands for the tool server, its authorization server, the platform and the compression service.
Every answer reflects the request (path and query, every header, the body) in one of several encodings: JSON
(escaped), HTML (escaped), a percent-encoded header, a redirect whose ``Location`` carries it. Its authorization
server is plausible enough for the harness to log in (the password is posted), get codes (in a ``Location`` header
and an HTML redirect page, before the harness parses them), authenticate with a client secret (Basic pair) and get
tokens, which it then sends back to the reflecting tool server. The target URL itself carries credentials.

Every secret must be absent from the console, report.json, report.html, report.har, junit.xml and the log file, in each
encoding it travelled in: raw, percent-encoded, JSON- and HTML-escaped, Base64 and Base64url, and inside every
``user:secret`` Basic pair the harness sends.
"""

from __future__ import annotations

import base64
import contextlib
import html
import itertools
import json
import secrets as random_secrets
import ssl
import threading
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit

import pytest
import trustme

from conformance.testing import run_harness
from tests._checks_run import run_checks
from tests._forked import forked_harness
from tests._serving import running
from tests.report.har_schema import validate_har

# Characters that every encoding changes (`/`, `+`, `&`, `"`, `<`, non-ASCII where a header does not carry it).
PLATFORM_KEY = 'sk-echo/platform+key&"<7e1f'
COMPRESSION_KEY = 'cmp-echo/key+&"<9d3c'
CLIENT_ID = "echo-client/1"
CLIENT_SECRET = 'cs-echo/secret+&"<5e6f'
TEST_USER = "echo-user"
TEST_PASSWORD = 'pässwörd-echo/&"<4b2a'
URL_USER = "urluser"
URL_PASSWORD = "url-pw/+&@:5a1b"
URL_KEY = 'url-key/+&"<8c2d'
CONFIGURED = (PLATFORM_KEY, COMPRESSION_KEY, CLIENT_SECRET, TEST_PASSWORD, URL_PASSWORD, URL_KEY)
BASIC_USERS = ("api", URL_USER, CLIENT_ID, quote(CLIENT_ID, safe=""))


TEXT_ENCODINGS = (
    lambda s: quote(s, safe=""),
    quote,
    quote_plus,
    lambda s: json.dumps(s)[1:-1],
    lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    html.escape,
    lambda s: html.escape(s, quote=False),
    lambda s: repr(s)[1:-1],
)


def encodings(secret: str) -> set[str]:
    """Each form ``secret`` may take in a reflected request or in a writer's output: every text encoding and every
    encoding of one (the echo nests them: JSON in a percent-encoded header, JSON in HTML), Base64 and Base64url of
    the value and of each Basic pair the harness sends."""
    once = {encode(secret) for encode in TEXT_ENCODINGS}
    forms = {secret} | once | {encode(form) for form in once for encode in TEXT_ENCODINGS}
    blobs = [secret.encode()] + [
        f"{user}:{value}".encode() for user in BASIC_USERS for value in (secret, quote(secret, safe=""))
    ]
    for blob in blobs:
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(blob).decode()
            forms |= {encoded, encoded.rstrip("=")}
    return forms


def occurrences(forms: Iterable[str], texts: dict[str, str], prefix_length: int = 6) -> set[tuple[str, str]]:
    """(where, form) for every form that is in a text: what ``form in text`` for every pair says, but each distinct
    prefix is looked for once, and the forms that start with it are compared only where it occurs. Hundreds of
    forms share a few dozen prefixes (every encoding of a secret starts alike up to its first special character,
    the Base64 of each Basic pair up to the secret), and a secret's prefix is rare in the text: several times
    faster over megabytes of output."""
    by_prefix: dict[str, list[str]] = {}
    for form in forms:
        by_prefix.setdefault(form[:prefix_length], []).append(form)
    found: set[tuple[str, str]] = set()
    for where, text in texts.items():
        for prefix, group in by_prefix.items():
            at = text.find(prefix)
            while at != -1:
                found.update((where, form) for form in group if text.startswith(form, at))
                at = text.find(prefix, at + 1)
    return found


class _EchoServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, ca: trustme.CA) -> None:
        super().__init__(("127.0.0.1", 0), _EchoHandler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(context)
        self.socket = context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)
        self.lock = threading.Lock()
        self.turn = itertools.count()
        self.interactions: dict[str, dict[str, str]] = {}
        self.issued: list[str] = []  # codes and tokens handed out: secrets learnt by the harness during the run
        self.userinfo = False
        self.workers = 0
        self.real = True

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.server_address[1]}"

    @property
    def target_url(self) -> str:
        # With userinfo, httpx sends it as Basic credentials instead of the access token: the other run sends tokens.
        userinfo = f"{URL_USER}:{quote(URL_PASSWORD, safe='')}@" if self.userinfo else ""
        query = urlencode({"api_key": URL_KEY, "tenant": "t1"})
        return f"https://{userinfo}127.0.0.1:{self.server_address[1]}/mcp?{query}"

    def issue(self, kind: str) -> str:
        value = f"echo-{kind}-{random_secrets.token_urlsafe(12)}"
        with self.lock:
            self.issued.append(value)
        return value


class _EchoHandler(BaseHTTPRequestHandler):
    server: _EchoServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if 0 < length <= 1024 * 1024 else b""
        echo = {
            "request": f"{self.command} {self.path}",
            "headers": dict(self.headers.items()),
            "body": body.decode("utf-8", "replace"),
        }
        with contextlib.suppress(OSError):  # the harness hung up first, as it may
            self._route(urlsplit(self.path).path, dict(parse_qsl(urlsplit(self.path).query)), body, echo)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer

    def _send(self, status: int, body: bytes, content_type: str = "application/json", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, document: Any, **headers: str) -> None:
        self._send(status, json.dumps(document).encode(), **headers)

    def _route(self, path: str, query: dict[str, str], body: bytes, echo: dict[str, Any]) -> None:
        base = self.server.base
        if path.startswith("/.well-known/oauth-protected-resource"):
            document = {"resource": self.server.target_url, "authorization_servers": [base], "echo": echo}
            return self._json(200, {**document, "scopes_supported": ["tools.read"]})
        if path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            return self._json(200, _as_metadata(base))
        if path == "/authorize":
            uid = random_secrets.token_hex(6)
            self.server.interactions[uid] = query
            page = f"<p>login at /interaction/{uid}</p><pre>{html.escape(json.dumps(echo))}</pre>"
            return self._send(302, page.encode(), "text/html", Location=f"/interaction/{uid}")
        if path.startswith("/interaction/"):
            uid = path.split("/")[2]
            if self.command == "GET":
                form = (
                    f'<form id="login" method="post" action="/interaction/{uid}/login">'
                    '<input name="login"><input name="password" type="password">'
                    '<button type="submit">Sign in</button></form>'
                    f"<pre>{html.escape(json.dumps(echo))}</pre>"
                )
                return self._send(200, form.encode(), "text/html")
            asked = self.server.interactions.get(uid, {})
            code = self.server.issue("code")
            answer = urlencode({"code": code, "state": asked.get("state", ""), "iss": base})
            callback = f"{asked.get('redirect_uri', '')}?{answer}"
            # The code also outside any URL: captured before the harness parses the redirect and learns it, so
            # only the last redaction pass (with every secret of the run) can take it out.
            page = (
                f'<a href="{html.escape(callback)}">continue</a><p>your code: {code}</p>'
                f"<pre>{html.escape(json.dumps(echo))}</pre>"
            )
            return self._send(302, page.encode(), "text/html", Location=callback, X_Echo=quote(json.dumps(echo)))
        if path == "/token":
            tokens = {"access_token": self.server.issue("access"), "refresh_token": self.server.issue("refresh")}
            return self._json(200, {**tokens, "token_type": "Bearer", "expires_in": 3600, "echo": echo})
        if path == "/jwks":
            return self._json(200, {"keys": []})
        if path == "/mcp" and not self.headers.get("Authorization"):
            challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
            return self._json(401, {"error": "invalid_token", "echo": echo}, WWW_Authenticate=challenge)
        self._reflect(echo)

    def _reflect(self, echo: dict[str, Any]) -> None:
        """Anything else: the request comes back, in turn, in each encoding."""
        text = json.dumps(echo)
        turn = next(self.server.turn) % 5
        if turn == 0:
            self._json(200, {"echo": echo, "id": "x", "object": "response"})
        elif turn == 1:
            self._json(400, {"error": {"message": text, "type": "invalid_request"}})
        elif turn == 2:
            description = quote(text)
            self._json(401, {"error": "x"}, WWW_Authenticate=f'Bearer error_description="{description}"')
        elif turn == 3:
            self._send(200, f"<html><pre>{html.escape(text)}</pre></html>".encode(), "text/html")
        else:
            self._send(302, b"", "text/plain", Location=f"https://elsewhere.example/?echo={quote(text)}")


def _as_metadata(base: str) -> dict[str, Any]:
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "jwks_uri": f"{base}/jwks",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "authorization_response_iss_parameter_supported": True,
        "scopes_supported": ["openid", "tools.read", "offline_access"],
    }


@pytest.fixture(
    params=[(True, 0, True), (False, 0, False), (False, 2, False)],
    ids=["userinfo-in-target-url", "tokens-to-the-tool-server", "xdist"],
)
def echo_server(request: pytest.FixtureRequest) -> Iterator[tuple[_EchoServer, trustme.CA]]:
    """The server, with or without userinfo in the target URL (with it, httpx sends the userinfo as Basic
    credentials instead of the access token), the number of xdist workers to run with (the controller writes
    the reports: it must learn the secrets the workers learnt), and whether the run is a real ``python -m pytest``
    (the first: a fresh interpreter importing everything with the secrets in its environment, its stdout apart from
    its stderr) or forked from the fork server (tests/_forked.py: both streams in one, which is all searched; the
    xdist run's workers are fresh interpreters either way)."""
    ca = trustme.CA()
    server = _EchoServer(ca)
    server.userinfo, server.workers, server.real = request.param
    with running(server, "echo-server"):
        yield server, ca


def test_no_secret_reaches_any_output_in_any_encoding(
    echo_server: tuple[_EchoServer, trustme.CA], tmp_path: Path
) -> None:
    server, ca = echo_server
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    publisher = ca.issue_cert("127.0.0.1")  # the host's CIMD publisher: linking needs a client metadata origin
    publisher.cert_chain_pems[0].write_to_path(str(tmp_path / "publisher.pem"))
    publisher.private_key_pem.write_to_path(str(tmp_path / "publisher.key"))
    log_file = tmp_path / "run.log"
    args = [
        "--ca-bundle",
        str(bundle),
        "--target-url",
        server.target_url,
        "--platform-url",
        server.base,
        "--compression-url",
        server.base,
        "--client-registration",
        "predefined",
        "--client-id",
        CLIENT_ID,
        "--max-expiry-wait",
        "1",
        "--read-timeout",
        "5",
        # Everything pytest can be asked to show: every report's sections, logs at DEBUG in the console, the
        # reports and a log file, captured output in junit.xml.
        "-rA",
        "--log-level",
        "DEBUG",
        "--log-file",
        str(log_file),
        "--log-file-level",
        "DEBUG",
        "-o",
        "junit_logging=all",
        *(["-n", str(server.workers)] if server.workers else []),
    ]
    env = {
        "CONFORMANCE_PLATFORM_API_KEY": PLATFORM_KEY,
        "CONFORMANCE_COMPRESSION_API_KEY": COMPRESSION_KEY,
        "CONFORMANCE_CLIENT_SECRET": CLIENT_SECRET,
        "CONFORMANCE_TEST_USER": TEST_USER,
        "CONFORMANCE_TEST_PASSWORD": TEST_PASSWORD,
        "CONFORMANCE_PUBLISHER_CERTFILE": str(tmp_path / "publisher.pem"),
        "CONFORMANCE_PUBLISHER_KEYFILE": str(tmp_path / "publisher.key"),
    }
    result = (run_harness if server.real else forked_harness)(args, tmp_path, env=env, timeout=600)
    output = result.stdout + result.stderr
    assert "INTERNALERROR" not in output, output[-3000:]
    # The flow went far enough for every secret to travel: the password was posted, codes and tokens issued.
    issued = list(server.issued)
    assert any(v.startswith("echo-code-") for v in issued), output[-3000:]
    assert any(v.startswith("echo-access-") for v in issued), output[-3000:]
    assert "could not write the report" not in output, output[-3000:]
    written = {
        "console": output,
        **{
            name: (tmp_path / name).read_text(encoding="utf-8")
            for name in ("report.json", "report.html", "report.har", "junit.xml")
        },
        "log file": log_file.read_text(encoding="utf-8"),
    }
    validate_har(json.loads(written["report.har"]))  # a HAR of the hostile run's evidence, and not an empty one
    assert json.loads(written["report.har"])["log"]["entries"]
    assert "DEBUG" in written["log file"]  # the log file is not empty: the check below can find something
    forms = {form: secret for secret in (*CONFIGURED, *issued) for form in encodings(secret)}
    # The search finds each form wherever it is (here: all of them, in one text).
    assert {form for _, form in occurrences(forms, {"probe": "\0".join(forms)})} == set(forms)
    leaks = sorted((where, forms[form], form) for where, form in occurrences(forms, written))
    assert not leaks, leaks[:20]
    # The URLs are still shown, credentials redacted (the console header included).
    assert f"conformance: tool_server = {result.report['targets']['tool_server']['url']}" in result.stdout
    targets = json.dumps(result.report["targets"])
    assert "127.0.0.1" in targets and "[REDACTED]" in targets and "tenant=t1" in targets


# A secret in every place a check's outcome reaches pytest's own output while the run is under way: a skip reason,
# a failure's traceback and message, a log record, printed output. Known to the run from the start (the target
# URL's password) or met in a target's answer (a URL with user information), it must be masked in every mode.
MODES_CHECKS = """
import logging
import pytest
from conformance import fail, needs, rule

LEAKED = "http://intruder:answer-pw-6c1d@10.0.0.9/cb"

@rule("AUTH-PRM-01")
def test_skip_names_the_url(conformance_settings):
    pytest.skip(f"blocked: {conformance_settings.target('tool_server').base_url} and {LEAKED} did not answer")

@rule("AUTH-PRM-02")
def test_fails_naming_the_url(conformance_settings):
    url = conformance_settings.target("tool_server").base_url
    logging.getLogger("check").info("trying %s then %s", url, LEAKED)
    print(f"printed: {url} {LEAKED}")
    fail(f"{url} answered {LEAKED}")

@rule("AUTH-PRM-03")
def test_raises_naming_the_url(conformance_settings):
    raise RuntimeError(f"{conformance_settings.target('tool_server').base_url} {LEAKED}")
"""

OUTPUT_MODES = {
    "verbose": ["-vv"],
    "all-summaries": ["-rA", "-v"],
    "no-capture": ["-s", "-v"],
    "live-logging": ["-vv", "--log-cli-level=INFO"],
    "long-tracebacks": ["--tb=long", "-rA"],
    "full-trace": ["--full-trace", "-rA"],
    "user-junit": ["--junitxml", "user-junit.xml", "-o", "junit_logging=all", "-rA"],
}


@pytest.mark.parametrize("mode", list(OUTPUT_MODES))
def test_no_secret_in_any_pytest_output_mode(pytester: pytest.Pytester, mode: str) -> None:
    pytester.makepyfile(test_checks=MODES_CHECKS)
    target = "http://urluser:url-pw-3e7a@127.0.0.1:1/mcp"
    result = run_checks(pytester, "--target-url", target, *OUTPUT_MODES[mode], "test_checks.py", how="forked")
    written = {"console": "\n".join(result.outlines + result.errlines)}
    for name in ("out/report.json", "out/junit.xml", "user-junit.xml"):
        if (pytester.path / name).is_file():
            written[name] = (pytester.path / name).read_text(encoding="utf-8")
    assert "test_checks.py" in written["console"] and "[REDACTED]" in written["console"]  # the run ran
    leaks = {
        where: secret
        for where, text in written.items()
        for secret in ("url-pw-3e7a", "answer-pw-6c1d")
        if secret in text
    }
    assert not leaks, {where: _around(written[where], secret) for where, secret in leaks.items()}


def _around(text: str, secret: str) -> str:
    at = text.find(secret)
    return text[max(at - 300, 0) : at + 100]
