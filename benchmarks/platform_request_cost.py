"""The harness's CPU per request of the platform and campaigns checks against the reference platform sandbox (issue
19), split into layers: what the transport costs alone, what the host adds, what the suites' wrappers add.

    .venv/bin/python benchmarks/platform_request_cost.py [--requests 400] [--repeat 5]

A platform+campaigns run sends 1230-1700 requests (mostly from its Hypothesis-backed checks), so the CPU of one
request, times that count, is most of the run's checks phase. This starts only the platform sandbox (a child process
over TLS on 127.0.0.1, as the stack does), then sends the same mix of requests the checks send (a token count, a
campaign create, a GET by id, a list page) in rounds, each way:

- ``httpx``: a bare ``httpx.Client`` with the same TLS context and headers: the floor (httpx, httpcore, h11, TLS);
- ``HostHTTP``: ``HostHTTP.from_settings`` as a run builds it, inside a check (each exchange recorded, redacted);
- ``suites``: the suites' own wrappers over it (``PlatformApi.count_raw``, ``CampaignsApi``: the rate-limit ledger
  reads each response's headers, created campaigns are remembered).

It prints the median CPU (this process: the sandbox's CPU is its own) per request of each way and the differences.
The sandbox's answers are the same each way, so the differences are the harness's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import httpx

from conformance import _context
from conformance.config import resolve
from conformance.host.http import HostHTTP, ssl_context
from conformance.reference.stack import running_stack
from conformance.suites.campaigns.client import CampaignsApi
from conformance.suites.platform.client import LEDGERS, PlatformApi

COUNT_BODY = {
    "model": "gpt-4o",
    "input": [{"role": "user", "content": "Which planets have rings?"}, {"role": "assistant", "content": "Saturn."}],
    "instructions": "Answer briefly.",
}


def mix(send: Callable[..., httpx.Response], base: str, auth: dict[str, str], run: str) -> int:
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


def measure(label: str, one: Callable[[], int], requests: int, repeat: int) -> float:
    rounds = []
    for _ in range(repeat + 1):  # the first round warms up (connections, imports, caches) and is not counted
        record = _context.begin(("BENCH-01",))
        try:
            done, started = 0, time.thread_time()
            while done < requests:
                done += one()
            rounds.append((time.thread_time() - started) / done)
        finally:
            _context.end()
        del record
    per_request = statistics.median(rounds[1:])
    print(
        f"{label:9s} {per_request * 1e6:6.0f} µs CPU per request (rounds: "
        f"{', '.join(f'{r * 1e6:.0f}' for r in rounds[1:])})",
        flush=True,
    )
    return per_request


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400, help="requests per round")
    parser.add_argument("--repeat", type=int, default=5)
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
        try:
            floor = measure(
                "httpx", lambda: mix(bare.request, target.base_url, target.auth, run), args.requests, args.repeat
            )
            hosted = measure(
                "HostHTTP", lambda: mix(host.request, target.base_url, target.auth, run), args.requests, args.repeat
            )
            suites = measure("suites", lambda: suites_mix(platform, campaigns), args.requests, args.repeat)
        finally:
            bare.close()
            host.close()
            LEDGERS.clear()
    print(
        f"the host adds {(hosted - floor) * 1e6:.0f} µs per request to httpx's {floor * 1e6:.0f} µs; the suites'"
        f" wrappers add {(suites - hosted) * 1e6:.0f} µs. A run of 1230-1700 requests: "
        f"{suites * 1230:.2f}-{suites * 1700:.2f} s CPU in requests."
    )


if __name__ == "__main__":
    main()
