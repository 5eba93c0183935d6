"""Synthetic but realistic report.json dicts: every status, every suite, hostile evidence.

Used by the HTML writer's tests (a "full run" before the real plugin produces one) and by
benchmarks/report_html.py (a fleet of targets, 5,000 results).
"""

from __future__ import annotations

import json
import random
from typing import Any

from conformance.core.rules import Rule, catalog
from conformance.core.targets import SUITE_TARGET

TARGET_URLS = {
    "tool_server": "https://127.0.0.1:8443/mcp",
    "platform": "https://127.0.0.1:8444",
    "compression": "https://127.0.0.1:8445",
}

# Strings a hostile or broken target might send back; they land in bodies, headers, messages and URLs.
HOSTILE_SCRIPT = '<script>alert("pwned")</script>'
HOSTILE_STRINGS = [
    HOSTILE_SCRIPT,
    '"><img src=x onerror=alert(1)>',
    "</pre></details></article><h1>FAKE VERDICT: ACCEPTED</h1>",
    "javascript:alert(1)",
    "{{ 7*7 }} {% raw %}",
    "\x00\x01\x07\x1b[31mred\x1b[0m\x7f",
    "caf\u00e9 \u65e5\u672c\u8a9e \U0001f512 \u200b zero-width",
    "\u202eevil.com\u202c/txt.exe",
    "lone surrogate \ud800 here",
]
PATHS = {
    "tool_server": ["/.well-known/oauth-protected-resource", "/token", "/mcp", "/authorize?client_id=x&state=s"],
    "platform": ["/v1/campaigns", "/v1/responses/input_tokens", "/v1/campaigns?limit=20&after=cmp_0003"],
    "compression": ["/shrink", "/output/2xnsp7jn34e5", "/output/2xnsp7jn34e5/resize"],
}
POSTS = {"/token", "/mcp", "/v1/responses/input_tokens", "/shrink", "/output/2xnsp7jn34e5/resize"}
SECRET_IN_TEST = "sk-live-THIS-MUST-NEVER-APPEAR"  # never put in the report: redaction happened at capture

# The demo's defects: rule → (status, message). Everything not listed passes (or is skipped when it has needs).
DEFECTS: dict[str, tuple[str, str]] = {
    "AUTH-ISS-01": ("failed", "the authorization response has no `iss` although the metadata advertises it"),
    "AUTH-CIMD-03": ("failed", "an assertion signed by a key not in the JWKS was accepted (200, token issued)"),
    "AUTH-PRM-06": ("warning", 'the 401 challenge carries no scope="..." parameter'),
    "CAMP-02": ("failed", "a 2-character name was accepted (201) " + HOSTILE_SCRIPT),
    "IMG-RSZ-07": ("error", "KeyError: 'width' in conformance/suites/compression/test_resize.py:88"),
    "IMG-PRS-03": ("warning", "preserving copyright added 412 bytes (expected at most 96)"),
    "TOK-06": ("warning", "a larger image cost fewer tokens (85 < 170)"),
}
BLOCKED = {  # rule → prerequisite that failed
    "AUTH-ISS-02": "AUTH-ISS-01",
    "PROF-08": "AUTH-ISS-01",
}
BASELINE = {"IMG-PRS-03": "expected", "CAMP-15": "stale"}


def _exchange(
    rng: random.Random, kind: str, target_url: str, status: int, *, hostile: bool, big: bool = False
) -> dict[str, Any]:
    path = rng.choice(PATHS[kind])
    body: Any = {"object": "list", "data": [{"id": f"cmp_{i:04d}", "name": f"Campaign {i}"} for i in range(3)]}
    if hostile:
        body = {"error": {"message": rng.choice(HOSTILE_STRINGS), "code": "invalid_request"}}
    text = json.dumps(body, ensure_ascii=False)
    if big:
        text = ("A" * 2048) + "… [198000 more characters]"
    return {
        "method": "POST" if path in POSTS else "GET",
        "url": f"{target_url}{path}" + ("?code=[REDACTED]&state=xyz" if path == "/token" else ""),
        "request_headers": {
            "authorization": "Bearer [REDACTED]",
            "content-type": "application/json",
            "user-agent": "conformance/0.1.0",
            "host": "127.0.0.1",
        },
        "request_body": (
            "grant_type=authorization_code&code=[REDACTED]&client_assertion=[REDACTED]&resource=https%3A%2F%2Fx"
            if path == "/token"
            else ("<binary body: 48213 bytes, image/png>" if path == "/shrink" else None)
        ),
        "status": status,
        "response_headers": {
            "content-type": "application/json",
            "www-authenticate": 'Bearer resource_metadata="https://127.0.0.1:8443/.well-known/oauth-protected-resource"',
            "x-hostile": HOSTILE_STRINGS[1] if hostile else "ok",
        },
        "response_body": text,
        "elapsed_s": round(rng.uniform(0.002, 0.4), 4),
        "error": None,
        "started_at": "2026-11-22T02:10:03.120Z",
    }


def _result(
    rule: Rule, kind: str, target: str, target_url: str, rng: random.Random, fleet_index: int
) -> dict[str, Any]:
    rule_id = rule.id
    status, message = "passed", ""
    need = option = blocked_by = None
    if rule_id in DEFECTS and fleet_index % 3 == 0:
        status, message = DEFECTS[rule_id]
        if status == "failed" and rule.level == "SHOULD":
            status = "warning"
    elif rule_id in BLOCKED and fleet_index % 3 == 0:
        status, blocked_by = "blocked", BLOCKED[rule_id]
        message = f"prerequisite {blocked_by} failed"
    elif rule.needs:
        status, need = "skipped", rule.needs.strip("`")
        option = "--" + rule_id.lower().replace("-", "-opt-", 1)
        message = f"needs {need}"
    count = {"passed": 2, "failed": 4, "warning": 2, "error": 1}.get(status, 0)
    if rule_id in {"CAMP-08", "TOK-05"}:
        count = 60  # property-based checks make many requests
    evidence = [
        _exchange(
            rng, kind, target_url, 200 if status == "passed" else 401, hostile=status != "passed" or rng.random() < 0.1
        )
        for _ in range(count)
    ]
    if rule_id == "CAMP-02" and evidence:
        evidence[-1] = _exchange(rng, kind, target_url, 201, hostile=True, big=True)
        evidence[-1].update(
            method="POST",
            url=f"{target_url}/v1/campaigns",
            request_body=json.dumps(
                {"name": "ab", "status": "active", "budget": {"lifetime_spend_limit_micros": 10**6}}
            ),
            response_body="\x00\x01\x02garbage\xff\xfe" + HOSTILE_SCRIPT + "\u202e" * 3 + "x" * 5000,
        )
    if rule_id == "AUTH-ISS-01" and evidence:
        evidence[-1]["status"] = 302
        evidence[-1]["response_headers"]["location"] = "https://host.example/callback?code=[REDACTED]&state=abc"
        evidence.append({**evidence[-1], "status": None, "error": "ReadTimeout: " + HOSTILE_STRINGS[2]})
    return {
        "rule": rule_id,
        "target": target,
        "target_url": target_url,
        "suite": rule.suite,
        "level": rule.level.value,
        "status": status,
        "title": rule.title,
        "text": rule.text,
        "source": rule.source,
        "document": rule.document,
        "message": message,
        "need": need,
        "option": option,
        "blocked_by": blocked_by,
        "baseline": BASELINE.get(rule_id) if fleet_index == 0 else None,
        "checks": [f"conformance/suites/{rule.suite}/test_{rule_id.lower().replace('-', '_')}.py::test_check"],
        "duration_s": round(rng.uniform(0.001, 2.5), 3),
        "evidence": evidence,
    }


def build_report(results: int | None = None, *, seed: int = 7) -> dict[str, Any]:
    """A full run (one target per kind, every catalog rule) or, with `results`, a fleet of targets cut at that many."""
    rng = random.Random(seed)
    fleet = results is not None
    wanted = results if results is not None else len(catalog())
    out: list[dict[str, Any]] = []
    targets: dict[str, dict[str, str]] = {}
    index = 0
    while len(out) < wanted:
        for rule in catalog():
            kind = SUITE_TARGET[rule.suite]
            name = f"{kind}-{index:03d}" if fleet else kind
            url = f"https://vendor-{index:03d}.example.test/{kind}" if fleet else TARGET_URLS[kind]
            targets[name] = {"url": url}
            out.append(_result(rule, kind, name, url, rng, index))
            if len(out) == wanted:
                break
        index += 1
    targets["tool_server" if not fleet else "tool_server-000"]["url"] += "?" + HOSTILE_STRINGS[1]
    tally = {
        s: sum(r["status"] == s for r in out) for s in ("passed", "failed", "warning", "skipped", "blocked", "error")
    }
    by_suite: dict[str, dict[str, int]] = {}
    for r in out:
        by_suite.setdefault(r["suite"], {}).setdefault(r["status"], 0)
        by_suite[r["suite"]][r["status"]] += 1
    failed = sorted({r["rule"] for r in out if r["status"] == "failed"})
    return {
        "format": 1,
        "harness": {"name": "conformance", "version": "0.1.0"},
        "started_at": "2026-11-22T02:10:00Z",
        "finished_at": "2026-11-22T02:11:52Z",
        "duration_s": 112.4,
        "verdict": {
            "accepted": False,
            "exit_code": 1,
            "reason": f"{len(failed)} MUST rules failed: {', '.join(failed)}",
        },
        "config": {
            "strict": False,
            "expected_failures": "baseline.toml",
            "suites": ["auth", "profile", "platform", "campaigns", "compression"],
            "allow_insecure_loopback": True,
        },
        "targets": targets,
        "summary": {"total": len(out), **tally, "by_suite": by_suite},
        "results": out,
    }
