"""Side by side with the official MCP conformance suite: one embedded reference stack (the tool server and
its IdP, what ``conformance up`` starts for them), then alternately N times the official suite's server mode
(``@modelcontextprotocol/conformance`` 0.1.16, ``conformance server --url``) and our tool-server suites
(``pytest --suite auth,profile``) against the same tool server. Prints, per tool and median: wall time, CPU time
(user + sys of the process and its children), time before the first check, time per check, and the ratios.

    .venv/bin/python benchmarks/official_side_by_side.py [--runs 5] [--suites auth,profile] [--npx]

The official suite is installed on first use with npm into ``$XDG_CACHE_HOME/conformance/official`` (default
``~/.cache/conformance/official``), never into the repository, with the ``node@22`` package beside it: its CLI needs
Node >= 22 (``fs.globSync``). It is run from there as ``node_modules/.bin/conformance`` (``--npx``: through
``npx --no-install``, which adds npx's own start-up). It trusts the stack's private CA via ``NODE_EXTRA_CA_CERTS``.

What the two measure differs, so compare costs, not counts. The official server mode checks MCP protocol
behaviour without authorization (initialize, ping, tools/list, tools/call, resources, prompts, logging, completion,
DNS rebinding) and expects its own "everything" test server's tools, resources and prompts; the reference tool
server answers unauthenticated initialize/tools/list/tools/call (its OAuth checks are per tool and in our auth suite)
and implements only tools, so most official scenarios fail there ("Method not found", missing test tools): their
checks still run and are timed. Ours certify the OAuth authorization, token and tool-access rules and the host
profile, each check doing several HTTP exchanges (authorization code flows, DCR, CIMD, attacks).

Timing: time before the first check is from the process start to the first check's start (ours: the ``_first_check``
plugin; official: the earliest ``timestamp`` in its ``checks.json`` files, which are stamped when a check is
decided, so this favours it slightly); per check is the span from the first to the last check over the number of
checks minus one. CPU times depend on the machine's load: the script prints the load average before and after.

Under load, the ratio of the medians moves with whichever run a busy moment fell on; the script also prints the
median of the per-pair ratios (each of our runs against the official run just before it), which cancels most of
that. For ours it splits the CPU by phase (``_phase_cpu``: start-up before the first check, the checks, the end of
the run: redaction pass and reports), and prints, measured apart in a fresh process under the run's collector
policy, what importing the ``mcp`` SDK's client costs (paid by the first check that lists tools; design.md
requires the real SDK session), and the official CLI's own start-up (``conformance --version``: Node and the CLI's
modules loaded): each tool's fixed costs apart from what its checks cost, with each run's end (our reports, its
result files) counted with the checks on both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from conformance.core._cache import cache_dir
from conformance.reference.stack import running_stack

HERE = Path(__file__).resolve().parent
OFFICIAL = "@modelcontextprotocol/conformance@0.1.16"
NODE = "node@22"


@dataclass
class Run:
    wall: float
    cpu: float
    first: float
    per_check: float
    checks: int
    note: str
    phases: tuple[float, float, float] | None = None  # ours: CPU of start-up, checks, finish (in-process)

    @property
    def cpu_per_check(self) -> float:
        return self.cpu / self.checks


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def install_official() -> Path:
    """The official CLI in the per-user cache, installed with npm on first use; returns its directory."""
    home = cache_dir() / "official"
    cli = home / "node_modules" / ".bin" / "conformance"
    if not cli.exists() or not (home / "node_modules" / ".bin" / "node").exists():
        home.mkdir(parents=True, exist_ok=True)
        if not (home / "package.json").exists():
            (home / "package.json").write_text('{"name": "official-conformance-cache", "private": true}\n')
        print(f"installing {OFFICIAL} and {NODE} into {home} ...", flush=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", OFFICIAL, NODE], cwd=home, check=True)
    return home


def run_official(home: Path, url: str, ca: str, out: Path, npx: bool) -> Run:
    bin_dir = home / "node_modules" / ".bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NODE_EXTRA_CA_CERTS": ca}
    command = ["npx", "--no-install", "conformance"] if npx else [str(bin_dir / "conformance")]
    command += ["server", "--url", url, "--output-dir", str(out)]
    cpu0, started = children_cpu(), time.time()
    done = subprocess.run(command, env=env, cwd=home, capture_output=True, text=True, check=False)
    wall, cpu = time.time() - started, children_cpu() - cpu0
    stamps = []
    for checks_file in out.rglob("checks.json"):
        for check in json.loads(checks_file.read_text()):
            if check.get("status") != "INFO":  # INFO rows are its request/response log, not checks
                stamps.append(datetime.fromisoformat(check["timestamp"].replace("Z", "+00:00")).timestamp())
    stamps.sort()
    summary = [line for line in done.stdout.splitlines() if line.startswith("Total:")]
    per_check = (stamps[-1] - stamps[0]) / max(len(stamps) - 1, 1) if stamps else float("nan")
    first = stamps[0] - started if stamps else float("nan")
    return Run(wall, cpu, first, per_check, len(stamps), summary[-1] if summary else f"exit {done.returncode}")


def run_ours(env: dict[str, str], suites: str, out: Path) -> Run:
    times, phase_file = out / "times", out / "phases"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_first_check", "-p", "_phase_cpu", "-q"]
    command += ["--suite", suites, "--report-dir", str(out / "report")]
    out.mkdir(parents=True)
    env = {**env, "BENCH_CHECK_TIMES": str(times), "BENCH_PHASE_CPU": str(phase_file)}
    cpu0, started = children_cpu(), time.time()
    subprocess.run(command, env=env, cwd=out, capture_output=True, check=False)
    wall, cpu = time.time() - started, children_cpu() - cpu0
    spans = sorted(tuple(map(float, line.split())) for line in times.read_text().splitlines())
    verdict = json.loads((out / "report" / "report.json").read_text())["verdict"]["reason"]
    per_check = (spans[-1][1] - spans[0][1]) / max(len(spans) - 1, 1)
    checks_cpu, finish_cpu, total_cpu = map(float, phase_file.read_text().split())
    phases = (total_cpu - checks_cpu - finish_cpu, checks_cpu, finish_cpu)
    return Run(wall, cpu, spans[0][0] - started, per_check, len(spans), verdict, phases)


# What a run has imported when its first check lists tools (pytest, httpx, the host and the suites' modules), then the
# SDK's client the way that check imports it (conformance.core._gc's policy: threshold of a run, collector paused).
SDK_IMPORT = """
import gc, time
from conformance.core._gc import GEN0_THRESHOLD
gc.set_threshold(GEN0_THRESHOLD, *gc.get_threshold()[1:])
import pytest, httpx, httpcore, jsonschema, jwt
import conformance.pytest.plugin, conformance.host.http, conformance.host.mcp, conformance.suites._linking
import conformance.suites._tool_access
from conformance.core import _gc
started = time.process_time()
with _gc.long_lived("conformance.host.mcp_session"):
    import conformance.host.mcp_session
print(time.process_time() - started)
"""


def official_startup_cpu(home: Path, runs: int = 3) -> float:
    """Median CPU seconds of ``conformance --version``: Node started and the official CLI's modules loaded."""
    bin_dir = home / "node_modules" / ".bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    found = []
    for _ in range(runs):
        cpu0 = children_cpu()
        subprocess.run([str(bin_dir / "conformance"), "--version"], env=env, cwd=home, capture_output=True, check=True)
        found.append(children_cpu() - cpu0)
    return statistics.median(found)


def sdk_import_cpu(runs: int = 3) -> float:
    """Median CPU seconds of importing the SDK's client (conformance.host.mcp_session) in a fresh process."""
    found = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", SDK_IMPORT], capture_output=True, text=True, check=True)
        found.append(float(done.stdout.split()[-1]))
    return statistics.median(found)


def show(name: str, run: Run) -> None:
    print(
        f"  {name:9s} wall {run.wall:5.2f} s, CPU {run.cpu:5.2f} s, first check at {run.first:4.2f} s,"
        f" {run.checks} checks, {run.per_check * 1000:4.0f} ms/check, CPU {run.cpu_per_check * 1000:3.0f} ms/check;"
        f" {run.note}",
        flush=True,
    )


def median(runs: list[Run], field: str) -> float:
    return statistics.median(getattr(r, field) for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--suites", default="auth,profile", help="our suites against the tool server")
    parser.add_argument("--npx", action="store_true", help="start the official CLI through npx")
    args = parser.parse_args()
    home = install_official()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), base.get("PYTHONPATH")]))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    official: list[Run] = []
    ours: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp, running_stack(services=["toolserver", "idp"]) as stack:
        url, ca = stack.settings["CONFORMANCE_TARGET_URL"], stack.settings["CONFORMANCE_CA_BUNDLE"]
        for n in range(args.runs):
            print(f"run {n + 1}:")
            official.append(run_official(home, url, ca, Path(tmp) / f"official-{n}", args.npx))
            show("official", official[-1])
            ours.append(run_ours({**base, **stack.settings}, args.suites, Path(tmp) / f"ours-{n}"))
            show("ours", ours[-1])
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"median of {args.runs}:")
    for name, runs in (("official", official), ("ours", ours)):
        print(
            f"  {name:9s} wall {median(runs, 'wall'):5.2f} s, CPU {median(runs, 'cpu'):5.2f} s,"
            f" first check at {median(runs, 'first'):4.2f} s, {median(runs, 'checks'):.0f} checks,"
            f" {median(runs, 'per_check') * 1000:4.0f} ms/check,"
            f" CPU {statistics.median(r.cpu_per_check for r in runs) * 1000:4.1f} ms/check"
        )
    ratios = {f: median(ours, f) / median(official, f) for f in ("wall", "cpu", "first", "per_check")}
    print("  ours / official: " + ", ".join(f"{f} {r:.2f}x" for f, r in ratios.items()))
    paired = statistics.median(o.cpu_per_check / f.cpu_per_check for o, f in zip(ours, official, strict=True))
    print(f"  CPU per check, ours / official, median of the {args.runs} pairs: {paired:.2f}x")
    startup, checks, finish = (statistics.median(r.phases[i] for r in ours if r.phases) for i in range(3))
    sdk, their_startup = sdk_import_cpu(), official_startup_cpu(home)
    print(
        f"  ours by phase (in-process CPU): start-up {startup:.2f} s, checks {checks:.2f} s"
        f" (of which the mcp SDK import, measured apart: {sdk:.2f} s), finish {finish:.2f} s"
    )
    print(f"  official start-up (conformance --version, apart): {their_startup:.2f} s CPU")
    rest = {
        "ours": statistics.median((r.cpu - startup - sdk) / r.checks for r in ours),
        "official": statistics.median((r.cpu - their_startup) / r.checks for r in official),
    }
    print(
        "  CPU per check after the fixed costs (ours: start-up and SDK import; official: start-up):"
        f" ours {rest['ours'] * 1000:.1f} ms, official {rest['official'] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
