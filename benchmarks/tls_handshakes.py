"""Who opens the TLS connections of a certification run: each suite group certified once against the embedded
reference stack, every TLS handshake of the pytest process counted (``_handshakes.py``, a plugin loaded into it)
and grouped by where the harness opened it.

    .venv/bin/python benchmarks/tls_handshakes.py [--suites auth,profile] [--concurrency N] [--checkout DIR ...]

For each run it prints the exchanges of the evidence, the client and server handshakes, the (rule, status) pairs it
decided, and per caller (thread kind, the harness's innermost frames) how many handshakes it made. ``--checkout``
runs the same suites once per checkout (its package first on ``PYTHONPATH``) on one stack, and says whether they
decided the same pairs: the connections before and after a change. ``--verbose`` prints each handshake with the
client's connection pool at that moment (which connections it held, busy or idle, and how many requests each
served): a new connection beside busy ones is a request in flight at once; beside an idle one it would be a pool
that did not reuse it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from conformance.reference.stack import running_stack

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from latency import unique_exchanges, verdict_pairs  # noqa: E402


def certify(suites: str, env: dict[str, str], directory: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The suites certified by a fresh pytest process with the counting plugin: its report and its handshakes."""
    report_dir = directory / "report"
    report_dir.mkdir(parents=True)
    out = directory / "handshakes.json"
    path = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), str(HERE)) if p)
    env = {**env, "PYTHONPATH": path, "CONFORMANCE_HANDSHAKES": str(out)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:anyio", "-q", "-p", "_handshakes"]
    command += ["--suite", suites, "--report-dir", str(report_dir)]
    subprocess.run(command, env=env, cwd=directory, capture_output=True, check=False)
    return json.loads((report_dir / "report.json").read_text()), json.loads(out.read_text())


def caller(handshake: dict[str, Any]) -> str:
    thread = re.split(r"[-_ ](?=[0-9a-f]*\d)", handshake["thread"])[0]  # the kind of thread, without its number
    frames = [f for f in handshake["harness"] if "/_wire.py" not in f and "/http.py:" not in f] or handshake["harness"]
    side = "server" if handshake["server"] else "client"
    return f"{side} {thread}: " + " <- ".join(reversed(frames[-3:]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default="auth,profile")
    parser.add_argument("--concurrency", help="the run's --concurrency (default: the harness's)")
    parser.add_argument("--checkout", nargs="*", type=Path, default=[], help="run once per checkout (PYTHONPATH)")
    parser.add_argument("--verbose", action="store_true", help="each handshake with its client's pool")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    if args.concurrency is not None:
        base["CONFORMANCE_CONCURRENCY"] = str(args.concurrency)
    checkouts: list[Path | None] = list(args.checkout) or [None]
    decided: list[set[tuple[str, str]]] = []
    with running_stack() as stack, tempfile.TemporaryDirectory() as tmp:
        for n, checkout in enumerate(checkouts):
            env = {**base, **stack.settings}
            if checkout is not None:
                env["PYTHONPATH"] = str(checkout.resolve())
            report, handshakes = certify(args.suites, env, Path(tmp) / f"run{n}")
            pairs = verdict_pairs(report)
            decided.append(pairs)
            servers = sum(1 for h in handshakes if h["server"])
            print(
                f"{checkout or 'this checkout'}: {len(unique_exchanges(report))} exchanges, {len(handshakes)} TLS"
                f" handshakes ({len(handshakes) - servers} client, {servers} server), {len(pairs)} (rule, status)"
                " pairs"
            )
            for name, count in collections.Counter(caller(h) for h in handshakes).most_common():
                print(f"  {count:3d}  {name}")
            if args.verbose:
                for h in handshakes:
                    print(f"  {h['at_s']:8.3f} s  port {h['peer_port']}  pool {h.get('pool', '-')}  {caller(h)}")
                    for connection in h.get("connections", []):
                        print(f"             {connection}")
    if len(decided) > 1:
        same = all(pairs == decided[0] for pairs in decided)
        print("every run decided the same (rule, status) pairs" if same else "the runs DECIDED DIFFERENTLY")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
