"""Issue 19: a certifying run keeps the cyclic collector off what lives to its end (start-up, the collected checks,
the written reports) and gives the collector back to whoever ran pytest in process; the interpreter's exit does
not walk the heap again. Without it, each full collection and the exit rescan the whole heap (0.3-0.45 s of CPU per
platform/campaigns or compression run, measured with benchmarks/harness_cpu.py)."""

from __future__ import annotations

import gc

import pytest

DEAD = "https://127.0.0.1:1/mcp"
CHECK = """
import gc

def test_frozen():
    with open("frozen.txt", "w") as out:
        out.write(str(gc.get_freeze_count()))
"""
AT_EXIT = """
import atexit, gc

def _seen():  # registered before the plugin configures: runs after every atexit handler it adds
    with open("exit.txt", "w") as out:
        out.write(str(gc.get_freeze_count()))

atexit.register(_seen)
"""


def test_a_certifying_run_freezes_its_heap_and_gives_it_back(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gc=CHECK)
    pytester.runpytest("-p", "no:cacheprovider", "--report-dir", "out", "--target-url", DEAD, "test_gc.py")
    assert int((pytester.path / "frozen.txt").read_text()) > 0
    assert gc.get_freeze_count() == 0  # the caller's cycles are collected again


def test_a_run_that_certifies_nothing_leaves_the_collector_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gc=CHECK)
    pytester.runpytest("-p", "no:cacheprovider", "test_gc.py")
    assert (pytester.path / "frozen.txt").read_text() == "0"


def test_the_exit_does_not_walk_the_heap(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(AT_EXIT)
    pytester.makepyfile(test_gc=CHECK)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--report-dir", "out", "--target-url", DEAD, "test_gc.py"
    )
    assert (pytester.path / "exit.txt").exists(), result.stdout.str()[-2000:]
    assert int((pytester.path / "exit.txt").read_text()) > 0
