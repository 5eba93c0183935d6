"""During a certification run the garbage collector leaves alone what collection built (frozen), collects
the youngest generation less often, and is given back as it was when the run ends. Not a timing: the collector's
state as a check sees it, and after the run."""

from __future__ import annotations

import gc
import json

import pytest

from conformance.core._gc import GEN0_THRESHOLD

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


LONG_LIVED_PROBE = """
import gc, json, sys, types
from conformance.core import _gc

def test_probe():
    before = gc.get_freeze_count()
    with _gc.long_lived("probe_models"):  # as the first tool listing imports the mcp SDK
        paused = not gc.isenabled()
        sys.modules["probe_models"] = module = types.ModuleType("probe_models")
        module.models = [[i] for i in range(5000)]
    frozen = gc.get_freeze_count() - before
    with _gc.long_lived("probe_models"):  # imported already: nothing to pause or freeze
        again = not gc.isenabled()
    with open("gc.json", "w") as out:
        json.dump({"paused": paused, "frozen": frozen, "again": again, "enabled": gc.isenabled()}, out)
    del sys.modules["probe_models"]
"""


def test_the_first_import_of_the_sdk_is_built_without_collections_and_then_frozen(pytester: pytest.Pytester) -> None:
    """In a run, the models the mcp SDK builds at the first tool listing are not walked by collections while they
    are built, nor afterwards (frozen, as what collection built); the collector is on again after it."""
    pytester.makepyfile(test_probe=LONG_LIVED_PROBE)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--report-dir", "out", "--target-url", DEAD, "test_probe.py"
    )
    assert result.ret in (0, 1, 5), result.stdout.str()[-2000:]
    seen = json.loads((pytester.path / "gc.json").read_text())
    assert seen == {"paused": True, "frozen": seen["frozen"], "again": False, "enabled": True}
    assert seen["frozen"] >= 5000
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_outside_a_run_an_import_leaves_the_collector_alone() -> None:
    from conformance.core import _gc

    before = gc.get_freeze_count()
    with _gc.long_lived("conformance_probe_not_imported"):
        assert gc.isenabled()
    assert gc.get_freeze_count() == before
