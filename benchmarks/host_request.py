"""The harness's own CPU per request through HostHTTP (issue 19), without a network: what the host adds to each
exchange (guard, pace, httpx's client, the cookie jar, the size cap, the recorder and its redaction).

    .venv/bin/python benchmarks/host_request.py [--requests 3000] [--repeat 5]

The target is an in-process ``httpx.MockTransport`` that answers at once, so every microsecond counted is the
harness's: a sign-in like a form login (redirects that set cookies, an HTML page, a form post) and API calls with a
bearer token (JSON answers), inside a running check (each exchange recorded and redacted, as in a real run). It
prints the median CPU time per request over ``--repeat`` rounds. Compare two checkouts by running it with each one's
package first on ``PYTHONPATH``; the figure leaves out the transport (h11, TLS), which a real run also pays.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import httpx

from conformance import _context
from conformance.host._guard import UrlGuard
from conformance.host._pace import Pacer
from conformance.host._redact import Redactor
from conformance.host.http import HostHTTP

TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJlLW9mLXRoZS1iZW5jaG1hcmstdG9rZW4"
PAGE = (
    "<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    + "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>" * 40
    + "<form method='post' action='/login'><input name='user'><input name='password' type='password'></form>"
    "</body></html>"
)
DOCUMENT = json.dumps({"items": [{"id": f"item-{i}", "name": "x" * 20, "tags": ["a", "b"]} for i in range(20)]})


def answer(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path == "/authorize":
        return httpx.Response(302, headers=[("location", "/login"), ("set-cookie", "_session=abc123; Path=/")])
    if path == "/login" and request.method == "GET":
        return httpx.Response(200, text=PAGE, headers={"content-type": "text/html; charset=utf-8"})
    if path == "/login":
        headers = [("location", "https://host.example/cb?code=code-0123456789abcdef&state=st"), ("set-cookie", "_i=1")]
        return httpx.Response(302, headers=headers)
    return httpx.Response(200, text=DOCUMENT, headers={"content-type": "application/json", "x-request-id": "r-1"})


def session(http: HostHTTP) -> int:
    """One sign-in (3 requests) and 5 API calls: 8 requests."""
    http.get("https://as.example/authorize?client_id=c&state=st&code_challenge=abc")
    http.get("https://as.example/login", headers={"Accept": "text/html"})
    http.post("https://as.example/login", data={"user": "alice", "password": "correct horse battery"})
    for i in range(5):
        http.get(f"https://api.example/v1/items/{i}", headers={"Authorization": f"Bearer {TOKEN}"})
    return 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    redactor = Redactor()
    redactor.add_secret(TOKEN)
    redactor.add_secret("correct horse battery")
    rounds = []
    for _ in range(args.repeat + 1):  # the first round warms up (imports, caches) and is not counted
        http = HostHTTP(
            transport=httpx.MockTransport(answer), guard=UrlGuard(), redactor=redactor, retry=None, pacer=Pacer()
        )
        done, started = 0, time.process_time()
        while done < args.requests:
            record = _context.begin(("BENCH-01",))
            try:
                done += session(http)
            finally:
                _context.end()
            del record
        rounds.append((time.process_time() - started) / done)
        http.close()
    per_request = statistics.median(rounds[1:])
    print(f"HostHTTP request path: {per_request * 1e6:.0f} µs CPU per request (median of {args.repeat} rounds)")


if __name__ == "__main__":
    main()
