"""Throughput of the compression sandbox for 1 MP images with concurrent clients, and its peak memory.

    .venv/bin/python benchmarks/compression_throughput.py [--clients 4] [--requests 40] [--workers 4]

Starts the sandbox as the stack does (a child process over TLS, no object stores needed), uploads a generated
1 MP photo-like JPEG and PNG from N client threads (each upload is then downloaded, as clients do), and reports
requests per second, latency percentiles, and the sandbox's peak resident memory (VmHWM).
"""

from __future__ import annotations

import argparse
import io
import os
import secrets
import ssl
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from PIL import Image, ImageChops, ImageDraw, ImageFilter

from conformance.reference._service import ServiceSpec, free_port
from conformance.reference.stack import make_certificates, run_services


def one_megapixel(fmt: str) -> bytes:
    """1224x816 (~1 MP) photo-like content: smooth gradients, soft shapes, light grain; saved as a camera (JPEG
    q92) or a screenshot tool (PNG, fast zlib) would."""
    size = (1224, 816)
    grain = Image.effect_noise(size, 12).filter(ImageFilter.GaussianBlur(1))
    red = Image.linear_gradient("L").rotate(90).resize(size)
    blue = Image.radial_gradient("L").resize(size)
    base = Image.merge("RGB", (ImageChops.add(red, grain, 1.0, -128), Image.linear_gradient("L").resize(size), blue))
    draw = ImageDraw.Draw(base)
    for i in range(12):
        x, y = (97 * i) % 1100, (61 * i) % 700
        draw.ellipse((x, y, x + 120, y + 90), fill=((40 * i) % 256, (90 + 13 * i) % 256, (200 - 11 * i) % 256))
    base = base.filter(ImageFilter.GaussianBlur(1.5))
    out = io.BytesIO()
    if fmt == "JPEG":
        base.save(out, "JPEG", quality=92)
    else:
        base.save(out, "PNG", compress_level=1)
    return out.getvalue()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(clients: int, requests: int, workers: int) -> None:
    with tempfile.TemporaryDirectory(prefix="compression-bench-") as tmp:
        directory = Path(tmp)
        ca_file, cert_file, key_file = make_certificates(directory)
        port, key = free_port(), secrets.token_urlsafe(16)
        spec = ServiceSpec(
            name="compression",
            argv=[
                sys.executable,
                "-m",
                "conformance.reference.compression",
                "--port",
                str(port),
                "--certfile",
                str(cert_file),
                "--keyfile",
                str(key_file),
                "--data-dir",
                str(directory / "data"),
                "--workers",
                str(workers),
            ],
            health_url=f"https://127.0.0.1:{port}/healthz",
            env={"COMPRESSION_API_KEYS": key},
        )
        with run_services([spec], ca_file, directory / "logs") as processes:
            pid = processes[0].pid
            verify = ssl.create_default_context(cafile=str(ca_file))
            for fmt in ("JPEG", "PNG"):
                body = one_megapixel(fmt)
                with httpx.Client(
                    base_url=spec.health_url[: -len("/healthz")],
                    auth=("api", key),
                    verify=verify,
                    timeout=120,
                    limits=httpx.Limits(max_connections=clients),
                ) as client:

                    def upload(_: int, client: httpx.Client = client, body: bytes = body) -> tuple[float, int]:
                        started = time.perf_counter()
                        answer = client.post("/shrink", content=body)
                        answer.raise_for_status()
                        size = len(client.get(answer.headers["location"]).content)
                        return time.perf_counter() - started, size

                    upload(0)  # warm-up (libvips initialisation)
                    started = time.perf_counter()
                    with ThreadPoolExecutor(clients) as pool:
                        results = list(pool.map(upload, range(requests)))
                    wall = time.perf_counter() - started
                latencies = sorted(r[0] for r in results)
                p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
                print(
                    f"{fmt:4} 1 MP ({len(body) / 1024:.0f} KiB -> {results[0][1] / 1024:.0f} KiB): "
                    f"{requests} uploads, {clients} clients, {workers} workers: {requests / wall:.2f} img/s, "
                    f"latency p50 {statistics.median(latencies):.2f} s, p95 {p95:.2f} s"
                )
            print(f"sandbox peak RSS (VmHWM): {peak_rss_mb(pid):.0f} MiB; cpus: {os.cpu_count()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--workers", type=int, default=4, help="the sandbox's concurrent compression jobs")
    args = parser.parse_args()
    run(args.clients, args.requests, args.workers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
