"""CPU per request of the reference platform sandbox, and of its client: N token counts and N campaign lists over
one keep-alive TLS connection to the sandbox alone (started by ``running_stack``); the sandbox's CPU from /proc
(Linux), the client's from this process.

    .venv/bin/python benchmarks/platform_requests.py [N]      # default 1000 of each
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import httpx

from conformance.reference.stack import running_stack

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with running_stack(services=["platform"]) as stack:
        sandbox = stack.processes[0]
        url = stack.settings["CONFORMANCE_PLATFORM_URL"]
        key = stack.settings["CONFORMANCE_PLATFORM_API_KEY"]
        with httpx.Client(verify=str(stack.ca_file), headers={"Authorization": f"Bearer {key}"}) as client:
            # warm: the tokenizer loaded, one campaign to list
            client.post(f"{url}/v1/campaigns", json={"name": "bench", "objective": "awareness"})
            client.post(f"{url}/v1/responses/input_tokens", json={"model": "gpt-4o", "input": "hi"})
            server_before, client_before = cpu_s(sandbox.pid), time.process_time()
            for i in range(n):
                client.post(f"{url}/v1/responses/input_tokens", json={"model": "gpt-4o", "input": f"hello {i}"})
                client.get(f"{url}/v1/campaigns?limit=2")
            server, own = cpu_s(sandbox.pid) - server_before, time.process_time() - client_before
    print(
        f"{2 * n} requests: sandbox {1000 * server / (2 * n):.3f} ms CPU per request, client"
        f" {1000 * own / (2 * n):.3f} ms; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
