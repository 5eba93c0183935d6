"""The harness's CPU per request of the platform and campaigns checks against the reference platform sandbox,
split into layers: what the transport costs alone, what the host adds, what the suites' wrappers add.

    .venv/bin/python benchmarks/platform_request_cost.py [--requests 400] [--repeat 5]

A platform+campaigns run sends 1230-1700 requests (mostly from its Hypothesis-backed checks), so the CPU of one
request, times that count, is most of the run's checks phase. This starts only the platform sandbox (a child process
over TLS on 127.0.0.1, as the stack does), then sends the same mix of requests the checks send (a token count, a
campaign create, a GET by id, a list page) in rounds, each way:

- ``httpx``: a bare ``httpx.Client`` with the same TLS context and headers: the floor (httpx, httpcore, h11, TLS);
- ``no check``: ``HostHTTP.from_settings`` as a run builds it, outside a check (guard, pace, cookies, size cap);
- ``HostHTTP``: the same inside a check (each exchange also recorded and redacted);
- ``suites``: the suites' own wrappers over it (``PlatformApi.count_raw``, ``CampaignsApi``: the rate-limit ledger
  reads each response's headers, created campaigns are remembered).

It prints the median CPU (this process: the sandbox's CPU is its own) per request of each way and the differences.
The sandbox's answers are the same each way, so the differences are the harness's. ``--other-clients`` adds, for
reference, the same requests over the standard library's ``http.client`` and over urllib3 (when installed): what
another transport's floor would be.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import time
from collections.abc import Callable
from json import dumps
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from conformance.config import resolve
from conformance.core import _context
from conformance.host.http import HostHTTP, ssl_context
from conformance.reference.stack import running_stack
from conformance.suites.campaigns.client import CampaignsApi
from conformance.suites.platform.client import LEDGERS, PlatformApi

COUNT_BODY = {
    "model": "gpt-4o",
    "input": [{"role": "user", "content": "Which planets have rings?"}, {"role": "assistant", "content": "Saturn."}],
    "instructions": "Answer briefly.",
}


def mix(send: Callable[..., Any], base: str, auth: dict[str, str], run: str) -> int:
    """The checks' kinds of request, 4 of them; returns how many were sent."""
    send("POST", f"{base}/v1/responses/input_tokens", json=COUNT_BODY, headers=auth)
    created = send(
        "POST",
        f"{base}/v1/campaigns",
        json={"name": f"{run}-bench", "status": "paused", "budget": {"lifetime_spend_limit_micros": 5_000_000}},
        headers=auth,
    )
    send("GET", f"{base}/v1/campaigns/{created.json()['id']}", headers=auth)
    send("GET", f"{base}/v1/campaigns", params={"limit": 3, "order": "desc"}, headers=auth)
    return 4


def suites_mix(platform: PlatformApi, campaigns: CampaignsApi) -> int:
    platform.count_raw(COUNT_BODY)
    created = campaigns.create(campaigns.body(name=f"{campaigns.run_id}-bench"))
    campaigns.get(created.json()["id"])
    campaigns.list(limit=3, order="desc")
    return 4


class _Answer:
    """What :func:`mix` reads of an answer from a client that is not httpx."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


def stdlib_sender(base: str, ca_bundle: Path | None) -> Callable[..., _Answer]:
    """``http.client`` on one kept-alive TLS connection, reading each answer and its headers as a client must."""
    url = urlsplit(base)
    connection = http.client.HTTPSConnection(url.hostname or "", url.port, context=ssl_context(ca_bundle))

    def send(method: str, target: str, *, headers: dict[str, str], json: Any = None, params: Any = None) -> _Answer:
        path = urlsplit(target).path + (f"?{urlencode(params)}" if params else "")
        body = None if json is None else dumps(json).encode()
        sent = {**headers, **({"Content-Type": "application/json"} if body is not None else {})}
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        dict(response.getheaders())
        return _Answer(response.read())

    return send


def urllib3_sender(ca_bundle: Path | None) -> Callable[..., _Answer] | None:
    try:
        import urllib3
    except ImportError:
        return None
    pool = urllib3.PoolManager(ssl_context=ssl_context(ca_bundle))

    def send(method: str, target: str, *, headers: dict[str, str], json: Any = None, params: Any = None) -> _Answer:
        response = pool.request(method, target, headers=headers, json=json, fields=params)
        dict(response.headers)
        return _Answer(response.data)

    return send


def one_round(one: Callable[[], int], requests: int, *, in_check: bool) -> float:
    """CPU seconds per request of one round of ``requests`` requests (this thread: the sandbox is another process)."""
    record = _context.begin(("BENCH-01",)) if in_check else None
    try:
        done, started = 0, time.thread_time()
        while done < requests:
            done += one()
        return (time.thread_time() - started) / done
    finally:
        if record is not None:
            _context.end()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400, help="requests per round")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--other-clients", action="store_true", help="add http.client and urllib3 for reference")
    args = parser.parse_args()
    with running_stack(services=["platform"]) as stack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")} | stack.settings
        settings = resolve(env=env)
        target = settings.target("platform")
        assert target is not None
        run = str(settings.get("run_id"))
        bare = httpx.Client(verify=ssl_context(settings.get("ca_bundle")), headers={"User-Agent": "bench"})
        host = HostHTTP.from_settings(settings, retry=None)
        platform = PlatformApi(host, target, "gpt-4o")
        campaigns = CampaignsApi(host, target, run)
        ways: dict[str, tuple[Callable[[], int], bool]] = {
            "httpx": (lambda: mix(bare.request, target.base_url, target.auth, run), False),
            "no check": (lambda: mix(host.request, target.base_url, target.auth, run), False),
            "HostHTTP": (lambda: mix(host.request, target.base_url, target.auth, run), True),
            "suites": (lambda: suites_mix(platform, campaigns), True),
        }
        if args.other_clients:
            ca_bundle = settings.get("ca_bundle")
            stdlib = stdlib_sender(target.base_url, ca_bundle)
            ways["http.client"] = (lambda: mix(stdlib, target.base_url, target.auth, run), False)
            pooled = urllib3_sender(ca_bundle)
            if pooled is not None:
                ways["urllib3"] = (lambda: mix(pooled, target.base_url, target.auth, run), False)
        rounds: dict[str, list[float]] = {name: [] for name in ways}
        try:
            # Ways alternate round by round (the machine's load moves); the first round warms up and is not counted.
            for index in range(args.repeat + 1):
                for name, (one, in_check) in ways.items():
                    spent = one_round(one, args.requests, in_check=in_check)
                    if index:
                        rounds[name].append(spent)
            cost = {name: statistics.median(values) for name, values in rounds.items()}
            for name, values in rounds.items():
                shown = ", ".join(f"{v * 1e6:.0f}" for v in values)
                print(f"{name:9s} {cost[name] * 1e6:6.0f} µs CPU per request (rounds: {shown})")
        finally:
            bare.close()
            host.close()
            LEDGERS.clear()
    floor, outside, hosted, suites = (cost[name] for name in ("httpx", "no check", "HostHTTP", "suites"))
    print(
        f"the host adds {(hosted - floor) * 1e6:.0f} µs per request to httpx's {floor * 1e6:.0f} µs (recording the"
        f" exchange into the running check: {(hosted - outside) * 1e6:.0f} µs of it); the suites' wrappers add"
        f" {(suites - hosted) * 1e6:.0f} µs. A run of 1230-1700 requests: {suites * 1230:.2f}-{suites * 1700:.2f} s"
        " CPU in requests."
    )


if __name__ == "__main__":
    main()
