"""The project's own test modules, two checkouts compared on CPU (the suite is CPU-bound on 2 cores, so a
module's CPU is what it costs the run). Each round runs ``.venv/bin/python -m pytest -p no:cacheprovider -q MODULE``
in each checkout with that checkout's own .venv, alternately, and takes the CPU of the whole process tree (user +
system, this script being the subreaper of everything the run starts: servers, browsers, xdist workers, the fork
server and its forked runs); medians per checkout.

    .venv/bin/python benchmarks/tests_cpu_ab.py BASE_CHECKOUT [--other .] [--rounds 5] [--] MODULE [PYTEST ARGS...]

(after ``--``, pytest options too: ``-- tests/report/test_html_browser.py -k 'not real_full_run'``)

e.g. ``git worktree add /tmp/base <commit>`` and ``python3 run.py setup`` there. Each run starts with a warm-up test
that starts the fork server of tests/_forked.py (``--no-warm-up``: none), as every worker of the suite has one (the
mutant matrix's): a module then pays only its own forked runs, not the server's start-up. Its CPU is in both
checkouts' figures alike.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_time import become_subreaper, reap_orphans

HERE = Path(__file__).resolve().parent
WARM_UP = """
from pathlib import Path

from tests._forked import forked_pytest


def test_warm_up(tmp_path: Path) -> None:
    assert forked_pytest(["--version"], tmp_path).exit_code == 0
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(tree: Path, args: list[str]) -> tuple[float, float, str]:
    """(CPU s, wall s, pytest's last line) of one run in ``tree``; a failed run stops the comparison."""
    before, start = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [str(tree / ".venv" / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    reap_orphans()
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0:
        sys.exit(f"{tree}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return children_cpu() - before, wall, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("modules", nargs="+", help="test modules and pytest arguments")
    parser.add_argument("--other", type=Path, default=HERE.parent)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-warm-up", action="store_true")
    args = parser.parse_args()
    if not become_subreaper():
        sys.exit("cannot become a subreaper: the CPU of re-parented processes would be lost")
    trees = {"base": args.base.resolve(), "other": args.other.resolve()}
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "test_warm_up.py"
        warm.write_text(WARM_UP, encoding="utf-8")
        pytest_args = [*([] if args.no_warm_up else [str(warm)]), *args.modules]
        for round_no in range(1, args.rounds + 1):
            for name, tree in trees.items():
                cpu, wall, last = run_once(tree, pytest_args)
                rows[name].append((cpu, wall))
                print(f"round {round_no} {name:5s} {cpu:6.1f} s CPU {wall:6.1f} s wall  {last}", flush=True)
    medians = {name: [statistics.median(column) for column in zip(*row, strict=True)] for name, row in rows.items()}
    for name, (cpu, wall) in medians.items():
        print(f"median {name:5s} {cpu:6.1f} s CPU {wall:6.1f} s wall  ({trees[name]})")
    saved = medians["base"][0] - medians["other"][0]
    print(f"CPU saved: {saved:.1f} s ({saved / medians['base'][0]:.0%})")


if __name__ == "__main__":
    main()
