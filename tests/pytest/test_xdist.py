"""Scheduling under pytest-xdist: one worker per target for the bundled suites (conformance/pytest/_xdist.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.pytest._session import SUITES_DIR
from conformance.pytest._xdist import TargetScheduling, make_scheduler, target_scope
from tests._forked import runpytest_forked


def test_bundled_checks_are_grouped_by_target_wherever_the_node_id_is_relative_to() -> None:
    bases = [Path("/nowhere"), SUITES_DIR]
    assert target_scope("auth/test_tokens.py::test_valid_token_is_accepted", bases) == "target:tool_server"
    assert target_scope("profile/test_ids.py::test_x", bases) == "target:tool_server"
    assert target_scope("platform/test_tokens.py::test_string_input_is_counted", bases) == "target:platform"
    assert target_scope("campaigns/test_pagination.py::test_y", bases) == "target:platform"
    assert target_scope("compression/test_counts.py::test_z", bases) == "target:compression"
    # relative to a suite directory given as the argument
    assert target_scope("test_counts.py::test_z", [SUITES_DIR / "compression"]) == "target:compression"


def test_other_checks_are_their_own_unit() -> None:
    assert target_scope("tests/test_mine.py::test_a", [Path.cwd()]) == "tests/test_mine.py::test_a"
    assert target_scope("auth/test_missing.py::test_a", [SUITES_DIR]) == "auth/test_missing.py::test_a"


def _config(dist: str) -> Any:
    return SimpleNamespace(
        getvalue=lambda name: {"dist": dist, "tx": ["popen"] * 2, "numprocesses": 2}.get(name),
        args=[str(SUITES_DIR)],
        rootpath=Path.cwd(),
        option=SimpleNamespace(dist=dist, tx=[], numprocesses=2),
        stash={},  # no conformance session: no fleet
    )


def test_only_the_default_load_distribution_is_replaced() -> None:
    assert make_scheduler(_config("loadfile"), None) is None
    assert make_scheduler(_config("worksteal"), None) is None
    assert isinstance(make_scheduler(_config("load"), None), TargetScheduling)


def test_the_scheduler_does_not_import_the_plugin() -> None:
    """The plugin imports the scheduler (lazily, in its xdist hook); the scheduler never imports back."""
    import ast

    import conformance.pytest._xdist

    tree = ast.parse(Path(conformance.pytest._xdist.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "conformance.pytest.plugin" not in imported and "conformance.pytest._session" in imported


# -- how many workers (pytest_xdist_auto_num_workers, the report header) ----------------------------------------

DEAD = "https://127.0.0.1:1/mcp"


def _auto(pytester: pytest.Pytester, *args: str) -> Any:
    config = pytester.parseconfig("-p", "no:cacheprovider", *args)
    return config.hook.pytest_xdist_auto_num_workers(config=config)


def test_auto_starts_no_more_workers_than_targets(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "8")  # xdist's own count: 8 cores
    assert _auto(pytester, "--target-url", DEAD) == 0  # one target: no worker, the run stays in-process
    assert _auto(pytester, "--target-url", DEAD, "--platform-url", DEAD) == 2
    assert _auto(pytester, "--target-url", DEAD, "--platform-url", DEAD, "--compression-url", DEAD) == 3
    # only the selected suites' targets count
    assert _auto(pytester, "--target-url", DEAD, "--platform-url", DEAD, "--suite", "auth") == 0
    # nothing to certify, or the user's own checks: xdist decides
    assert _auto(pytester) == 8
    pytester.makepyfile(test_mine="def test_a(): pass\n")
    assert _auto(pytester, "--target-url", DEAD, "test_mine.py") == 8


def test_auto_starts_no_more_than_two_workers_per_core(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    three = ("--target-url", DEAD, "--platform-url", DEAD, "--compression-url", DEAD)
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "1")
    assert _auto(pytester, *three) == 2
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    assert _auto(pytester, *three) == 3  # a worker mostly waits on its target: 3 on 2 cores beat 2


# The runs below are forked from the fork server (tests/_forked.py): what is judged is the controller's choice of
# workers and its header; the workers xdist starts are fresh interpreters as in any run.


def test_auto_spawns_one_worker_per_target(pytester: pytest.Pytester) -> None:
    env = {"PYTEST_XDIST_AUTO_NUM_WORKERS": "4"}
    args = ["-p", "no:cacheprovider", "--report-dir", "out", "-n", "auto", "-k", "no_such_check"]
    two = runpytest_forked(pytester, *args, "--target-url", DEAD, "--platform-url", DEAD, env=env)
    two.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    two.stdout.no_fnmatch_line("*conformance: -n *")
    one = runpytest_forked(pytester, *args, "--target-url", DEAD, env=env)
    one.stdout.no_fnmatch_line("*created: *")


def test_explicit_workers_are_capped_to_the_targets(pytester: pytest.Pytester) -> None:
    """-n N is never slower than serial: no more workers than targets, none for one target; the header
    says so. -n N within the targets, or for the user's own checks, is left alone."""

    def run(*args: str) -> pytest.RunResult:
        base = ["-p", "no:cacheprovider", "--report-dir", "out", "-k", "no_such_check"]
        return runpytest_forked(pytester, *base, *args)

    one = run("-n", "3", "--target-url", DEAD)
    one.stdout.fnmatch_lines(["conformance: -n 3 for 1 target(s): running no worker, in this process*"])
    one.stdout.no_fnmatch_line("*created: *")
    two = run("-n", "3", "--target-url", DEAD, "--platform-url", DEAD)
    two.stdout.fnmatch_lines(["conformance: -n 3 for 2 target(s): running 2 workers*", "*created: 2/2 workers*"])
    within = run("-n", "2", "--target-url", DEAD, "--platform-url", DEAD)
    within.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    within.stdout.no_fnmatch_line("*conformance: -n *")
    pytester.makepyfile(test_mine="def test_a(): pass\n")
    mine = run("-n", "2", "--target-url", DEAD, "test_mine.py")
    mine.stdout.fnmatch_lines(["*created: 2/2 workers*"])
