"""The harness's own CPU per request through HostHTTP, without a network: what the host adds to each
exchange (guard, pace, httpx's client, the cookie jar, the size cap, the recorder and its redaction).

    .venv/bin/python benchmarks/host_request.py [--requests 3000] [--repeat 5]

The target is an in-process ``httpx.MockTransport`` that answers at once, so every microsecond counted is the
harness's: a sign-in like a form login (redirects that set cookies, an HTML page, a form post) and API calls with a
bearer token (JSON answers), inside a running check (each exchange recorded and redacted, as in a real run), with
the cyclic collector's threshold a run sets (conformance.core._gc). It prints the median CPU time per request over
``--repeat`` rounds. Compare two checkouts by running one copy of this file with each checkout's
``.venv/bin/python`` (its editable install wins over ``PYTHONPATH``); the figure leaves out the transport (h11,
TLS), which a real run also pays.

A second figure is closer to an auth run: every sign-in has its own authorization URL (state, PKCE challenge) and
callback, the answers carry a server's usual headers, and the run learns new secrets as it goes (each code and
token), so the redactor indexes new forms every few requests, as it does against the reference stack.

``--evidence OUT`` measures nothing: it writes the evidence the scenarios record (with seeded tokens, and answers a
recorder must read with care: gzip, binary, long, repeated and non-ASCII headers), without its times, so that two
checkouts' recording and redaction can be compared byte for byte (``PYTHONPATH`` set to each, then ``cmp``).

``--stack`` measures instead the same path with its transport: HostHTTP against the embedded reference tool server
over TLS (one kept-alive connection), a metadata GET and an MCP POST answered 401 in turn, each recorded and
redacted in a running check: what one exchange of a run costs the harness, h11 and TLS included.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import random
import secrets
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from conformance.core import _budget, _context
from conformance.core._gc import GEN0_THRESHOLD
from conformance.host._guard import UrlGuard
from conformance.host._pace import Pacer
from conformance.host._redact import Redactor
from conformance.host.http import HostHTTP


class _Seeded:
    """``secrets.token_urlsafe``'s shape from a seeded generator: the same tokens in every run (``--evidence``)."""

    ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def token_urlsafe(self, nbytes: int = 32) -> str:
        return "".join(self._random.choice(self.ALPHABET) for _ in range(-(-4 * nbytes // 3)))


TOKENS: Any = secrets  # the source of the scenarios' tokens and states

TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJlLW9mLXRoZS1iZW5jaG1hcmstdG9rZW4"
PAGE = (
    "<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    + "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>" * 40
    + "<form method='post' action='/login'><input name='user'><input name='password' type='password'></form>"
    "</body></html>"
)
DOCUMENT = json.dumps({"items": [{"id": f"item-{i}", "name": "x" * 20, "tags": ["a", "b"]} for i in range(20)]})


# What a Node or uvicorn server sends with every answer.
SERVER_HEADERS = [
    ("date", "Wed, 25 Nov 2026 00:00:00 GMT"),
    ("server", "uvicorn"),
    ("x-powered-by", "Express"),
    ("cache-control", "no-store"),
    ("vary", "Origin, Accept-Encoding"),
    ("connection", "keep-alive"),
    ("keep-alive", "timeout=5"),
]


def answer(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path == "/authorize":
        headers = [("location", "/login"), ("set-cookie", "_session=abc123; Path=/; HttpOnly"), *SERVER_HEADERS]
        return httpx.Response(302, headers=headers)
    if path == "/login" and request.method == "GET":
        return httpx.Response(200, text=PAGE, headers=[("content-type", "text/html; charset=utf-8"), *SERVER_HEADERS])
    if path == "/login":
        state = request.headers.get("x-bench-state", "st")
        location = f"https://host.example/cb?code=code-{state}-0123456789abcdef&state={state}&iss=https%3A%2F%2Fas"
        return httpx.Response(302, headers=[("location", location), ("set-cookie", "_i=1; Path=/"), *SERVER_HEADERS])
    if path == "/token":
        body = {"access_token": f"at-{TOKENS.token_urlsafe(32)}", "token_type": "Bearer", "expires_in": 300}
        return httpx.Response(200, json=body, headers=[("content-type", "application/json"), *SERVER_HEADERS])
    return httpx.Response(200, text=DOCUMENT, headers=[("content-type", "application/json"), *SERVER_HEADERS])


ODD_SECRET = "sk-odd-secret-0123456789"


def odd_answer(request: httpx.Request) -> httpx.Response:
    """:func:`answer`, and answers a recorder must read with care: a gzip body, a binary one, a long header and body,
    a repeated Set-Cookie, a header that is not ASCII."""
    path = request.url.path
    if path == "/gzip":
        body = json.dumps({"token": ODD_SECRET, "x": "\u00e9"}).encode()
        headers = [("content-encoding", "gzip"), ("content-type", "application/json")]
        return httpx.Response(200, content=gzip.compress(body), headers=headers)
    if path == "/bin":
        return httpx.Response(
            200, content=bytes(range(256)) * 4, headers=[("content-type", "application/octet-stream")]
        )
    if path == "/long":
        headers = [("x-long", "v" * 3000), ("set-cookie", "a=1"), ("set-cookie", "b=2")]
        return httpx.Response(200, text="x" * 5000 + ODD_SECRET, headers=headers)
    if path == "/utf8":
        return httpx.Response(200, headers=[(b"x-name", "caf\u00e9".encode())], text="ok")
    return answer(request)


def evidence(out: Path) -> None:
    """``--evidence OUT``: the evidence the scenarios record (seeded tokens; ``started_at`` and ``elapsed_s`` left
    out), as JSON, for comparing what two checkouts record byte for byte."""
    global TOKENS
    TOKENS = _Seeded(7)
    redactor = Redactor([TOKEN, "correct horse battery", ODD_SECRET])
    http = HostHTTP(
        transport=httpx.MockTransport(odd_answer), guard=UrlGuard(), redactor=redactor, retry=None, pacer=Pacer()
    )
    kept: list[dict[str, Any]] = []
    for round_ in range(30):
        record = _context.begin(("BENCH-01",))
        _budget.start_check(record, 60.0)
        try:
            (fresh_session if round_ % 2 else session)(http)
            for path in ("/gzip", "/bin", "/long", "/utf8"):
                headers = {"X-Api-Key": ODD_SECRET, "Accept": "*/*"}
                http.get(f"https://odd.example{path}?api_key={ODD_SECRET}&q=1", headers=headers)
            http.post("https://odd.example/form", data={"password": "correct horse battery", "u": "\u00e9"})
            http.post("https://odd.example/json", json={"client_secret": "zz", "nested": [{"token": "t"}, ODD_SECRET]})
            http.browser.get("https://as.example/authorize?x=1")
            http.browser.get("https://as.example/login")
        finally:
            _context.end()
        kept += [{k: v for k, v in e.items() if k not in ("started_at", "elapsed_s")} for e in record.exchanges]
    text = json.dumps(kept, ensure_ascii=False)
    assert ODD_SECRET not in text and TOKEN not in text and "correct horse" not in text
    out.write_text(text)
    print(f"{len(kept)} exchanges recorded into {out}")


def session(http: HostHTTP) -> int:
    """One sign-in (3 requests) and 5 API calls: 8 requests."""
    http.get("https://as.example/authorize?client_id=c&state=st&code_challenge=abc")
    http.get("https://as.example/login", headers={"Accept": "text/html"})
    http.post("https://as.example/login", data={"user": "alice", "password": "correct horse battery"})
    for i in range(5):
        http.get(f"https://api.example/v1/items/{i}", headers={"Authorization": f"Bearer {TOKEN}"})
    return 8


def fresh_session(http: HostHTTP) -> int:
    """One sign-in of its own (authorization URL, callback, token learnt as secrets) and 4 API calls: 8 requests."""
    state, challenge = TOKENS.token_urlsafe(16), TOKENS.token_urlsafe(32)
    query = f"response_type=code&client_id=https%3A%2F%2Fhost.example%2Fclient.json&state={state}"
    query += f"&code_challenge={challenge}&code_challenge_method=S256&scope=openid%20profile"
    http.get(f"https://as.example/authorize?{query}")
    http.get("https://as.example/login", headers={"Accept": "text/html"})
    answer = http.post(
        "https://as.example/login",
        data={"user": "alice", "password": "correct horse battery"},
        headers={"x-bench-state": state},
    )
    code = answer.headers["location"].split("code=")[1].split("&")[0]
    http.redactor.add_secret(code)
    verifier = TOKENS.token_urlsafe(48)
    http.redactor.add_secret(verifier)
    token = http.post(
        "https://as.example/token", data={"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
    ).json()["access_token"]
    http.redactor.add_secret(token)
    for i in range(4):
        http.get(f"https://api.example/v1/items/{i}", headers={"Authorization": f"Bearer {token}"})
    return 8


def measure(scenario: Callable[[HostHTTP], int], requests: int, repeat: int) -> float:
    rounds = []
    for _ in range(repeat + 1):  # the first round warms up (imports, caches) and is not counted
        redactor = Redactor()
        redactor.add_secret(TOKEN)
        redactor.add_secret("correct horse battery")
        http = HostHTTP(
            transport=httpx.MockTransport(answer), guard=UrlGuard(), redactor=redactor, retry=None, pacer=Pacer()
        )
        done, started = 0, time.process_time()
        while done < requests:
            record = _context.begin(("BENCH-01",))
            try:
                done += scenario(http)
            finally:
                _context.end()
            del record
        rounds.append((time.process_time() - started) / done)
        http.close()
    return statistics.median(rounds[1:])


def against_stack(requests: int, repeat: int) -> float:
    """CPU per exchange through HostHTTP against the reference tool server (see the module's docstring)."""
    from pathlib import Path

    from conformance.reference.stack import running_stack

    with running_stack(services=["toolserver"]) as stack:
        mcp = stack.settings["CONFORMANCE_TARGET_URL"]
        metadata = mcp.rsplit("/mcp", 1)[0] + "/.well-known/oauth-protected-resource/mcp"
        http = HostHTTP(
            ca_bundle=Path(stack.settings["CONFORMANCE_CA_BUNDLE"]),
            guard=UrlGuard(allow_private_network=True),
            redactor=Redactor(),
            retry=None,
            pacer=Pacer(),
        )
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        rounds = []
        for _ in range(repeat + 1):  # the first round warms up and is not counted
            started = time.process_time()
            _context.begin(("BENCH-01",))
            try:
                for _ in range(requests // 2):
                    http.get(metadata)
                    http.post(mcp, json=body)
            finally:
                _context.end()
            rounds.append((time.process_time() - started) / (requests // 2 * 2))
        http.close()
    return statistics.median(rounds[1:])


def main() -> None:
    # As in a certification run (conformance.core._gc): the youngest generation is collected every GEN0_THRESHOLD
    # allocations, so what a request leaves for the collector costs what it costs in a run.
    gc.set_threshold(GEN0_THRESHOLD, *gc.get_threshold()[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stack", action="store_true", help="over TLS against the reference tool server")
    parser.add_argument("--evidence", type=Path, help="write the scenarios' evidence there (see the docstring)")
    args = parser.parse_args()
    if args.evidence is not None:
        evidence(args.evidence)
        return
    if args.stack:
        per_request = against_stack(min(args.requests, 600), args.repeat)
        print(f"HostHTTP exchange over TLS with the reference tool server: {per_request * 1e6:.0f} µs CPU each")
        return
    per_request = measure(session, args.requests, args.repeat)
    print(f"HostHTTP request path: {per_request * 1e6:.0f} µs CPU per request (median of {args.repeat} rounds)")
    per_request = measure(fresh_session, args.requests, args.repeat)
    print(f"  with fresh sign-ins and secrets learnt: {per_request * 1e6:.0f} µs CPU per request")


if __name__ == "__main__":
    main()
