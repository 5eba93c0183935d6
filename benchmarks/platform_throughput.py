"""Throughput of the platform sandbox for campaign creates and token counts with concurrent clients.

    .venv/bin/python benchmarks/platform_throughput.py [--clients 8] [--requests 50]

Starts the sandbox as the stack does (a child process over TLS on 127.0.0.1, a fresh data directory), then from
N client threads (one HTTPS connection each) sends ``--requests`` campaign creates per client, then as many token
counts (a three-message input with instructions and a function tool), and reports requests per second and latency
percentiles for each. Afterwards it lists the campaigns to confirm that every create was stored exactly once.
"""

from __future__ import annotations

import argparse
import ssl
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from conformance.reference.stack import running_stack

TOKEN_BODY: dict[str, Any] = {
    "model": "gpt-4o",
    "instructions": "You are a concise assistant.",
    "input": [
        {"role": "user", "content": "Plan a three-day trip to Lisbon with a budget."},
        {"role": "assistant", "content": "Day 1: Alfama and the castle. Day 2: Belém. Day 3: Sintra."},
        {"role": "user", "content": [{"type": "input_text", "text": "Add restaurants for each day."}]},
    ],
    "tools": [
        {
            "type": "function",
            "name": "search_restaurants",
            "description": "Find restaurants near a place",
            "parameters": {"type": "object", "properties": {"near": {"type": "string"}}, "required": ["near"]},
        }
    ],
}


def run(clients: int, requests: int, label: str, send: Any, base_url: str, headers: dict[str, str], ca: str) -> None:
    def worker(index: int) -> list[float]:
        latencies = []
        with httpx.Client(base_url=base_url, headers=headers, verify=ssl.create_default_context(cafile=ca)) as client:
            for i in range(requests):
                t0 = time.perf_counter()
                response = send(client, index, i)
                latencies.append(time.perf_counter() - t0)
                if response.status_code != 200:
                    raise SystemExit(f"{label}: {response.status_code} {response.text[:200]}")
        return latencies

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = sorted(x for part in pool.map(worker, range(clients)) for x in part)
    elapsed = time.perf_counter() - started
    total = clients * requests
    p50 = statistics.median(latencies) * 1000
    p95 = latencies[int(0.95 * (len(latencies) - 1))] * 1000
    rate = total / elapsed
    print(f"{label:15s} {total:5d} requests, {clients} clients: {rate:7.1f} req/s, p50 {p50:.1f} ms, p95 {p95:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=50, help="requests per client for each operation")
    args = parser.parse_args()
    with running_stack(services=["platform"]) as stack:
        base_url = stack.settings["CONFORMANCE_PLATFORM_URL"]
        headers = {"Authorization": f"Bearer {stack.settings['CONFORMANCE_PLATFORM_API_KEY']}"}
        ca = str(stack.ca_file)

        def create(client: httpx.Client, index: int, i: int) -> httpx.Response:
            body = {"name": f"bench-{index}-{i}", "status": "paused", "budget": {"lifetime_spend_limit_micros": 10**6}}
            return client.post("/v1/campaigns", json=body)

        def count(client: httpx.Client, index: int, i: int) -> httpx.Response:
            return client.post("/v1/responses/input_tokens", json=TOKEN_BODY)

        run(args.clients, args.requests, "campaign create", create, base_url, headers, ca)
        run(args.clients, args.requests, "token count", count, base_url, headers, ca)
        with httpx.Client(base_url=base_url, headers=headers, verify=ssl.create_default_context(cafile=ca)) as client:
            names = [c["name"] for c in client.get("/v1/campaigns", params={"limit": 500}).json()["data"]]
        expected = args.clients * args.requests
        unique = len(set(names))
        print(f"stored campaigns: {len(names)} listed, {unique} distinct names (expected {expected} when ≤ 500)")


if __name__ == "__main__":
    main()
