"""Memory and time of runs against hostile loopback targets: a gzip bomb on each target, a slow drip under
``--max-run-time``.

    .venv/bin/python benchmarks/hostile_bounds.py [--bomb-mib 1024] [--max-run-time 20]

Each run is a real ``python -m pytest`` against one server (tests/_hostile.py) that answers every request the same
way: a gzip body of ``--bomb-mib`` MiB of zeros (about 1 MB on the wire) for the auth, platform and compression
suites one at a time, a body without end and a 100 KB ``WWW-Authenticate``, then a body that arrives one byte every
0.2 s for all suites under ``--max-run-time``.
It prints each run's peak RSS (the run's process, from wait4), its wall time, the verdict and report.json's size;
first, the same for the MCP SDK's session opened alone against the bomb (the SDK reads its bodies itself).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests._hostile import bomb, gzip_bomb, hostile, huge_body, huge_header, slow_drip  # noqa: E402


def run(base: str, suites: str, *extra: str) -> tuple[float, float, str, int]:
    """(peak RSS MiB, seconds, verdict, report.json bytes) of one run of ``suites`` against ``base``."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--report-dir", tmp]
        args += ["--target-url", f"{base}/mcp", "--platform-url", base, "--compression-url", base]
        args += ["--suite", suites, "--allow-insecure-loopback", *extra]
        env = {
            **os.environ,
            "CONFORMANCE_PLATFORM_API_KEY": "sk-bench-platform",
            "CONFORMANCE_COMPRESSION_API_KEY": "bench-compression",
        }
        started = time.monotonic()
        child = subprocess.Popen(args, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        seconds = time.monotonic() - started
        report_path = Path(tmp) / "report.json"
        verdict, size = "no report.json", 0
        if report_path.is_file():
            size = report_path.stat().st_size
            verdict = json.loads(report_path.read_text())["verdict"]["status"]
        return usage.ru_maxrss / 1024, seconds, verdict, size


def sdk_session(base: str) -> tuple[float, float, str]:
    """(peak RSS MiB, seconds, outcome) of opening the MCP SDK's session against ``base`` in a fresh process, with
    the default size cap (16 MiB): the SDK reads its bodies itself, through the host's bounded transport."""
    code = (
        "import sys, time\n"
        "from conformance.host._guard import UrlGuard\n"
        "from conformance.host.http import HostHTTP\n"
        "from conformance.host.mcp_session import McpSession\n"
        "http = HostHTTP(guard=UrlGuard(allow_insecure_loopback=True), retry=None)\n"
        "try:\n"
        "    McpSession(http, sys.argv[1] + '/mcp').open()\n"
        "    print('opened')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-c", code, base], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    outcome = child.stdout.read().strip()
    _, _, usage = os.wait4(child.pid, 0)
    return usage.ru_maxrss / 1024, time.monotonic() - started, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bomb-mib", type=int, default=1024, help="MiB the gzip bomb inflates to")
    parser.add_argument("--max-run-time", type=float, default=20.0, help="the slow-drip run's --max-run-time")
    options = parser.parse_args()
    print(f"gzip bomb: {len(gzip_bomb(options.bomb_mib)) / 1e6:.2f} MB on the wire, {options.bomb_mib} MiB inflated")
    print(f"{'run':44} {'peak RSS':>10} {'time':>8}  verdict (report.json size)")
    rows: list[tuple[str, str, tuple[str, ...], object]] = [
        (f"gzip bomb, {suite}", suite, (), bomb(options.bomb_mib)) for suite in ("auth", "platform", "compression")
    ]
    rows.append(("endless body (1 GB announced), all suites", "auth,platform,campaigns,compression", (), huge_body))
    rows.append(("100 KB WWW-Authenticate, auth", "auth", (), huge_header))
    drip_budget = f"{options.max_run_time:g}"
    rows.append(
        (
            f"slow drip, all suites, --max-run-time {drip_budget}",
            "auth,platform,campaigns,compression",
            ("--max-run-time", drip_budget),
            slow_drip(0.2),
        )
    )
    with hostile(bomb(options.bomb_mib)) as base:
        rss, seconds, outcome = sdk_session(base)
    print(f"{'gzip bomb, the MCP SDK session alone':44} {rss:8.0f} MiB {seconds:7.1f}s  {outcome}", flush=True)
    for label, suites, extra, answer in rows:
        with hostile(answer) as base:  # type: ignore[arg-type]
            rss, seconds, verdict, size = run(base, suites, *extra)
        print(f"{label:44} {rss:8.0f} MiB {seconds:7.1f}s  {verdict} ({size / 1e6:.2f} MB)", flush=True)


if __name__ == "__main__":
    main()
