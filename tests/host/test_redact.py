"""Redaction as a property: a secret placed anywhere a credential travels never reaches a record or a writer."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import _context
from conformance.host._guard import UrlGuard
from conformance.host._redact import REDACTED, Redactor
from conformance.host.http import HostHTTP
from conformance.report.console import render_summary
from conformance.report.model import Status, aggregate, check_outcome, summarize, verdict

SECRETS = st.from_regex(r"sk_[A-Za-z0-9]{12,32}", fullmatch=True)
HEADER_NAMES = st.sampled_from(["Authorization", "Cookie", "X-Api-Key", "Proxy-Authorization"])
QUERY_NAMES = st.sampled_from(["access_token", "code", "client_secret", "api_key", "id_token_hint", "password"])
FORM_NAMES = st.sampled_from(["client_assertion", "code_verifier", "code", "refresh_token", "client_secret"])
JSON_NAMES = st.sampled_from(
    ["client_secret", "password", "access_token", "objstore_a_secret_access_key", "objstore_b_access_token"]
)
PLACES = st.sampled_from(["header", "query", "form", "json", "response_json", "echoed_text"])


def exchange_with_secret(place: str, name: str, secret: str, redactor: Redactor) -> dict[str, Any]:
    def handler(request: httpx.Request) -> httpx.Response:
        if place == "response_json":
            return httpx.Response(200, json={"token_type": "Bearer", name: secret, "input_tokens": 3})
        if place == "echoed_text":  # a target echoing a credential back in free text
            return httpx.Response(400, text=f"bad key {secret} given")
        return httpx.Response(200, json={"ok": True})

    client = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(), redactor=redactor, retry=None)
    record = _context.begin()
    try:
        url = "https://target.example/v1/thing"
        if place == "header":
            value = f"Bearer {secret}" if "Authorization" in name else secret
            client.get(url, headers={name: value})
        elif place == "query":
            client.get(url, params={name: secret, "other": "visible"})
        elif place == "form":
            client.post(url, data={name: secret, "grant_type": "authorization_code"})
        elif place in ("json", "response_json", "echoed_text"):
            client.post(url, json={"nested": {name: secret}, "list": [{name: secret}]})
    finally:
        _context.end()
    assert len(record.exchanges) == 1
    return record.exchanges[0]


def render_everything(exchange: dict[str, Any], tmp: Path) -> str:
    outcome = check_outcome(
        nodeid="t::x", rules=["AUTH-PRM-01"], status=Status.FAILED, message="m", evidence=[exchange]
    )
    results = aggregate([outcome])
    report = {
        "format": 1,
        "harness": {"name": "conformance", "version": "0"},
        "started_at": "",
        "finished_at": "",
        "duration_s": 0,
        "verdict": verdict(results, strict=False),
        "config": {},
        "targets": {},
        "summary": summarize(results),
        "results": results,
    }
    out = io.StringIO()
    render_summary(report, out, color=False)
    texts = [json.dumps(report), out.getvalue()]
    try:
        from conformance.report.html import render_html
    except ImportError:
        pass
    else:
        texts.append(render_html(report))
    return "\n".join(texts)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(secret=SECRETS, place=PLACES, header=HEADER_NAMES, query=QUERY_NAMES, form=FORM_NAMES, field=JSON_NAMES)
def test_secret_never_reaches_any_writer(
    tmp_path: Path, secret: str, place: str, header: str, query: str, form: str, field: str
) -> None:
    name = {"header": header, "query": query, "form": form}.get(place, field)
    redactor = Redactor()
    if place == "echoed_text":
        redactor.add_secret(secret)  # known secrets are scrubbed by value anywhere
    exchange = exchange_with_secret(place, name, secret, redactor)
    assert secret not in json.dumps(exchange)
    assert secret not in render_everything(exchange, tmp_path)


def test_redaction_keeps_evidence_useful() -> None:
    redactor = Redactor()
    assert redactor.header("authorization", "Bearer abc.def") == f"Bearer {REDACTED}"
    assert redactor.header("content-type", "application/json") == "application/json"
    body = redactor.body(b'{"error": {"code": "slow_down"}, "input_tokens": 12}', "application/json", 1000)
    assert body is not None and "slow_down" in body and "12" in body
    assert "visible" in redactor.url("https://a.example/cb?code=SECRETCODE&state=visible")
    assert "SECRETCODE" not in redactor.url("https://a.example/cb?code=SECRETCODE&state=visible")


def test_jwts_and_private_keys_are_scrubbed_by_shape() -> None:
    redactor = Redactor()
    jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
    pem = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----"
    text = redactor.scrub(f"token {jwt} and {pem}")
    assert jwt not in text and "MIIB" not in text


def test_binary_bodies_are_described_not_dumped() -> None:
    body = Redactor().body(b"\x89PNG\r\n\x1a\n\x00\x00binary", "image/png", 100)
    assert body is not None and body.startswith("<binary body")


def test_long_bodies_are_cut() -> None:
    body = Redactor().body(b"x" * 10_000, "text/plain", 100)
    assert body is not None and len(body) < 200 and "more characters" in body
