"""Every bundled suite against targets that misbehave in every way we could think of.

The harness must come out of it with a complete, schema-valid report in which the target fails (never a harness
``error``, never an INTERNALERROR or a traceback as the verdict, never a hang), and the API keys it was given appear
in no output. One server stands for all three targets; its answers rotate through the misbehaviours per request,
or all stall, depending on the run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import socket
import ssl
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import jsonschema
import pytest
import trustme

from conformance.core.rules import RULES
from conformance.testing import RunResult, run_harness
from tests import _hostile as hostile_modes
from tests._forked import forked_harness
from tests._serving import running

PLATFORM_KEY = "sk-hostile-platform-3f9a1c7e5d2b"
COMPRESSION_KEY = "hostile-compression-8e2d4c6a0b1f"
ACCOUNT_PASSWORD = "hostile-password-5a7c9e1b3d"
SECRETS = (PLATFORM_KEY, COMPRESSION_KEY, ACCOUNT_PASSWORD)

Answer = Callable[[BaseHTTPRequestHandler], None]


def _send(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    if "Content-Length" not in headers:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


def _json(status: int, body: bytes, **headers: str) -> Answer:
    return lambda h: _send(h, status, {"Content-Type": "application/json", **headers}, body)


def _reset(handler: BaseHTTPRequestHandler) -> None:
    handler.close_connection = True
    handler.connection.shutdown(2)  # no answer at all


def _lying_length(handler: BaseHTTPRequestHandler) -> None:
    handler.close_connection = True
    _send(handler, 200, {"Content-Type": "application/json", "Content-Length": "5000"}, b'{"partial": ')


WRONG_SHAPES = json.dumps(
    {
        "resource": 5,
        "authorization_servers": "not-a-list",
        "issuer": ["a"],
        "error": {"message": 3, "type": None},
        "data": {"id": 1},
        "has_more": "yes",
        "input_tokens": -1,
        "id": None,
        "tools": [None, 3, {"name": 7}],
        "output": {"url": "javascript:alert(1)"},
    }
).encode()

MISBEHAVIOURS: list[Answer] = [
    _json(200, b'{"unterminated'),
    _json(200, b"[]"),
    _json(200, b"null"),
    _json(200, WRONG_SHAPES, **{"Compression-Count": "many", "Image-Width": "-5", "Location": "javascript:x"}),
    lambda h: _send(h, 200, {"Content-Type": "text/html"}, b"<html><script>alert(1)</script>\xff\xfe</html>"),
    lambda h: _send(h, 200, {"Content-Type": "image/png", "Image-Height": "1e9"}, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
    _json(
        401,
        b'{"error": "invalid_token"}',
        **{"WWW-Authenticate": 'Bearer resource_metadata="http://169.254.169.254/latest, scope=, error="x'},
    ),
    _json(429, b'{"error": {}}', **{"Retry-After": "100000", "x-ratelimit-remaining-requests": "-3"}),
    _json(429, b"{}", **{"Retry-After": "Thu, 01 Jan 2099 00:00:00 GMT", "x-ratelimit-reset-requests": "forever"}),
    lambda h: _send(h, 302, {"Location": "http://169.254.169.254/latest/meta-data"}, b""),
    lambda h: _send(h, 307, {"Location": h.path}, b""),
    lambda h: _send(h, 500, {"Content-Type": "text/plain"}, b"boom"),
    # header values outside ASCII (sent as latin-1 bytes by http.server), a Location among them
    _json(401, b"{}", **{"WWW-Authenticate": 'Bearer realm="café"', "X-Note": "naïve", "Location": "/ünï"}),
    lambda h: _send(h, 200, {"Content-Type": "text/event-stream"}, b"event: message\ndata: {not json}\n\n"),
    lambda h: _send(h, 200, {"Content-Type": "application/json"}, b'{"pad": "' + b"x" * 300_000 + b'"}'),
    _json(200, b"[" * 5000 + b"]" * 5000),
    _reset,
    _lying_length,
]


def _stall(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    handler.wfile.write(b'{"slow": ')
    handler.wfile.flush()
    time.sleep(30)  # far past the run's read timeout; the harness must give up on its own


class _Handler(BaseHTTPRequestHandler):
    server: _HostileServer

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= 64 * 1024 * 1024:
            self.rfile.read(length)
        with contextlib.suppress(OSError):  # the harness hung up first, as it may
            self.server.next_answer(self)(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HostileServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answers: list[Answer], plausible_discovery: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self._answers = itertools.cycle(answers)
        self._lock = threading.Lock()
        self.plausible_discovery = plausible_discovery
        self.scheme = "http"

    def serve_tls(self, ca: trustme.CA) -> None:
        """HTTPS from now on: plausible discovery must pass the harness's https-only checks to reach the flow."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(context)
        self.socket = context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)
        self.scheme = "https"

    @property
    def base(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server_address[1]}"

    def next_answer(self, handler: BaseHTTPRequestHandler) -> Answer:
        if self.plausible_discovery:
            scripted = _discovery_answer(self.base, handler)
            if scripted is not None:
                return scripted
        with self._lock:
            return next(self._answers)


def _discovery_answer(base: str, handler: BaseHTTPRequestHandler) -> Answer | None:
    """Well-formed discovery and an authorization endpoint that approves at once, so that linking gets as far
    as the tool server, which then misbehaves like the rest."""
    path = handler.path.split("?")[0]
    if path.startswith("/.well-known/oauth-protected-resource"):
        document = {"resource": f"{base}/mcp", "authorization_servers": [base], "scopes_supported": ["tools.read"]}
        return _json(200, json.dumps(document).encode())
    if path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        document = {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["private_key_jwt", "none"],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
            "scopes_supported": ["openid", "email", "profile", "tools.read", "tools.write", "offline_access"],
        }
        return _json(200, json.dumps(document).encode())
    if path == "/authorize":  # approves at once, so the token endpoint and the tool server are reached
        query = dict(parse_qsl(urlsplit(handler.path).query))
        answer = urlencode({"code": "hostile-code", "state": query.get("state", ""), "iss": base})
        return lambda h: _send(h, 302, {"Location": f"{query.get('redirect_uri', '')}?{answer}"}, b"")
    if path == "/token":  # any request gets a token: the tool server's misbehaviour is what is under test
        token = {"access_token": "hostile.access.token", "token_type": "Bearer", "expires_in": 3600}
        return _json(200, json.dumps(token).encode())
    if path == "/mcp" and not handler.headers.get("Authorization"):
        challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", scope="tools.read"'
        return _json(401, b'{"error": "invalid_token"}', **{"WWW-Authenticate": challenge})
    return None


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def hostile_server(request: pytest.FixtureRequest, ca: trustme.CA) -> Iterator[str]:
    answers, plausible_discovery = request.param
    server = _HostileServer(answers, plausible_discovery)
    if plausible_discovery:
        server.serve_tls(ca)
    with running(server, "hostile-target"):
        yield server.base


# The misbehaving server's answers rotate per request: one request at a time, each check meets the same answers in
# every run (with checks at once, which one meets the unwaitable 429, or a JSON object where it expects a failure,
# would depend on the threads' timing). test_every_hostile_mode_ends_in_verdicts keeps rotating answers at the
# default concurrency, with assertions that hold in any order.
ONE_AT_A_TIME = ("--concurrency", "1")


def _run_all_suites(base: str, report_dir: Path, ca: trustme.CA, *extra: str, real: bool = True) -> RunResult:
    """In a real ``python -m pytest`` (``real``): a thread the run left blocked on a hostile socket would hang its
    exit, which a forked run (tests/_forked.py, which ends with os._exit) would not show."""
    bundle = report_dir / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    publisher = ca.issue_cert("127.0.0.1")  # so that linking gets as far as the target's endpoints
    publisher.cert_chain_pems[0].write_to_path(str(report_dir / "publisher.pem"))
    publisher.private_key_pem.write_to_path(str(report_dir / "publisher.key"))
    args = [
        "--ca-bundle",
        str(bundle),
        "--target-url",
        f"{base}/mcp",
        "--platform-url",
        base,
        "--compression-url",
        base,
        "--allow-insecure-loopback",
        "--max-response-bytes",
        "100000",
        "--max-expiry-wait",
        "2",
        "-q",
        *extra,
    ]
    env = {
        "CONFORMANCE_PLATFORM_API_KEY": PLATFORM_KEY,
        "CONFORMANCE_COMPRESSION_API_KEY": COMPRESSION_KEY,
        "CONFORMANCE_TEST_USER": "hostile-user",
        "CONFORMANCE_TEST_PASSWORD": ACCOUNT_PASSWORD,
        "CONFORMANCE_PUBLISHER_CERTFILE": str(report_dir / "publisher.pem"),
        "CONFORMANCE_PUBLISHER_KEYFILE": str(report_dir / "publisher.key"),
    }
    # The timeout guards against a hang; it is not a performance target.
    return (run_harness if real else forked_harness)(args, report_dir, env=env, timeout=420)


def _assert_target_failed_and_harness_held(result: RunResult, report_dir: Path, must_fail: set[str]) -> None:
    schema_path = Path(__file__).parents[1] / "conformance" / "schemas" / "report.schema.json"
    jsonschema.validate(result.report, json.loads(schema_path.read_text()))
    output = result.stdout + result.stderr
    assert "INTERNALERROR" not in output and "Traceback" not in output, output[-3000:]
    assert result.exit_code == 1, output[-3000:]
    assert result.report["verdict"]["accepted"] is False
    statuses = result.statuses()
    assert set(statuses) == set(RULES), sorted(set(RULES) ^ set(statuses))
    errors = [r for r in result.report["results"] if r["status"] == "error"]
    assert not errors, "\n".join(f"{r['rule']}: {r['message']}"[:600] for r in errors)
    # A blocked rule names a prerequisite that did not pass, and never itself; or the target throttled the harness
    # beyond what it may wait (a 429 with Retry-After: 100000 is no answer, and the RL rules alone judge it).
    blocked = {
        r["rule"]: r["blocked_by"]
        for r in result.report["results"]
        if r["status"] == "blocked" and not r["message"].startswith("target throttled the harness: ")
    }
    assert all(statuses.get(by) not in (None, "passed") and by != rule for rule, by in blocked.items()), blocked
    decided = {rule for rule, status in statuses.items() if status in ("failed", "warning")}
    # The answers rotate per request, so which check meets the unwaitable 429 depends on how many requests came
    # before it: a rule of ``must_fail`` may instead be blocked by that throttle (a correct non-verdict), but the
    # rest are decided, and at least one is.
    throttled = {
        r["rule"] for r in result.report["results"] if r["message"].startswith("target throttled the harness: ")
    }
    told = {
        r["rule"]: f"{r['status']}: {r['message']}"[:400] for r in result.report["results"] if r["rule"] in must_fail
    }
    assert must_fail - throttled <= decided and must_fail & decided, (told, statuses)
    for name in ("report.json", "report.html", "junit.xml"):
        text = (report_dir / name).read_text(encoding="utf-8", errors="replace")
        assert not [secret for secret in SECRETS if secret in text], name
    assert not [secret for secret in SECRETS if secret in output]


@pytest.mark.parametrize("hostile_server", [(MISBEHAVIOURS, False)], indirect=True, ids=["misbehaving"])
def test_a_misbehaving_target_fails_without_breaking_the_harness(
    hostile_server: str, tmp_path: Path, ca: trustme.CA
) -> None:
    result = _run_all_suites(hostile_server, tmp_path, ca, *ONE_AT_A_TIME)
    _assert_target_failed_and_harness_held(result, tmp_path, {"AUTH-PRM-01", "TOK-01", "IMG-SHRINK-01"})


@pytest.mark.parametrize("hostile_server", [(MISBEHAVIOURS, True)], indirect=True, ids=["plausible-discovery"])
def test_an_authorization_server_that_approves_everything_is_caught(
    hostile_server: str, tmp_path: Path, ca: trustme.CA
) -> None:
    result = _run_all_suites(hostile_server, tmp_path, ca, *ONE_AT_A_TIME, real=False)
    # Linking reaches the tool server; the approve-all server fails the refusal rules, the tool server the rest.
    must_fail = {"AUTH-CIMD-01", "AUTH-CIMD-03", "AUTH-FLOW-03", "AUTH-FLOW-06", "AUTH-TOOL-01", "TOK-01"}
    _assert_target_failed_and_harness_held(result, tmp_path, must_fail)
    assert result.statuses()["AUTH-PRM-01"] == "passed"


@pytest.mark.parametrize("hostile_server", [([_stall], False)], indirect=True, ids=["stalling"])
def test_a_stalling_target_is_timed_out(hostile_server: str, tmp_path: Path, ca: trustme.CA) -> None:
    result = _run_all_suites(hostile_server, tmp_path, ca, "--read-timeout", "0.05", "--total-timeout", "0.15")
    _assert_target_failed_and_harness_held(result, tmp_path, {"AUTH-PRM-01", "TOK-01", "IMG-SHRINK-01"})
    shrink = next(r for r in result.report["results"] if r["rule"] == "IMG-SHRINK-01")
    assert "timed out" in shrink["message"] or "no complete response" in shrink["message"], shrink["message"]


# Well-formed JSON of the wrong shape, answered 200 to every request: every check that reads the answer must end
# in a verdict naming the missing or mistyped field (read through conformance.host.fields), never a harness error.
SHAPES = {
    "empty-object": b"{}",
    "list": b"[1, 2]",
    "string": b'"ok"',
    "wrong-types": json.dumps(
        {
            "id": 7,
            "object": 3,
            "data": {"id": "x"},
            "has_more": "yes",
            "first_id": [],
            "name": None,
            "status": 1,
            "budget": "lots",
            "created_at": "today",
            "updated_at": None,
            "input_tokens": "many",
            "error": "nope",
            "input": [],
            "output": "none",
        }
    ).encode(),
    "list-of-empty-objects": json.dumps({"object": "list", "data": [{}, {"id": None}], "has_more": False}).encode(),
}


@pytest.mark.parametrize(
    "hostile_server",
    [([_json(200, body)], False) for body in SHAPES.values()],
    indirect=True,
    ids=list(SHAPES),
)
def test_wrong_json_shapes_end_in_verdicts(hostile_server: str, tmp_path: Path) -> None:
    env = {"CONFORMANCE_PLATFORM_API_KEY": PLATFORM_KEY, "CONFORMANCE_COMPRESSION_API_KEY": COMPRESSION_KEY}
    # The target gives every request the same answer: a property check's further cases would meet it again.
    env["CONFORMANCE_HYPOTHESIS_EXAMPLES"] = "3"
    args = [
        "--platform-url",
        hostile_server,
        "--compression-url",
        hostile_server,
        "--suite",
        "platform,campaigns,compression",
        "--allow-insecure-loopback",
        "--platform-rl-budget",
        "5",
        "--platform-max-retry-after",
        "1",
        "-q",
    ]
    result = forked_harness(args, tmp_path, env=env, timeout=420)
    output = result.stdout + result.stderr
    assert "INTERNALERROR" not in output and "Traceback" not in output, output[-3000:]
    assert result.exit_code == 1, output[-3000:]
    errors = [r for r in result.report["results"] if r["status"] == "error"]
    assert not errors, "\n".join(f"{r['rule']}: {r['message']}"[:600] for r in errors)
    statuses = result.statuses()
    # The endpoints that create and read campaigns and count tokens are judged: they fail with a message.
    for rule_id in ("CAMP-01", "CAMP-06", "CAMP-08", "CAMP-09", "CAMP-10", "CAMP-11", "TOK-01", "IMG-SHRINK-01"):
        assert statuses[rule_id] in ("failed", "warning", "blocked"), (rule_id, statuses[rule_id])
        message = next(r["message"] for r in result.report["results"] if r["rule"] == rule_id)
        assert message and "KeyError" not in message and "TypeError" not in message, (rule_id, message)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("hostile_server", [([_json(200, b"{}")], False)], indirect=True, ids=["plain-http"])
def test_nothing_answering_at_a_target_is_incomplete(hostile_server: str, tmp_path: Path) -> None:
    """A closed port, a host name that does not resolve, an https URL whose server speaks plain HTTP: the run never
    reached those targets (INCOMPLETE, one line each naming the URL and the error), no rule failed."""
    closed = f"https://127.0.0.1:{_closed_port()}/mcp"
    no_tls = hostile_server.replace("http://", "https://", 1)
    args = ["--target-url", closed, "--platform-url", "https://conformance-nowhere.invalid", "--compression-url"]
    env = {"CONFORMANCE_PLATFORM_API_KEY": PLATFORM_KEY, "CONFORMANCE_COMPRESSION_API_KEY": COMPRESSION_KEY}
    result = forked_harness([*args, no_tls, "-q"], tmp_path, env=env, timeout=120)
    verdict = result.report["verdict"]
    assert verdict["status"] == "INCOMPLETE" and result.exit_code == 1, verdict
    assert set(result.statuses().values()) == {"skipped"}, result.statuses()
    missing = verdict["missing"]
    assert len(missing) == 3, missing
    by_url = {url: next(m for m in missing if url in m) for url in (closed, "conformance-nowhere.invalid", no_tls)}
    assert "connection refused" in by_url[closed], by_url
    assert "does not resolve" in by_url["conformance-nowhere.invalid"], by_url
    assert "TLS handshake failed" in by_url[no_tls], by_url


@pytest.mark.parametrize("hostile_server", [([_json(200, b"{}")], False)], indirect=True, ids=["plain-http"])
def test_a_plain_http_target_that_answers_keeps_its_transport_verdict(hostile_server: str, tmp_path: Path) -> None:
    """Plain HTTP on loopback without --allow-insecure-loopback is reached: the transport is judged (a finding, not
    a configuration gap), and the message names the option that certifies a development server."""
    result = forked_harness(["--target-url", f"{hostile_server}/mcp", "--suite", "auth", "-q"], tmp_path, timeout=120)
    prm = next(r for r in result.report["results"] if r["rule"] == "AUTH-PRM-01")
    assert prm["status"] == "failed" and "--allow-insecure-loopback" in prm["message"], prm
    assert result.report["verdict"]["status"] == "NOT ACCEPTED", result.report["verdict"]


# -- the hostile-target battery: one hostile way of answering at a time (tests/_hostile.py), each bounded --------

BOUNDED_CAP = 1_000_000  # --max-response-bytes of the battery: a megabyte, decoded


def _one_request(client: Any, url: str, budget_s: float = 1.5) -> tuple[str, float, int, list[dict[str, Any]]]:
    """(what came of it, seconds, peak bytes allocated, the evidence) of one request inside a check whose time
    budget is ``budget_s``."""
    from conformance.core import _budget, _context
    from conformance.core._exceptions import TargetError

    record = _context.begin(("AUTH-PRM-01",))
    _budget.start_check(record, budget_s)
    tracemalloc.start()
    started = time.monotonic()
    try:
        outcome = f"answer {client()}"
    except TargetError as exc:
        outcome = f"{type(exc).__name__}: {exc}"
    finally:
        seconds = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        _context.end()
    return outcome, seconds, peak, record.exchanges


EXPECTED = {
    "huge-body": "ResponseTooLarge",
    "gzip-bomb": "ResponseTooLarge",
    "slow-drip": "TargetTooSlow",
    "invalid-json": "answer 200",
    "redirect-loop": "answer 302",
    "redirect-internal": "UrlRefused",
    "empty-object": "answer 200",
    "html": "answer 200",
    "huge-header": "answer 401",
    "bad-utf8-headers": "answer 401",
}


@pytest.mark.parametrize("mode", list(hostile_modes.MODES))
def test_the_host_client_stays_bounded(mode: str) -> None:
    """HostHTTP (every suite's client: auth, platform, compression, the login driver) against each mode."""
    from conformance.host._guard import UrlGuard
    from conformance.host.http import HostHTTP

    with hostile_modes.hostile(hostile_modes.MODES[mode]) as base:
        http = HostHTTP(max_response_bytes=BOUNDED_CAP, guard=UrlGuard(allow_insecure_loopback=True), retry=None)
        with http:
            request = lambda: http.get(f"{base}/x", follow_redirects=True).status_code  # noqa: E731
            outcome, seconds, peak, evidence = _one_request(request, f"{base}/x")
    assert outcome.startswith(EXPECTED[mode]), outcome
    assert seconds < 5, (mode, seconds)
    assert peak < 8 * BOUNDED_CAP, (mode, peak)  # the body under its cap, a few copies at most, never the bomb
    assert evidence and len(json.dumps(evidence)) < 64_000, (mode, len(json.dumps(evidence)))
    if mode == "huge-header":
        challenge = evidence[-1]["response_headers"]["www-authenticate"]
        assert challenge.endswith(" more characters]") and len(challenge) < 2100, challenge[-60:]


@pytest.mark.parametrize("mode", ["gzip-bomb", "huge-body", "slow-drip", "bad-utf8-headers"])
def test_the_mcp_sdk_transport_stays_bounded(mode: str) -> None:
    """The MCP SDK reads its bodies itself: its transport hands it no byte past the cap, nor past the budget."""
    from conformance.host._guard import UrlGuard
    from conformance.host.http import HostHTTP
    from conformance.host.mcp_session import McpSession

    with hostile_modes.hostile(hostile_modes.MODES[mode]) as base:
        http = HostHTTP(max_response_bytes=BOUNDED_CAP, guard=UrlGuard(allow_insecure_loopback=True), retry=None)
        with http:
            # The size modes are about the cap, not the budget: the SDK's first session (its models built, its
            # portal started, all under tracemalloc) must not spend the budget before the body arrives.
            budget = 1.5 if mode == "slow-drip" else 4.0
            open_session = lambda: McpSession(http, f"{base}/mcp").open()  # noqa: E731
            outcome, seconds, peak, evidence = _one_request(open_session, base, budget)
    expected = {"gzip-bomb": "ResponseTooLarge", "huge-body": "ResponseTooLarge", "slow-drip": "TargetTooSlow"}
    assert outcome.startswith(expected.get(mode, "McpSessionError")), outcome
    assert seconds < 5, (mode, seconds)
    assert peak < 8 * BOUNDED_CAP, (mode, peak)
    assert evidence and len(json.dumps(evidence)) < 64_000


def test_an_mcp_answer_that_never_comes_within_the_budget_is_the_target_too_slow() -> None:
    """No answer at all (not a byte, not a head): the SDK's request times out at what was left of the check's
    budget, which is the target too slow for that budget (the check blocked), as HostHTTP says it, not the target
    unreachable (a transport failure that a check may count against the rule)."""
    from conformance.core._exceptions import TargetUnreachable
    from conformance.host._guard import UrlGuard
    from conformance.host.http import HostHTTP
    from conformance.host.mcp_session import McpSession

    with socket.socket() as unused:  # a port nobody listens on: refused at once
        unused.bind(("127.0.0.1", 0))
        closed = unused.getsockname()[1]
    with hostile_modes.hostile(lambda handler: time.sleep(5.0)) as base:
        http = HostHTTP(guard=UrlGuard(allow_insecure_loopback=True), retry=None)
        with http:
            # The SDK's first session (its imports, its models) before the budget starts, so that the budget is
            # left for the request itself and ends as its read timeout.
            with pytest.raises(TargetUnreachable):
                McpSession(http, f"http://127.0.0.1:{closed}/mcp").open()
            open_session = lambda: McpSession(http, f"{base}/mcp").open()  # noqa: E731
            outcome, _seconds, _peak, evidence = _one_request(open_session, base, 2.0)
    assert outcome.startswith("TargetTooSlow: "), outcome
    assert "the check's time budget (2s, --max-check-time)" in outcome, outcome
    assert all(exchange["error"].startswith("target too slow: ") for exchange in evidence), evidence


def _rotating(modes: list[hostile_modes.Answer]) -> hostile_modes.Answer:
    answers, lock = itertools.cycle(modes), threading.Lock()

    def answer(handler: BaseHTTPRequestHandler) -> None:
        with lock:
            chosen = next(answers)
        chosen(handler)

    return answer


def _battery_env() -> dict[str, str]:
    return {"CONFORMANCE_PLATFORM_API_KEY": PLATFORM_KEY, "CONFORMANCE_COMPRESSION_API_KEY": COMPRESSION_KEY}


def test_every_hostile_mode_ends_in_verdicts(tmp_path: Path) -> None:
    """All suites against a target answering in each hostile way in turn (the slow drip apart, below): verdicts,
    no harness error, and a report that stays small although every answer carries a 100 KB header in turn."""
    modes = [answer for name, answer in hostile_modes.MODES.items() if name != "slow-drip"]
    with hostile_modes.hostile(_rotating(modes)) as base:
        args = ["--target-url", f"{base}/mcp", "--platform-url", base, "--compression-url", base]
        args += ["--allow-insecure-loopback", "--max-response-bytes", str(BOUNDED_CAP), "--max-check-time", "5"]
        args += ["--platform-rl-budget", "5", "--platform-max-retry-after", "1", "--max-expiry-wait", "1", "-q"]
        result = forked_harness(args, tmp_path, env=_battery_env(), timeout=300)
    output = result.stdout + result.stderr
    assert "INTERNALERROR" not in output and "Traceback" not in output, output[-3000:]
    assert result.exit_code == 1, output[-3000:]
    errors = [r for r in result.report["results"] if r["status"] == "error"]
    assert not errors, "\n".join(f"{r['rule']}: {r['message']}"[:600] for r in errors)
    assert result.report["verdict"]["status"] == "NOT ACCEPTED", result.report["verdict"]
    assert (tmp_path / "report.json").stat().st_size < 2_000_000
    assert (tmp_path / "report.har").stat().st_size < 2_000_000


@pytest.mark.parametrize("workers", [0, 2], ids=["serial", "xdist"])
def test_a_slow_drip_cannot_hold_the_run_past_its_budget(tmp_path: Path, workers: int) -> None:
    """A target that answers one byte at a time: each check is blocked at its budget, and the run stops starting
    checks at its own, ending INCOMPLETE with what it decided (under xdist the workers share the run's budget)."""
    with hostile_modes.hostile(hostile_modes.slow_drip(0.05)) as base:
        args = ["--target-url", f"{base}/mcp", "--platform-url", base, "--compression-url", base, "-n", str(workers)]
        args += ["--allow-insecure-loopback", "--max-check-time", "1", "--max-run-time", "4", "-q"]
        started = time.monotonic()
        result = forked_harness(args, tmp_path, env=_battery_env(), timeout=120)
        seconds = time.monotonic() - started
    output = result.stdout + result.stderr
    assert "INTERNALERROR" not in output and "Traceback" not in output, output[-3000:]
    # A check refused once the run's budget is spent is blocked: its set-up and teardown end without an error.
    assert re.search(r"\b\d+ errors?\b", output) is None, output[-3000:]
    # The budget, then one check's end and the reports (with room for a loaded machine): one answer of the target
    # alone would take 500 s.
    assert seconds < 4 + 15, seconds
    verdict = result.report["verdict"]
    assert verdict["status"] == "INCOMPLETE" and "--max-run-time" in verdict["reason"], verdict
    results = result.report["results"]
    if not workers:  # (xdist workers may take the whole budget to start on a loaded machine)
        assert any(r["status"] == "blocked" and r["message"].startswith("target too slow: ") for r in results)
    not_started = [r for r in results if r["status"] == "skipped" and "run's time budget" in r["message"]]
    assert not_started and all(r["incomplete"] for r in not_started)
    assert not [r for r in results if r["status"] == "error"]
