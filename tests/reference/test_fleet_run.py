"""A fleet of three embedded platform sandboxes — the reference and two mutants — certified in one pytest run with
``-n 3``, and the same three certified one by one (as CI matrix shards) then merged: the same results.

The sandboxes are served in this process (plain HTTP on 127.0.0.1), so the reference's verdict is PASSED LOCALLY
(the loopback form of ACCEPTED: transport not judged), never a failure.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli._main import main
from conformance.reference.mutants import all_mutants
from conformance.report.json_writer import read_report
from conformance.report.summary import md
from tests._forked import forked_harness
from tests.reference.platform.live import serving

MUTANTS = {"reference": None, "no_tools": "tools-not-counted", "counts_unknown_part": "unknown-part-ignored"}
# What is judged here is how a fleet is run, routed, reported and merged, not how many cases each property check
# draws: the property checks draw as few as the mutant matrix's cases do (tests/matrix/stacks.py), which proves these
# two mutants fail with that many.
FEW_EXAMPLES = {"CONFORMANCE_HYPOTHESIS_EXAMPLES": "3"}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """The three sandboxes, their targets file and the environment of a run (each target's keys under its
    prefix)."""
    root = tmp_path_factory.mktemp("fleet")
    env: dict[str, str] = dict(FEW_EXAMPLES)
    entries = []
    with contextlib.ExitStack() as stack:
        for name, mutant in MUTANTS.items():
            sandbox = stack.enter_context(serving(root / name, mutants=frozenset({mutant}) if mutant else frozenset()))
            entries.append(f'[[target]]\nname = "{name}"\nenv_prefix = "FLEET_{name.upper()}_"\n')
            for key, value in sandbox.settings.items():
                if key == "CONFORMANCE_PLATFORM_URL":
                    entries[-1] += f'platform_url = "{value}"\n'
                elif key.endswith("_API_KEY"):  # a secret: under the target's prefix
                    env[f"FLEET_{name.upper()}_" + key.removeprefix("CONFORMANCE_")] = value
                else:
                    env[key] = value  # run-wide (the loopback allowance, the campaigns' ids)
        targets = root / "targets.toml"
        targets.write_text("\n".join(entries), encoding="utf-8")
        yield targets, env


def _pairs(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for result in report["results"]:
        found.setdefault(result["target_name"], {})[result["rule"]] = result["status"]
    return found


def _check_verdicts(report: dict[str, Any]) -> None:
    rows = {row["name"]: row["verdict"]["status"] for row in report["fleet"]}
    assert rows == {"reference": "PASSED LOCALLY", "no_tools": "NOT ACCEPTED", "counts_unknown_part": "NOT ACCEPTED"}, (
        rows
    )
    pairs = _pairs(report)
    assert not [r for r, s in pairs["reference"].items() if s in ("failed", "error")], pairs["reference"]
    for name, mutant_name in MUTANTS.items():
        if mutant_name is None:
            continue
        mutant = all_mutants()[mutant_name]
        failed = {r for r, s in pairs[name].items() if s == "failed"}
        assert mutant.rules <= failed and failed <= mutant.rules | mutant.dependents, (name, failed)
        assert not [r for r, s in pairs[name].items() if s == "error"]
    assert report["verdict"]["status"] == "NOT ACCEPTED"


@pytest.fixture(scope="module")
def fleet_report(fleet: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    targets, env = fleet
    out = tmp_path_factory.mktemp("fleet-run")
    # Forked from the preloaded fork server (tests/_forked.py): the controller's start-up is not what is judged;
    # its three workers are fresh interpreters started by xdist, as in any run.
    result = forked_harness(["--suite", "platform", "--targets-file", str(targets), "-n", "3", "-v"], out, env=env)
    assert result.exit_code == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "3 workers [" in result.stdout, result.stdout[-2000:]
    # each named target's checks ran on one worker, the three on three workers
    workers: dict[str, set[str]] = {}
    for worker, name in re.findall(r"^\[(gw\d+)\].*::\S+\[(\w+)\]\s*$", result.stdout, re.MULTILINE):
        workers.setdefault(name, set()).add(worker)
    assert set(workers) == set(MUTANTS) and all(len(w) == 1 for w in workers.values()), workers
    assert len(set.union(*workers.values())) == 3, workers
    # the row per target in the console, junit.xml and report.html too
    assert "target no_tools: NOT ACCEPTED — 1 rule(s) failed: TOK-04" in result.stdout, result.stdout[-3000:]
    assert "target reference: PASSED LOCALLY" in result.stdout
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="conformance.verdict.counts_unknown_part" value="NOT ACCEPTED" />' in junit
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'class="fleet-table"' in html and "counts_unknown_part" in html
    # every target's keys (read under its prefix) are redacted everywhere
    keys = {value for name, value in env.items() if name.endswith("_API_KEY")}
    assert keys
    for written in [*out.iterdir(), None]:
        text = result.stdout + result.stderr if written is None else written.read_text(encoding="utf-8")
        assert not [k for k in keys if k in text], written
    return result.report


def test_a_fleet_of_three_in_one_run_with_three_workers(fleet_report: dict[str, Any]) -> None:
    _check_verdicts(fleet_report)
    checks = {c for r in fleet_report["results"] for c in r["checks"]}
    for name in MUTANTS:
        assert any(c.endswith(f"[{name}]") for c in checks), name  # test ids carry the target's name
    assert {k.split("/")[0] for k in fleet_report["targets"]} == set(MUTANTS)


def test_three_shards_merged_equal_the_fleet_run(
    fleet: tuple[Path, dict[str, str]],
    fleet_report: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    targets, env = fleet
    shards = []
    for name in MUTANTS:  # one CI matrix job per target: the same targets file, --target-names
        out = tmp_path / name
        out.mkdir()
        args = ["--suite", "platform", "--targets-file", str(targets), "--target-names", name]
        result = forked_harness(args, out, env=env)
        assert [row["name"] for row in result.report["fleet"]] == [name]
        shards.append(str(out / "report.json"))
    merged_path = tmp_path / "fleet.json"
    assert main(["merge", *shards, "-o", str(merged_path), "--html", str(tmp_path / "fleet.html")]) == 0
    capsys.readouterr()
    merged = read_report(merged_path).to_json()
    _check_verdicts(merged)
    assert _pairs(merged) == _pairs(fleet_report)
    assert [row["name"] for row in merged["fleet"]] == list(MUTANTS)
    assert main(["summary", str(merged_path), "--format", "markdown"]) == 0
    summary = capsys.readouterr().out
    for name in MUTANTS:
        assert f"| **{md(name)}** |" in summary


def test_one_target_never_judges_another_targets_responses(tmp_path: Path) -> None:
    """RL-01, RL-04 and RL-05 judge every response their target gave (the rate-limit ledger): in one process, the
    reference's must not see the mutant's broken headers (no xdist here: both targets' checks share the process)."""
    env: dict[str, str] = dict(FEW_EXAMPLES)
    text = ""
    with contextlib.ExitStack() as stack:
        # the mutant first: its responses are in the process before the reference's checks run
        for name, mutants in (("bad_reset", frozenset({"reset-not-duration"})), ("reference", frozenset())):
            sandbox = stack.enter_context(serving(tmp_path / name, mutants=mutants))
            text += f'[[target]]\nname = "{name}"\nplatform_url = "{sandbox.base_url}"\n\n'
            env |= {k: v for k, v in sandbox.settings.items() if not k.endswith(("_API_KEY", "_URL"))}
            env[f"{name.upper()}_PLATFORM_API_KEY"] = sandbox.settings["CONFORMANCE_PLATFORM_API_KEY"]
        (tmp_path / "targets.toml").write_text(text, encoding="utf-8")
        args = ["--suite", "platform", "--targets-file", str(tmp_path / "targets.toml"), "-k", "RL or string_input"]
        result = forked_harness(args, tmp_path / "out", env=env, cwd=tmp_path)
    pairs = _pairs(result.report)
    assert pairs["bad_reset"]["RL-01"] == "failed", pairs["bad_reset"]
    assert pairs["reference"]["RL-01"] == "passed", pairs["reference"]
