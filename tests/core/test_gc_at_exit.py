"""Once a certifying run has written its reports, what is alive is frozen, so that neither pytest's last
collections nor the interpreter's exit walk the whole heap again (up to a second of wall between pytest's last line
and its exit under load, on the demo's critical path). A caller that runs pytest in process gets its collector back
as it was; a run that certifies nothing is left alone."""

from __future__ import annotations

import gc

import pytest

from tests._checks_run import run_checks

DEAD = "https://127.0.0.1:1/mcp"
CHECK = """
import gc

def test_frozen():
    with open("during.txt", "w") as out:
        out.write(str(gc.get_freeze_count()))
"""
PROBE = """
import gc

def pytest_unconfigure(config):
    with open("after.txt", "w") as out:
        out.write(str(gc.get_freeze_count()))
"""
AT_EXIT = """
import atexit, gc

def _seen():  # registered before the plugin configures: runs after every atexit handler it adds
    with open("exit.txt", "w") as out:
        out.write(str(gc.get_freeze_count()))

atexit.register(_seen)
"""


def counts(pytester: pytest.Pytester, *names: str) -> list[int]:
    return [int((pytester.path / f"{name}.txt").read_text()) for name in names]


def test_what_the_run_built_is_frozen_once_the_reports_are_written(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_gc=CHECK)
    # Forked: a fresh run's heap. In a process that has run other tests, objects frozen with the collection (that
    # process's leftovers among them) may be freed during the run, by more than the run builds.
    run_checks(pytester, "--target-url", DEAD, "test_gc.py", how="forked")
    during, after = counts(pytester, "during", "after")
    assert after > during  # the evidence and the reports, made after any earlier freeze


def test_a_caller_that_runs_pytest_in_process_gets_its_collector_back(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_gc=CHECK)
    run_checks(pytester, "--target-url", DEAD, "test_gc.py")
    during, after = counts(pytester, "during", "after")
    assert during > 0 and after > 0  # the run froze its heap, as above
    assert gc.get_freeze_count() == 0  # the in-process caller's cycles are collected again


def test_a_run_that_certifies_nothing_leaves_the_collector_alone(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_gc=CHECK)
    pytester.runpytest("-p", "no:cacheprovider", "test_gc.py")
    assert counts(pytester, "during", "after") == [0, 0]


def test_the_exit_does_not_walk_the_heap(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(AT_EXIT)  # a subprocess only: the handler must not outlive the run
    pytester.makepyfile(test_gc=CHECK)
    result = run_checks(pytester, "--target-url", DEAD, "test_gc.py", how="subprocess")
    assert (pytester.path / "exit.txt").exists(), result.stdout.str()[-2000:]
    assert counts(pytester, "exit") != [0]
