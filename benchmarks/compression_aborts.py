"""What clients that abort large uploads cost the compression sandbox: CPU, peak memory, counted shrinks.

    .venv/bin/python benchmarks/compression_aborts.py [--uploads 20] [--side 2400] [--wait 0.3]

Each client sends a whole photo-sized PNG of noise (seconds of quantization work), waits ``--wait`` seconds and
hangs up. The sandbox runs in this process (uvicorn in a thread over TLS) with its engine in worker processes;
the CPU measured after the images are made is the sandbox's (killed workers included) plus the clients' socket
work; the peak RSS is this process's. A sandbox that keeps processing burns seconds per upload and counts every
one; one that drops the work stops at once and counts none.
"""

from __future__ import annotations

import argparse
import io
import resource
import ssl
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from PIL import Image

from conformance.reference._service import free_port
from conformance.reference.compression import create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the abandoned-upload helpers live with the tests
from conformance.reference.compression.serve import SandboxServer
from conformance.reference.stack import make_certificates
from tests.reference.compression.uploads import noise_png, upload_held_open

KEY = "benchmark-key"


def cpu_s() -> float:
    """CPU of this process and of its ended children (killed engine workers are joined, so they count)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def abort(port: int, context: ssl.SSLContext, body: bytes, wait_s: float) -> None:
    with upload_held_open(port, context, body, KEY):
        time.sleep(wait_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=20)
    parser.add_argument("--side", type=int, default=2400)
    parser.add_argument("--wait", type=float, default=0.3)
    args = parser.parse_args()
    body = noise_png(args.side)
    with tempfile.TemporaryDirectory() as tmp:
        ca_file, cert_file, key_file = make_certificates(Path(tmp))
        port = free_port()
        server = SandboxServer(create_app(Path(tmp) / "data", [KEY]), "127.0.0.1", port, str(cert_file), str(key_file))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        context = ssl.create_default_context(cafile=str(ca_file))
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpu0, wall0 = cpu_s(), time.monotonic()
        for _ in range(args.uploads):
            abort(port, context, body, args.wait)
        # Let abandoned work finish (or stop): wait until the process is idle for a second.
        last = cpu_s()
        while True:
            time.sleep(1.0)
            now = cpu_s()
            if now - last < 0.05:
                break
            last = now
        cpu, wall = cpu_s() - cpu0, time.monotonic() - wall0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with httpx.Client(verify=context, auth=("api", KEY)) as client:
            small = io.BytesIO()
            Image.linear_gradient("L").save(small, "PNG")
            count = int(
                client.post(f"https://127.0.0.1:{port}/shrink", content=small.getvalue()).headers["compression-count"]
            )
        server.stop()
        thread.join(timeout=10)
    print(f"{args.uploads} aborted uploads of {len(body) / 1e6:.1f} MB ({args.side}x{args.side} noise PNG)")
    print(f"CPU {cpu:.2f} s over {wall:.1f} s wall; peak RSS {rss / 1024:.0f} MB (+{(rss - rss0) / 1024:.0f} MB)")
    print(f"counted: {count - 1} of the aborted uploads (then 1 for the check upload)")


if __name__ == "__main__":
    main()
