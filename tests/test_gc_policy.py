"""Issue 19: during a certification run the garbage collector leaves alone what collection built (frozen), collects
the youngest generation less often, and is given back as it was when the run ends. Not a timing: the collector's
state as a check sees it, and after the run."""

from __future__ import annotations

import gc
import json

import pytest

from conformance._gc import GEN0_THRESHOLD

DEAD = "https://127.0.0.1:1/mcp"
PROBE = """
import gc, json

def test_probe():
    with open("gc.json", "w") as out:
        json.dump({"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()}, out)
"""


def test_a_run_freezes_what_collection_built_and_restores_the_collector(pytester: pytest.Pytester) -> None:
    before = gc.get_threshold()
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--report-dir", "out", "--target-url", DEAD, "test_probe.py"
    )
    assert result.ret in (0, 1, 5), result.stdout.str()[-2000:]
    seen = json.loads((pytester.path / "gc.json").read_text())
    assert seen["frozen"] > 10_000  # modules, classes, the collected items
    assert seen["threshold"][0] == max(before[0], GEN0_THRESHOLD) and seen["threshold"][1:] == list(before[1:])
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_plain_pytest_run_keeps_the_collector_as_it_is(pytester: pytest.Pytester) -> None:
    """Without a target the plugin is idle: a project's own tests run with their collector untouched."""
    before = gc.get_threshold()
    pytester.makepyfile(test_probe=PROBE)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "test_probe.py")
    seen = json.loads((pytester.path / "gc.json").read_text())
    assert seen == {"frozen": 0, "threshold": list(before)}
