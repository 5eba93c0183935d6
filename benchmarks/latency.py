"""A remote target, 0 to 150 ms away: per suite group, the wall time of a certification beside its critical path,
both read against the embedded reference stack served with a set round-trip time (``running_stack(latency_s=...)``,
what ``conformance up --latency 50ms`` starts), and the verdicts at each latency against those at 0 ms.

    .venv/bin/python benchmarks/latency.py [--latencies 0 50 150] [--suites auth,profile platform,campaigns compression]
        [--concurrency N] [--no-marginal] [--marginal] [--instructions] [--ab BASE [--wall]] [--rounds N]

Each run is a fresh ``python -m pytest --suite ...`` process (as ``conformance demo`` starts it for one target
kind) against one stack per latency. Printed per run: wall time of the pytest process; ``net``, the sum of the
exchanges' ``elapsed_s`` (what a strictly sequential host waits for the network); the critical path ``cp`` with
the number of exchanges on it; the harness's CPU (``RUSAGE_CHILDREN`` around the pytest process: the services run
in the stack's own processes) in total and per exchange; the rate-limit pacing the run waited
(``throttle.waited_s``); and whether its (rule, status) pairs are those of the 0 ms run of the same suites. The
script exits 1 when they are not.

The critical path is computed from the evidence in report.json (``started_at``, ``elapsed_s``, ``case``) and from
what the run's fixtures take (``_fixture_chains.py``, a plugin loaded into the certifying pytest process: it marks
each exchange a session fixture made, early work included, ``"fixture": name``, and writes which fixtures each
fixture and each check takes):

- An exchange is one evidence item; an exchange a shared fixture made appears in the evidence of every check that
  used it, and is counted once per chain it is on.
- A chain of exchanges lasts the time at least one of them was in flight (the union of their intervals): the sum
  of their ``elapsed_s`` when they followed one another, less when some went at once. The exchanges of one case of
  an attack table (same ``case``) follow one another, different cases are independent of each other, and all follow
  the exchanges that belong to no case: a chain is its case-less exchanges' time plus its longest case's.
- A fixture's chain is the longest chain of the fixtures it takes (its arguments, those it asks for, its early
  work's ``after``), then its own exchanges; a check's is the longest chain of the fixtures it takes, then its own
  exchanges. Critical path of a target = its longest check chain: discovery, then registration, authorization,
  token, the tool listing, a probe, the check's own requests. Checks kept out of each other's way (``alone``) are
  counted as independent: a host could run each on a grant of its own.
- A chain's length is the network and the target, never the harness's CPU between two exchanges, nor a pacing
  wait: the floor of a host that ran every independent chain at once. ``checks alone`` is the floor without the
  fixtures (the first check's chain, then the longest other one's), a lower bound kept for comparison.
- The evidence is not every exchange: a check keeps at most 60 (its first 15 and its latest) and a rule's row at
  most 40. Against the reference, auth+profile and compression keep nearly all of theirs; platform+campaigns about
  490 of some 1 360 (the long runs of the token and rate-limit checks). ``net`` and ``cp`` are lower bounds there,
  and the wall time also holds the exchanges the evidence left out.

At each latency above 0 a second line gives the network floor of a host running N checks of a target at a time
(``concurrent_floor``: each check's exchanges in turn, the first check before the others): a design figure for
concurrency, read from the same evidence.

The harness CPU per exchange is printed twice: gross (the run's CPU over its exchanges) and after the run's fixed
costs, which are the CPU of the same command with every check deselected (``-k`` matching none: interpreter,
plugin, collection, writing an empty report), measured once per suite group. First-use imports (the MCP SDK's
types, for a tool-server run) stay in the second figure; ``benchmarks/host_request.py
--stack`` gives the request path's own CPU per exchange over TLS.

The third figure, ``marginal``, is the honest per-exchange cost: it leaves out every cost that does not grow with
the number of exchanges (interpreter, plugin, collection, first-use imports such as the MCP SDK's, jinja2 or
botocore, the report writers' imports). At 0 ms the suites are certified twice more in one pytest process each,
through a targets file (docs/ci.md, "Fleets"): a fleet of one named target, then a fleet of ``--copies`` (2) named
targets, all pointing at the same reference services (the URLs in the file, each target's secrets in the environment
under its own prefix, every other setting the run's). The marginal CPU per exchange is the difference of the two
runs' CPU over the exchanges the further targets' certifications made (report.json's results carry ``target_name``).
Every target's (rule, status) pairs are compared with the fleet of one's. The named targets share the services'
state (test accounts, registrations, campaigns, rate-limit windows) and, for the platform's rules judged over every
answer (RL-01/04/05/07), one ledger (the process keeps one per target URL); the reference decides the same for each.
The figure is a difference of two runs' CPU, each of which the machine's load moves by up to a second: compare it
over several rounds (``--ab``), not from one run.

``--ab BASE`` measures the marginal figure only, at 0 ms, for this checkout and for another one (``git worktree
add /tmp/base <commit>``; its package is put first on the runs' ``PYTHONPATH``), alternated ``--rounds`` times on
one stack, and prints the median of each, and the figure from the lowest CPU of each fleet size over the rounds
(the machine's load only ever adds CPU): a change's effect on the per-exchange CPU, the same services and
moment for both.

``--instructions`` counts the marginal figure in instructions as well: each fleet's pytest process runs under
cachegrind (``valgrind --tool=cachegrind --cache-sim=no``: every user-space instruction of the process, its threads
included, at some 40 times its CPU time), and the row adds the instructions per exchange of the further targets.
The count moves far less than the CPU time with the machine's load, but it moves: threads run one at a time under
cachegrind and hand over as the wall time goes, so a fleet's count moves by a few percent from one run to the next
(``perf stat -e instructions:u`` would count faster, but a virtual machine may not expose the counters). The runs
set ``PYTHONHASHSEED=0``, no check budget and long timeouts (a run slowed forty times must not be blocked as too
slow); ``--concurrency 1`` keeps the threads' share of the work the same from one run to the next. A round whose
targets did not all decide alike is left out of the median. Compile the checkouts' bytecode first where
``PYTHONDONTWRITEBYTECODE`` is set, or each run compiles every module again (the same in both fleets).
``--marginal`` measures the marginal figure alone, ``--rounds`` times, for this checkout (with ``--ab``, alternated
with BASE):

    .venv/bin/python benchmarks/latency.py --marginal --instructions --rounds 2 --suites auth,profile \
        --concurrency 1 [--ab BASE]

``--marginal --sample DIR`` samples each fleet's main thread at every millisecond of its CPU (``_cpu_sample.py``,
with early fixtures set up on the main thread: ``CONFORMANCE_NO_SHORTCUTS=early-fixtures``; give ``--concurrency
1``) and prints the functions the further targets' samples fell under, as shares of their difference: where the
marginal CPU goes, without cProfile's cost per call. A few hundred samples make the difference: shares move by a
few points from one round to the next.

``--ab BASE --wall`` compares wall times instead, at each latency above 0 given: each suite group certified by
each checkout in turn, ``--rounds`` times, on one stack; it prints the medians of wall time, harness CPU and the
critical path through the fixtures, and whether every run certified the same (rule, status) pairs.

``--cprofile DIR`` also writes a cProfile of each 0 ms run's pytest process there, on the process's CPU clock
(``DIR/<suites>.prof``, through ``_cpu_profile.py``; read it with ``python -m pstats``); a profiled run's wall and
CPU figures include the profiler's overhead. Figures depend on the machine's load.
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
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from _cores import cores  # a sibling script, not a package

from conformance.config import all_options, secret_env
from conformance.core.targets import TARGETS
from conformance.reference.stack import running_stack

Exchange = dict[str, Any]
HERE = Path(__file__).resolve().parent
NO_CHECK = "no_check_is_called_this"
CONCURRENCY = (1, 4, 8, 16)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _key(exchange: Exchange) -> tuple[Any, ...]:
    return (exchange.get("started_at"), exchange.get("method"), exchange.get("url"), exchange.get("elapsed_s"))


def _elapsed(exchanges: Iterable[Exchange]) -> float:
    return sum(float(e.get("elapsed_s") or 0.0) for e in exchanges)


@dataclass
class Chain:
    seconds: float
    exchanges: int

    def __add__(self, other: Chain) -> Chain:
        return Chain(self.seconds + other.seconds, self.exchanges + other.exchanges)


def _busy(exchanges: list[Exchange]) -> Chain:
    """The time at least one of ``exchanges`` was in flight (the union of their intervals): their sum when they
    followed one another, less when some were sent at once."""
    spans = sorted(
        (start, start + float(e.get("elapsed_s") or 0.0)) for e in exchanges if (start := _started(e)) is not None
    )
    total, end = 0.0, float("-inf")
    for begin, finish in spans:
        if finish > end:
            total += finish - max(begin, end)
            end = finish
    untimed = [e for e in exchanges if _started(e) is None]
    return Chain(total + _elapsed(untimed), len(exchanges))


def _started(exchange: Exchange) -> float | None:
    stamp = exchange.get("started_at")
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() if stamp else None
    except ValueError:
        return None


def check_chain(exchanges: list[Exchange]) -> Chain:
    """A check's chain: its case-less exchanges, then the longest of its cases (see the module's docstring)."""
    plain = [e for e in exchanges if e.get("case") is None]
    cases: dict[str, list[Exchange]] = defaultdict(list)
    for exchange in exchanges:
        if exchange.get("case") is not None:
            cases[str(exchange["case"])].append(exchange)
    longest = max((_busy(c) for c in cases.values()), key=lambda c: c.seconds, default=Chain(0, 0))
    return _busy(plain) + longest


def dependent_paths(report: dict[str, Any], chains: dict[str, Any]) -> dict[str, Chain]:
    """Per target, its critical path through the fixtures (``_fixture_chains.py``'s dump): a check's chain is its
    own exchanges' after the longest chain of the fixtures it takes, a fixture's its own exchanges' after the longest
    of those it takes in turn (see the module's docstring)."""
    takes: dict[str, list[str]] = chains["fixtures"]
    paths: dict[str, Chain] = {}
    by_target: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in report["results"]:
        by_target[result["target"]].append(result)
    for target, results in by_target.items():
        made: dict[str, dict[tuple[Any, ...], Exchange]] = defaultdict(dict)  # fixture -> its exchanges
        own: dict[str, dict[tuple[Any, ...], Exchange]] = defaultdict(dict)  # check -> its own exchanges
        for result in results:
            check = (result.get("checks") or [result["rule"]])[0]
            own.setdefault(check, {})
            for exchange in result.get("evidence") or []:
                if exchange.get("fixture"):
                    made[str(exchange["fixture"])][_key(exchange)] = exchange
                else:
                    own[check][_key(exchange)] = exchange
        memo: dict[str, Chain] = {}
        checks = [
            _longest(_fixture_chain(f, takes, made, memo) for f in chains["checks"].get(check, ()))
            + check_chain(list(exchanges.values()))
            for check, exchanges in own.items()
        ]
        paths[target] = max(checks, key=_seconds, default=Chain(0.0, 0))
    return paths


def _fixture_chain(
    name: str, takes: dict[str, list[str]], made: dict[str, dict[tuple[Any, ...], Exchange]], memo: dict[str, Chain]
) -> Chain:
    """A fixture's chain: the longest of those it takes, then its own exchanges'."""
    if name not in memo:
        memo[name] = Chain(0.0, 0)  # a cycle (none is expected) counts once
        before = _longest(_fixture_chain(t, takes, made, memo) for t in takes.get(name, ()))
        memo[name] = before + check_chain(list(made[name].values()))
    return memo[name]


def _longest(chains: Iterable[Chain]) -> Chain:
    return max(chains, key=_seconds, default=Chain(0.0, 0))


def _seconds(chain: Chain) -> float:
    return chain.seconds


def critical_paths(report: dict[str, Any]) -> dict[str, Chain]:
    """Per target of ``report`` (report.json), its critical path (see the module's docstring)."""
    by_check: dict[str, dict[str, dict[tuple[Any, ...], Exchange]]] = defaultdict(lambda: defaultdict(dict))
    for result in report["results"]:
        checks = result.get("checks") or [result["rule"]]
        for exchange in result.get("evidence") or []:
            # One check deciding several rules repeats its evidence in each rule's row: counted once per check.
            by_check[result["target"]][checks[0]][_key(exchange)] = exchange
    paths: dict[str, Chain] = {}
    for target, checks in by_check.items():
        ordered = sorted(
            (sorted(exchanges.values(), key=lambda e: str(e.get("started_at"))) for exchanges in checks.values()),
            key=lambda exchanges: str(exchanges[0].get("started_at")) if exchanges else "~",
        )
        chains = [check_chain(exchanges) for exchanges in ordered if exchanges]
        if not chains:
            paths[target] = Chain(0.0, 0)
            continue
        rest = max(chains[1:], key=lambda c: c.seconds, default=Chain(0.0, 0))
        paths[target] = chains[0] + rest
    return paths


def _first_start(exchanges: dict[tuple[Any, ...], Exchange]) -> str:
    return min((str(e.get("started_at")) for e in exchanges.values()), default="~")


def concurrent_floor(report: dict[str, Any], workers: int) -> float:
    """The network time of the longest target with ``workers`` checks at a time (each check's exchanges in turn,
    its cases included; the first check before the others, then longest first): what a host that ran whole checks
    concurrently, at that bound, would still wait for."""
    by_check: dict[str, dict[str, dict[tuple[Any, ...], Exchange]]] = defaultdict(lambda: defaultdict(dict))
    for result in report["results"]:
        checks = result.get("checks") or [result["rule"]]
        for exchange in result.get("evidence") or []:
            by_check[result["target"]][checks[0]][_key(exchange)] = exchange
    floors = [0.0]
    for checks in by_check.values():
        ordered = sorted(checks.values(), key=_first_start)
        if not ordered:
            continue
        first, *rest = (_elapsed(ex.values()) for ex in ordered)
        lanes = [0.0] * max(1, workers)
        for seconds in sorted(rest, reverse=True):
            lanes[lanes.index(min(lanes))] += seconds
        floors.append(first + max(lanes))
    return max(floors)


def unique_exchanges(report: dict[str, Any]) -> list[Exchange]:
    seen: dict[tuple[Any, ...], Exchange] = {}
    for result in report["results"]:
        for exchange in result.get("evidence") or []:
            seen[_key(exchange)] = exchange
    return list(seen.values())


def verdict_pairs(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(r["rule"], r["status"]) for r in report["results"]}


@dataclass
class Run:
    wall: float
    cpu: float
    report: dict[str, Any]
    chains: dict[str, Any] | None = None  # _fixture_chains.py's dump
    instructions: int | None = None  # user-space instructions of the pytest process (``--instructions``)


# The pytest process under cachegrind without its cache simulation: every user-space instruction it executes is
# counted (threads included, child processes not), at some 40 times the CPU.
CACHEGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=no")
# What an instruction count needs to repeat: the same hashes, and no bound the slowed process could outrun (a check's
# budget; a TLS handshake or a body read forty times slower than the timeouts allow): a timeout that does not fire
# costs nothing, one that fires blocks the rest of a target's certification.
COUNTED = {
    "PYTHONHASHSEED": "0",
    "CONFORMANCE_MAX_CHECK_TIME": "0",
    "CONFORMANCE_CONNECT_TIMEOUT": "300",
    "CONFORMANCE_READ_TIMEOUT": "300",
    "CONFORMANCE_TOTAL_TIMEOUT": "900",
}


def counted_instructions(out: Path) -> int:
    """The instructions a cachegrind output file counts (its ``summary:`` line)."""
    for line in out.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise ValueError(f"no summary in {out}")


def certify(
    suites: str,
    env: dict[str, str],
    report_dir: Path,
    profile: Path | None,
    *extra: str,
    chains: bool = False,
    instructions: bool = False,
    sample: Path | None = None,
) -> Run:
    """The suites certified by a fresh pytest process; ``chains``: with ``_fixture_chains.py``, whose dump the run's
    ``chains`` holds (the fixtures' exchanges are marked in the report); ``instructions``: under cachegrind, the
    run's ``instructions`` its count; ``sample``: its main thread's stacks sampled into that file
    (``_cpu_sample.py``)."""
    counts = report_dir.parent / "cachegrind.out"
    command = [*CACHEGRIND, f"--cachegrind-out-file={counts}"] if instructions else []
    if instructions:
        env = {**env, **COUNTED}
    command += [sys.executable]
    if profile is not None:
        command += [str(HERE / "_cpu_profile.py"), str(profile)]
    elif sample is not None:
        command += [str(HERE / "_cpu_sample.py"), str(sample)]
    command += ["-m", "pytest", "-p", "no:cacheprovider", "-p", "no:anyio", "-q"]
    command += ["--suite", suites, "--report-dir", str(report_dir), *extra]
    dump = report_dir.parent / "fixture-chains.json"
    if chains:
        command += ["-p", "_fixture_chains"]
        path = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), str(HERE)) if p)
        env = {**env, "PYTHONPATH": path, "CONFORMANCE_FIXTURE_CHAINS": str(dump)}
    cpu0, started = children_cpu(), time.perf_counter()
    subprocess.run(command, env=env, cwd=report_dir.parent, capture_output=True, check=False)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu0
    found = json.loads(dump.read_text()) if chains and dump.exists() else None
    counted = counted_instructions(counts) if instructions else None
    return Run(wall, cpu, json.loads((report_dir / "report.json").read_text()), found, counted)


def fleet_env(settings: dict[str, str], names: list[str], directory: Path) -> dict[str, str]:
    """The settings of a fleet of ``names`` named targets, each the same services of ``settings`` (a stack's): a
    targets file with every target's URLs, every target's secrets under its prefix, the other settings the run's."""
    urls = {kind.url_setting for kind in TARGETS.values()}
    secrets = {spec.name for spec in all_options() if spec.secret}
    env = {k: v for k, v in settings.items() if k.removeprefix("CONFORMANCE_").lower() not in urls | secrets}
    lines: list[str] = []
    for name in names:
        lines += ["[[target]]", f'name = "{name}"']
        for key, value in settings.items():
            setting = key.removeprefix("CONFORMANCE_").lower()
            if setting in urls:
                lines.append(f"{setting} = {json.dumps(value)}")
            elif setting in secrets:
                env[secret_env(name.upper() + "_", setting)] = value
        lines.append("")
    targets = directory / "targets.toml"
    targets.write_text("\n".join(lines))
    return {**env, "CONFORMANCE_TARGETS_FILE": str(targets)}


def certify_fleet(
    suites: str,
    base: dict[str, str],
    settings: dict[str, str],
    directory: Path,
    size: int,
    instructions: bool = False,
    sample: Path | None = None,
) -> Run:
    """The suites certified against a fleet of ``size`` named targets, all the same services (``fleet_env``)."""
    directory.mkdir(parents=True)
    env = {**base, **fleet_env(settings, [f"copy{n}" for n in range(1, size + 1)], directory)}
    report_dir = directory / "report"
    report_dir.mkdir()
    return certify(suites, env, report_dir, None, instructions=instructions, sample=sample)


@dataclass
class Marginal:
    """A fleet of one against a fleet of ``copies``: both runs' CPU and the exchanges of the copies past the first."""

    one: float
    many: float
    copies: int
    exchanges: int
    same: bool
    decided: str
    pairs: set[tuple[str, str]]  # the fleet of one's (rule, status) pairs
    counts: tuple[int, int] | None = None  # instructions of the fleet of one and of ``copies`` (``--instructions``)

    @property
    def slope(self) -> float:
        """ms of CPU per exchange of the further certifications."""
        return (self.many - self.one) / self.exchanges * 1000 if self.exchanges else 0.0

    @property
    def instructions(self) -> float | None:
        """Millions of instructions per exchange of the further certifications."""
        if self.counts is None or not self.exchanges:
            return None
        return (self.counts[1] - self.counts[0]) / self.exchanges / 1e6

    def row(self, suites: str) -> str:
        counted = ""
        if self.counts is not None:
            counted = (
                f" | {self.instructions:5.3f} M instructions/exchange: {self.counts[0] / 1e9:.3f}"
                f" and {self.counts[1] / 1e9:.3f} G"
            )
        return (
            f"{suites:<19}    0 ms: marginal {self.slope:4.2f} ms/exchange: one target {self.one:5.2f} s,"
            f" {self.copies} targets {self.many:5.2f} s CPU, {self.exchanges} exchanges past the first target's"
            f"{counted} | {self.decided}"
        )


def marginal(
    suites: str,
    env: dict[str, str],
    settings: dict[str, str],
    directory: Path,
    copies: int,
    instructions: bool = False,
    sample: Path | None = None,
) -> Marginal:
    """The suites certified against a fleet of one and of ``copies`` named targets on the same services, and
    whether every target decided as the fleet of one; ``instructions``: each fleet under cachegrind; ``sample``: a
    directory, each fleet's stacks sampled into it (``one.json``, ``many.json``)."""
    if sample is not None:
        sample.mkdir(parents=True, exist_ok=True)
    samples = (sample / "one.json", sample / "many.json") if sample is not None else (None, None)
    once = certify_fleet(suites, env, settings, directory / "one", 1, instructions, samples[0])
    many = certify_fleet(suites, env, settings, directory / "many", copies, instructions, samples[1])
    plain = verdict_pairs(once.report)
    names = [f"copy{n}" for n in range(1, copies + 1)]
    per_target = {
        name: {(r["rule"], r["status"]) for r in many.report["results"] if r.get("target_name") == name}
        for name in names
    }
    same = all(pairs == plain for pairs in per_target.values())
    decided = (
        f"each target the same {len(plain)} (rule, status) pairs"
        if same
        else "DIFFERENT: " + "; ".join(f"{n}: {sorted(p ^ plain)}" for n, p in per_target.items() if p != plain)
    )
    further = [r for r in many.report["results"] if r.get("target_name") in names[1:]]
    exchanges = len(unique_exchanges({"results": further}))
    counts = (once.instructions, many.instructions) if once.instructions and many.instructions else None
    return Marginal(once.cpu, many.cpu, copies, exchanges, same, decided, plain, counts)


def sampled_difference(one: Path, many: Path, top: int = 40) -> list[str]:
    """The functions the further targets' samples were most often on the stack of: the samples of ``many`` minus
    those of ``one``, each as a share of the difference of all samples (``_cpu_sample.py``'s files), those under
    80 % of it."""
    first, second = json.loads(one.read_text()), json.loads(many.read_text())
    total = second["samples"] - first["samples"]
    more = {
        name: count - first["inclusive"].get(name, 0)
        for name, count in second["inclusive"].items()
        if count > first["inclusive"].get(name, 0)
    }
    # (the frames every sample is under, the interpreter's, pytest's session and run loop, say nothing)
    ranked = sorted(((n, c) for n, c in more.items() if c < 0.8 * total), key=lambda item: -item[1])[:top]
    return [f"{count:6d} {100 * count / total if total else 0:5.1f} %  {name}" for name, count in ranked]


def marginal_ab(args: argparse.Namespace, base: dict[str, str]) -> int:
    """``--ab BASE``: the marginal CPU per exchange of this checkout and of ``BASE``, alternated on one stack
    (``--marginal`` without ``--ab``: this checkout's alone)."""
    trees = {"this": HERE.parent} if args.ab is None else {"base": args.ab.resolve(), "this": HERE.parent}
    differs = False
    with tempfile.TemporaryDirectory() as tmp, running_stack() as stack:
        for suites in args.suites:
            runs: dict[str, list[Marginal]] = {name: [] for name in trees}
            for round_ in range(args.rounds):
                order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
                for name, tree in order:
                    env = {**base, "PYTHONPATH": str(tree)}
                    directory = Path(tmp) / f"{suites}-{name}-{round_}"
                    sample = args.sample / f"{suites}-{name}-{round_}" if args.sample is not None else None
                    found = marginal(suites, env, stack.settings, directory, args.copies, args.instructions, sample)
                    differs = differs or not found.same
                    runs[name].append(found)
                    print(f"{name} round {round_ + 1}: {found.row(suites)}", flush=True)
                    if sample is not None:
                        print(f"  samples of the further targets' certifications, on the stack of ({sample}):")
                        print("\n".join(sampled_difference(sample / "one.json", sample / "many.json")), flush=True)
            for name, found_runs in runs.items():
                shown = ", ".join(f"{m.slope:.2f}" for m in found_runs)
                exchanges = statistics.median(m.exchanges for m in found_runs)
                lowest = (min(m.many for m in found_runs) - min(m.one for m in found_runs)) / exchanges * 1000
                counted = [m.instructions for m in found_runs if m.instructions is not None and m.same]
                instructions = (
                    f"; {statistics.median(counted):.3f} M instructions/exchange (median of the rounds whose targets"
                    f" all decided alike: {', '.join(f'{c:.3f}' for c in counted)})"
                    if counted
                    else ""
                )
                print(
                    f"== {suites} {name} ({trees[name]}): marginal"
                    f" {statistics.median(m.slope for m in found_runs):.2f} ms/exchange (median; rounds {shown});"
                    f" {lowest:.2f} from the lowest CPU of each fleet size{instructions}",
                    flush=True,
                )
    print(cores())
    return 1 if differs else 0


def wall_ab(args: argparse.Namespace, base: dict[str, str]) -> int:
    """``--ab BASE --wall``: each suite group certified by this checkout and by ``BASE``, alternated ``--rounds``
    times at each latency above 0 on one stack: the medians of their wall times, their harness CPU and the critical
    path through the fixtures (this checkout's ``_fixture_chains.py`` loaded into both)."""
    trees = {"base": args.ab.resolve(), "this": HERE.parent}
    differs = False
    with tempfile.TemporaryDirectory() as tmp:
        for latency in sorted({x for x in args.latencies if x > 0}):
            with running_stack(latency_s=latency / 1000.0) as stack:
                for suites in args.suites:
                    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
                    pairs: dict[str, set[tuple[str, str]]] = {}
                    for round_ in range(args.rounds):
                        order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
                        for name, tree in order:
                            env = {**base, **stack.settings, "PYTHONPATH": str(tree)}
                            report_dir = Path(tmp) / f"{suites}-{latency:g}-{name}-{round_}" / "report"
                            report_dir.mkdir(parents=True)
                            run = certify(suites, env, report_dir, None, chains=True)
                            found = verdict_pairs(run.report)
                            first = pairs.setdefault("first", found)
                            if found != first:
                                differs = True
                                print(f"DIFFERENT from the first run: {sorted(found ^ first)}", flush=True)
                            paths = dependent_paths(run.report, run.chains) if run.chains else {}
                            cp = max(paths.values(), key=_seconds, default=Chain(0.0, 0)).seconds
                            runs[name].append((run.wall, run.cpu, cp))
                            print(
                                f"{suites} {latency:g} ms {name} round {round_ + 1}: wall {run.wall:.2f} s,"
                                f" CPU {run.cpu:.2f} s, cp {cp:.2f} s, load {os.getloadavg()[0]:.1f}",
                                flush=True,
                            )
                    for name, found_runs in runs.items():
                        wall, cpu, cp = (statistics.median(r[i] for r in found_runs) for i in range(3))
                        shown = ", ".join(f"{r[0]:.2f}" for r in found_runs)
                        print(
                            f"== {suites} {latency:g} ms {name} ({trees[name]}): wall {wall:.2f} s (median; rounds"
                            f" {shown}), CPU {cpu:.2f} s, cp {cp:.2f} s, wall/cp {wall / cp if cp else 0:.2f}",
                            flush=True,
                        )
    print("every run the same (rule, status) pairs" if not differs else "DIFFERENT (rule, status) pairs")
    print(cores())
    return 1 if differs else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", nargs="*", type=float, default=[0.0, 50.0, 150.0], help="milliseconds")
    parser.add_argument("--suites", nargs="*", default=["auth,profile", "platform,campaigns", "compression"])
    parser.add_argument("--cprofile", type=Path, help="write a cProfile of each 0 ms run into this directory")
    parser.add_argument("--concurrency", help="the runs' --concurrency, a number or auto (default: the harness's)")
    parser.add_argument(
        "--no-marginal", action="store_true", help="leave out the fleet runs of the marginal CPU per exchange"
    )
    parser.add_argument("--ab", type=Path, help="compare the marginal figure with this checkout's (see the docstring)")
    parser.add_argument("--rounds", type=int, default=3, help="--ab: rounds, each checkout once per round")
    parser.add_argument("--wall", action="store_true", help="--ab: compare wall times at the latencies above 0")
    parser.add_argument("--copies", type=int, default=2, help="the marginal's larger fleet (named targets)")
    parser.add_argument(
        "--instructions", action="store_true", help="the marginal's fleets under cachegrind: instructions per exchange"
    )
    parser.add_argument("--marginal", action="store_true", help="only the marginal figure, --rounds times")
    parser.add_argument("--sample", type=Path, help="--marginal: sample each fleet's stacks into this directory")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    if args.concurrency is not None:
        base["CONFORMANCE_CONCURRENCY"] = str(args.concurrency)
    if args.sample is not None:  # every check's work on the sampled main thread (with --concurrency 1)
        base["CONFORMANCE_NO_SHORTCUTS"] = "early-fixtures"
    if args.ab is not None or args.marginal:
        return wall_ab(args, base) if args.wall else marginal_ab(args, base)
    reference: dict[str, set[tuple[str, str]]] = {}
    fixed: dict[str, float] = {}
    rows: list[str] = []
    differs = False
    if args.cprofile is not None:
        args.cprofile.mkdir(parents=True, exist_ok=True)
    latencies = sorted(set(args.latencies))
    if 0.0 not in latencies:
        latencies.insert(0, 0.0)  # the verdicts every other latency is compared with
    with tempfile.TemporaryDirectory() as tmp:
        for latency in latencies:
            with running_stack(latency_s=latency / 1000.0) as stack:
                env = {**base, **stack.settings}
                for suites in args.suites:
                    if suites not in fixed:
                        empty = Path(tmp) / f"{suites}-fixed" / "report"
                        empty.mkdir(parents=True)
                        fixed[suites] = certify(suites, env, empty, None, "-k", NO_CHECK).cpu
                    report_dir = Path(tmp) / f"{suites}-{latency:g}" / "report"
                    report_dir.mkdir(parents=True)
                    profile = None
                    if args.cprofile is not None and latency == 0:
                        profile = args.cprofile / f"{suites.replace(',', '+')}.prof"
                    run = certify(suites, env, report_dir, profile, chains=True)
                    pairs = verdict_pairs(run.report)
                    if latency == 0:
                        reference[suites] = pairs
                        same = f"{len(pairs)} (rule, status) pairs"
                    elif pairs == reference[suites]:
                        same = f"same {len(pairs)} (rule, status) pairs as at 0 ms"
                    else:
                        differs = True
                        changed = sorted(pairs ^ reference[suites])
                        same = f"DIFFERENT from 0 ms: {changed}"
                    exchanges = unique_exchanges(run.report)
                    alone = max(critical_paths(run.report).values(), key=_seconds, default=Chain(0.0, 0))
                    paths = dependent_paths(run.report, run.chains) if run.chains else {}
                    cp = max(paths.values(), key=_seconds, default=alone)
                    waited = float((run.report.get("throttle") or {}).get("waited_s") or 0.0)
                    per_exchange = run.cpu / len(exchanges) * 1000 if exchanges else 0.0
                    after_fixed = (run.cpu - fixed[suites]) / len(exchanges) * 1000 if exchanges else 0.0
                    row = (
                        f"{suites:<19} {latency:>4g} ms: wall {run.wall:6.2f} s | cp {cp.seconds:6.2f} s"
                        f" ({cp.exchanges} exchanges, wall/cp {run.wall / cp.seconds if cp.seconds else 0:4.1f};"
                        f" checks alone {alone.seconds:.2f} s)"
                        f" | net {_elapsed(exchanges):6.2f} s over {len(exchanges)} exchanges"
                        f" | harness CPU {run.cpu:5.2f} s = {per_exchange:4.1f} ms/exchange,"
                        f" {after_fixed:4.1f} after {fixed[suites]:.2f} s fixed"
                        f" | paced {waited:.1f} s | {run.report['verdict'].get('reason', '')}; {same}"
                    )
                    rows.append(row)
                    print(row, flush=True)
                    if latency == 0 and not args.no_marginal:
                        directory = Path(tmp) / f"{suites}-fleet"
                        found = marginal(suites, base, stack.settings, directory, args.copies, args.instructions)
                        differs = differs or not found.same or found.pairs != pairs
                        rows.append(
                            found.row(suites) + ("" if found.pairs == pairs else ", DIFFERENT from the plain run")
                        )
                        print(rows[-1], flush=True)
                    if latency > 0:
                        floors = ", ".join(f"{n}: {concurrent_floor(run.report, n):.2f} s" for n in CONCURRENCY)
                        print(f"{'':<19} {'':>7}  network floor with N checks at a time: {floors}", flush=True)
    print(cores())
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
