"""What a check costs outside its body: pytest's protocol around it (set-up, call and tear-down hooks, reports,
fixture resolution, marks) and the plugin's (its record, the judging of its reports, the console, the report's
rows), with bodies that do next to nothing, counted in instructions.

    .venv/bin/python benchmarks/check_protocol.py [--checks 100 500] [--fleet K] [--concurrency 1 auto]
        [--root CHECKOUT] [--mix verdicts|passing|failing] [--instructions] [--sample DIR]

Writes a directory of generated checks (each marked with a rule of the auth and profile suites, taking the plugin's
session fixtures ``conformance_settings`` and ``host_http`` and two of the directory's own, one of a session and one
of a function; their bodies pass, note an observation, fail, or say what they need, as the bundled checks' verdicts
do: ``--mix verdicts``, one in ten failing and one in ten skipped; ``passing`` or ``failing``, only those) and
certifies it, a pytest process per count of checks and concurrency, with ``--target-url`` pointing at a closed port
(no check sends a request), after one uncounted run; the generated modules' rewritten bytecode is written once
before (as ``run.py setup`` writes the bundled suites'), so that no counted run rewrites them. Printed per
concurrency: each run's CPU time (or, with ``--instructions``, the instructions cachegrind counts: ``valgrind
--tool=cachegrind --cache-sim=no``, every user-space instruction of the process and its threads) and the difference
of the two runs over the further checks: what one more check costs outside its body, start-up, collection's fixed
part and the report writers' imports cancelled out. With ``--fleet K`` the two runs certify the FEW checks against a
fleet of one named target and of K (a targets file, docs/ci.md "Fleets", every target the same closed port), as
``latency.py --marginal`` compares fleets: the further checks are the same checks once more per target (collected as
parameters, not imported again), and each further target's session fixtures are set up once more. ``--concurrency
auto`` runs the plugin's overlapping loop (each body on a thread of its own), 1 pytest's own loop. ``--root`` runs
another checkout's package (its ``conformance`` first on ``PYTHONPATH``), to compare two commits on the same
generated checks. ``--sample DIR`` samples the main thread's stack at every millisecond of CPU of each run
(``_cpu_sample.py``) and prints, for each concurrency, the functions the further checks' samples fell under
(``latency.py``'s ``sampled_difference``); with ``--concurrency 1`` every check runs on the sampled main thread.
Runs set ``PYTHONHASHSEED=0``; compile the checkout's bytecode first where ``PYTHONDONTWRITEBYTECODE`` is set
(``PYTHONDONTWRITEBYTECODE= .venv/bin/python -m compileall -qq conformance``)."""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RULE_IDS = (
    "AUTH-PRM-01",
    "AUTH-ASM-02",
    "AUTH-TOK-03",
    "AUTH-TOOL-04",
    "AUTH-FLOW-05",
    "PROF-01",
    "PROF-06",
    "PROF-11",
)
URL = "https://127.0.0.1:9/mcp"  # a closed port: no check sends a request
CACHEGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=no")

CONFTEST = """
import pytest


@pytest.fixture(scope="session")
def listing(conformance_settings):
    return {"tools": [{"name": f"tool-{i}"} for i in range(20)]}


@pytest.fixture
def probe(listing, host_http):
    return listing["tools"][0]
"""

CHECK = """

@rule("{rule}")
def test_check_{index}(conformance_settings, listing, probe):
{body}
"""

PASSING = (
    "    assert probe['name']",
    "    observe(f\"{len(listing['tools'])} tools listed\")",
    "    expect(probe['name'] == 'tool-0', 'the first tool')",
    "    observe('seen')\n    expect(len(listing['tools']) == 20, 'twenty tools')",
    "    assert conformance_settings is not None",
    "    observe('an answer')",
    "    expect(True, 'holds')",
    "    assert listing",
)
FAILING = "    fail('the target answered 200 where the rule wants 401')"
NEEDING = "    needs('a second test account', '--second-account')"
# Per mix, the bodies in turn: ``verdicts`` one check in ten fails and one says what it needs.
MIXES = {
    "verdicts": (*PASSING[:4], FAILING, *PASSING[4:], NEEDING),
    "passing": PASSING,
    "failing": (FAILING,),
}


def write_checks(directory: Path, count: int, mix: str) -> None:
    directory.mkdir(parents=True)
    (directory / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    per_file = 50
    for first in range(0, count, per_file):
        parts = ["from conformance import expect, fail, needs, observe, rule\n"]
        bodies = MIXES[mix]
        for index in range(first, min(count, first + per_file)):
            rule = RULE_IDS[index % len(RULE_IDS)]
            parts.append(CHECK.format(rule=rule, index=index, body=bodies[index % len(bodies)]))
        (directory / f"test_checks_{first // per_file:03d}.py").write_text("".join(parts), encoding="utf-8")


def summary_instructions(path: Path) -> int:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise SystemExit(f"no summary in {path}")


def run(
    tmp: Path, count: int, targets: int, concurrency: str, mix: str, root: Path, instructions: bool, sample: Path | None
) -> tuple[float, str]:
    """One certification of ``count`` generated checks, against one target (``targets`` 0) or a fleet of
    ``targets`` named ones: its CPU seconds or instructions, and pytest's last line."""
    checks = tmp / f"checks-{count}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    env |= {"PYTHONHASHSEED": "0", "PYTHONPATH": str(root), "CONFORMANCE_CHECK_BUDGET": "0"}
    if not checks.is_dir():
        write_checks(checks, count, mix)
        # The checks' rewritten bytecode written once, as the bundled suites' is (``run.py setup``): the counted runs
        # read it rather than rewrite and compile every generated module.
        written = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        compiled = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", str(checks)]
        compiled += ["--target-url", URL, "--report-dir", str(tmp / "report-compile")]
        subprocess.run(compiled, cwd=tmp, env=written, capture_output=True, check=True)
    run_name = f"{count}-{targets}-{concurrency}"
    report = tmp / f"report-{run_name}"
    counts = tmp / f"cachegrind-{run_name}.out"
    command = [*CACHEGRIND, f"--cachegrind-out-file={counts}"] if instructions else []
    command += [sys.executable]
    command += [str(HERE / "_cpu_sample.py"), str(sample)] if sample else []
    command += ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rN", str(checks)]
    command += ["--concurrency", concurrency, "--report-dir", str(report)]
    if targets:  # a fleet (docs/ci.md): every named target the same closed port
        fleet = tmp / f"targets-{targets}.toml"
        fleet.write_text("".join(f'[[target]]\nname = "copy{n}"\ntarget_url = "{URL}"\n\n' for n in range(targets)))
        env["CONFORMANCE_TARGETS_FILE"] = str(fleet)
    else:
        command += ["--target-url", URL]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    last = (done.stdout.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    if not re.search(r"\d+ (passed|failed)", last):
        output = f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
        raise SystemExit(f"{run_name}: {last}\n{output}")
    if instructions:
        return float(summary_instructions(counts)), last
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, nargs=2, default=[100, 500], metavar=("FEW", "MANY"))
    parser.add_argument("--fleet", type=int, metavar="K", help="FEW checks against fleets of one and of K targets")
    parser.add_argument("--concurrency", nargs="+", default=["1", "auto"])
    parser.add_argument("--mix", choices=sorted(MIXES), default="verdicts")
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--sample", type=Path)
    args = parser.parse_args()
    few, many = args.checks
    # The two runs: (checks, named targets); the further checks are the second's past the first's.
    runs = [(few, 0), (many, 0)] if args.fleet is None else [(few, 1), (few, args.fleet)]
    further = (many - few) if args.fleet is None else few * (args.fleet - 1)
    unit = "instructions" if args.instructions else "s CPU"
    root = args.root.resolve()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for concurrency in args.concurrency:
            samples: list[Path | None] = [None, None]
            if args.sample:
                args.sample.mkdir(parents=True, exist_ok=True)
                samples = [args.sample / f"{concurrency}-{n}-{k}.json" for n, k in runs]
            # Uncounted: a checkout's first run fills caches the later ones read (jinja2's compiled templates).
            run(tmp, *runs[0], concurrency, args.mix, root, False, None)
            (low, _), (high, line) = (
                run(tmp, n, k, concurrency, args.mix, root, args.instructions, sample)
                for (n, k), sample in zip(runs, samples, strict=True)
            )
            per = (high - low) / further
            shown = f"{per:,.0f} instructions" if args.instructions else f"{per * 1000:.3f} ms CPU"
            described = [f"{n} checks" + (f" x {k} targets" if k else "") for n, k in runs]
            print(
                f"concurrency {concurrency}: {described[0]} {low:,.3f} {unit}, {described[1]} {high:,.3f} {unit}"
                f" ({line}); per further check {shown}",
                flush=True,
            )
            if samples[0] is not None and samples[1] is not None:
                from latency import sampled_difference

                print("\n".join(sampled_difference(samples[0], samples[1], top=60)), flush=True)


if __name__ == "__main__":
    main()
