"""How many authorization flows a certification of the reference tool server starts, which checks and fixtures start
them, and what one run costs in harness CPU.

    .venv/bin/python benchmarks/auth_flows.py [--runs 3] [--suites auth,profile] [--detail] [--keys]
        [--verdicts FILE] [--mutant NAME]

Starts the tool server and its IdP (as the matrix does), then forks runs of ``--suite auth,profile`` from this
process (the matrix's fork server preloads the same modules first). In each forked run ``Linker.login`` (an
authorization request and a login: one flow at the IdP, approved or declined), ``TokenEndpoint.exchange`` (a code
exchanged) and ``TokenEndpoint.refresh`` (a refresh-token grant) are counted by the check that was running
(``PYTEST_CURRENT_TEST``) and the function of the suites that asked (the innermost frame under
``conformance/suites/`` outside the linking client). A login whose callback carried a code is a whole flow (login,
consent, code); the others stopped at the authorization server's refusal or error response. Prints the totals,
the CPU of a run (``pytest.main`` inside the fork, user + system; median of ``--runs``), the verdicts; with
``--detail`` the flows of each check (and the CPU inside those calls: threads of a fan-out count together), with
``--keys`` each flow's scopes, resource and client; ``--verdicts`` writes the last run's (rule, status) pairs;
``--mutant NAME`` starts the stack with that mutant (A/B of a mutant's verdicts).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SUITES_DIR = str(ROOT / "conformance" / "suites")
PLUMBING = ("_linking.py", "fixtures.py", "_tool_access.py")


def preload() -> None:
    from tests.matrix.harness import PRELOAD

    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # as the fork server, which skips a module that is missing
            importlib.import_module(name)


def asker() -> str:
    """The innermost function of a suite (a check, a suite's conftest or client) on the stack, else the linking
    client's own function that asked."""
    frame = sys._getframe(2)
    fallback = ""
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(SUITES_DIR):
            name = f"{Path(path).name}:{frame.f_code.co_name}"
            if not path.endswith(PLUMBING):
                return name
            fallback = fallback or name
        frame = frame.f_back  # type: ignore[assignment]
    return fallback


def counted(counts: list[dict[str, Any]], module: Any, owner: Any, name: str, kind: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0].rsplit("/", 1)[-1]
        what = kind if kind != "login" else f"login ({kwargs.get('decision', 'approve')})"
        began = time.process_time()
        result = None
        try:
            result = original(*args, **kwargs)
            return result
        finally:
            spent = time.process_time() - began
            if kind == "login" and "code=" in str(getattr(result, "callback_url", None) or ""):
                what += ", code issued"
            request = args[1] if len(args) > 1 and kind in ("login", "exchange") else None
            key = f"{request.scope} {request.resource} {request.client_id[-24:]}" if request is not None else ""
            counts.append({"kind": what, "check": check, "asker": asker(), "cpu": spent, "key": key})

    setattr(owner, name, wrapper)


def forked_run(env: dict[str, str], directory: Path, suites: str) -> dict[str, Any]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the run
        os.close(read)
        try:
            import pytest

            from conformance.host import oauth
            from conformance.suites import _linking

            counts: list[dict[str, Any]] = []
            counted(counts, _linking, _linking.Linker, "login", "login")
            counted(counts, oauth, oauth.TokenEndpoint, "exchange", "exchange")
            counted(counts, oauth, oauth.TokenEndpoint, "refresh", "refresh")
            os.environ.clear()
            os.environ.update(env)
            os.chdir(directory)
            output = os.open(directory / "output.txt", os.O_WRONLY | os.O_CREAT, 0o600)
            os.dup2(output, 1)
            os.dup2(output, 2)
            began = time.process_time()
            options = ["--report-dir", str(directory), "--report-formats", "json", "--suite", suites, "-q"]
            pytest.main(["-p", "no:cacheprovider", "--assert=plain", *options])
            spent = time.process_time() - began
            report = json.loads((directory / "report.json").read_text())
            verdicts = {f"{r['rule']} {r.get('target', '')}": r["status"] for r in report.get("results", [])}
            os.write(write, json.dumps({"cpu": spent, "counts": counts, "verdicts": verdicts}).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        data = answer.read()
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"the forked run in {directory} reported nothing (see its output.txt)")
    result: dict[str, Any] = json.loads(data)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--suites", default="auth,profile")
    parser.add_argument("--detail", action="store_true", help="the flows of each check")
    parser.add_argument("--mutant", action="append", default=[], help="start the stack with this mutant")
    parser.add_argument("--keys", action="store_true", help="each flow's scopes, resource and client")
    parser.add_argument("--verdicts", type=Path, help="write the rules' verdicts of the last run to this file")
    options = parser.parse_args()
    from conformance.reference.stack import running_stack

    preload()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    runs: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_stack(mutants=options.mutant, services=["toolserver"], data_dir=Path(tmp) / "s") as st,
    ):
        env = {**base, **st.settings}
        for run in range(options.runs):
            directory = Path(tmp) / f"run-{run}"
            directory.mkdir()
            runs.append(forked_run(env, directory, options.suites))
    last = runs[-1]
    kinds = collections.Counter(c["kind"] for c in last["counts"])
    in_flows = sum(c["cpu"] for c in last["counts"])
    logins = sum(n for k, n in kinds.items() if k.startswith("login"))
    print(
        f"suites {options.suites}: {logins} authorization flows (logins), "
        + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    )
    print(f"harness CPU inside those calls (last run): {in_flows:.2f} s")
    cpus = [r["cpu"] for r in runs]
    print(f"harness CPU of a run: median {statistics.median(cpus):.2f} s (runs: {', '.join(f'{c:.2f}' for c in cpus)})")
    statuses = collections.Counter(last["verdicts"].values())
    print("verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(statuses.items())))
    if options.verdicts:
        options.verdicts.write_text(json.dumps(last["verdicts"], indent=1, sort_keys=True) + "\n")
    if options.detail:
        by: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
        cpu: dict[tuple[str, str], float] = collections.defaultdict(float)
        for c in last["counts"]:
            by[(c["check"], c["asker"])][c["kind"]] += 1
            cpu[(c["check"], c["asker"])] += c["cpu"]
        for (check, who), n in sorted(by.items()):
            print(
                f"  {check:55s} {who:50s} {cpu[(check, who)] * 1000:5.0f} ms "
                + ", ".join(f"{k} {v}" for k, v in sorted(n.items()))
            )
    if options.keys:
        for c in last["counts"]:
            print(f"  {c['check']:55s} {c['kind']:16s} {c['key']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
