from __future__ import annotations

import json
import multiprocessing.forkserver  # imported with the session, as httpcore below: the fork server (tests/_forked.py)
import multiprocessing.popen_forkserver
import multiprocessing.resource_tracker  # noqa: F401
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpcore  # noqa: F401 - imported with the session, see below
import httpcore2  # noqa: F401 - the same for the MCP SDK's httpx2
import PIL.Image  # noqa: F401 - the same for Pillow's format registry
import pytest

import tests._forked  # noqa: F401 - the same for the fork server's context (tests/matrix/harness.py)

pytest_plugins = ["pytester"]

# pytester gives each test a HOME of its own, and with it an empty per-user cache (conformance/core/_cache.py): each
# inner run that wrote an HTML report compiled the report's template again, and each with a property check rebuilt
# Hypothesis' Unicode tables and its constants of every module of the project. What the cache keeps is keyed by its
# content (a template's source, a Unicode version, a file's digest), as for a user who runs the plugin twice; the
# tests about the cache name a directory of their own. So the session names its cache directory for every process it
# starts, where a test's HOME does not move it.
os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))

# httpx (and httpx2, the MCP SDK's fork) imports httpcore (httpcore2) lazily and caches its exception classes at
# the first request; pytester's in-process runs drop the modules first imported inside them. Were httpcore first
# imported inside one, the next import would be a second copy whose exceptions httpx no longer maps (a refused TLS
# handshake would escape unmapped, in whatever test runs next, e.g. the MCP session's mTLS test after
# tests/pytest/test_plugin.py). Importing both with the session keeps one copy of each, whatever the test order.
# Pillow too:
# the product loads it only when an image is judged, and a second PIL.Image registers no JPEG decoder
# when a plugin module of the first copy stayed (a JPEG of tests/test_corpus.py then does not decode).
# The fork server too: the pytester fixture itself drops, when its test ends, the modules first imported during the
# test. Were multiprocessing's fork server modules and tests/matrix/harness.py first imported by a pytester test's
# forked run, the next such test would start a fork server of its own (a new singleton), preloading everything again
# (seconds of CPU per test) and leaving the previous one idle until the session ends.


# The lowest-versions pass (run.py's lowest_pass, tox's `lowest`) loads this Hypothesis profile: it proves that the
# package works on the floor versions, which a few examples of each property test do (they call the same APIs of the
# same libraries); the input spaces are explored with full budgets by the main pass, on the newest versions, with the
# same tests. No deadline either: the pass runs beside the whole suite, on cores it keeps busy. The tests that name
# their own budget scale it by the profile's (tests/_examples.py).
FLOOR_PROFILE = "floors"
FLOOR_EXAMPLES = 10


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Register the pass's profile before Hypothesis' plugin loads it (only when asked: importing Hypothesis is
    costly, and a session without the profile need not)."""
    if config.getoption("--hypothesis-profile", None) == FLOOR_PROFILE:
        from hypothesis import settings

        settings.register_profile(FLOOR_PROFILE, max_examples=FLOOR_EXAMPLES, deadline=None)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    """One `conformance demo` of every suite against the embedded reference stack, shared by the tests that need a
    real full run (exit code, report directory, console output). As the README runs it, with ``-v`` so that each
    run's output names every check it ran (tests/test_demo.py reads it)."""
    report_dir = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    completed = subprocess.run(
        [sys.executable, "-m", "conformance", "demo", "--report-dir", str(report_dir), "--", "-v"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    return completed.returncode, report_dir, completed.stdout + completed.stderr


# Modules that use an expensive session fixture go to one xdist worker together, so that it is made once per run
# (a session fixture is made once per worker). tests/pytest/test_xdist_scopes.py checks that every user is listed.
SHARED_FIXTURE_SCOPES: dict[str, tuple[str, ...]] = {
    "demo_run": (
        "tests/test_demo.py",
        "tests/report/test_har.py",
        "tests/report/test_html_browser.py",
        "tests/matrix/test_reference.py",
    ),
}
_MODULE_SCOPE = {module: f"fixture-{name}" for name, modules in SHARED_FIXTURE_SCOPES.items() for module in modules}
DURATIONS_FILE = Path(__file__).with_name("durations.json")


def xdist_scope(nodeid: str, groups: dict[str, str]) -> str:
    """The unit of work of ``-n N``: a test module, so that a module's fixtures (a stack, a harness run) are made
    once; the modules sharing an expensive session fixture go together (SHARED_FIXTURE_SCOPES); and the mutant
    matrix's cases (one module) go by their group (tests/matrix/plan.py), so that the workers share its work and each
    group's runs are made by one worker. (xdist's ``loadgroup`` would do this with markers, but under pytest 9 it
    adds no group to the node ids and groups nothing.)"""
    module, _, rest = nodeid.partition("::")
    case = rest.rpartition("[")[2].rstrip("]") if rest.endswith("]") else ""
    if module.endswith("tests/matrix/test_matrix.py"):
        return groups.get(case, module)
    return _MODULE_SCOPE.get(module, module)


def scope_costs(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """Seconds each unit of work took in a recorded run (benchmarks/suite_time.py --record writes the file)."""
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in recorded.items()} if isinstance(recorded, dict) else {}


def longest_first(queue: dict[str, dict[str, bool]], costs: dict[str, float]) -> str:
    """The unit to hand out next: the costliest left (a recorded unit by its seconds, a new one at a second per test),
    so that the run does not end with one worker busy on a long unit and the others idle."""
    return max(queue, key=lambda scope: costs.get(scope, float(len(queue[scope]))))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from conformance.pytest.plugin import SESSION_KEY

    state = config.stash.get(SESSION_KEY, None)
    if config.getvalue("dist") != "load" or (state is not None and state.active):
        return None  # a harness run (e.g. `conformance demo -n 2` from this directory) keeps its own scheduling
    from xdist.scheduler import LoadScopeScheduling

    from tests.matrix.plan import plan

    groups = {case.id: case.group for case in plan()}
    costs = scope_costs()

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid, groups)

        def _assign_work_unit(self, node: Any) -> None:
            if self.workqueue:
                self.workqueue.move_to_end(longest_first(self.workqueue, costs), last=False)
            super()._assign_work_unit(node)

    return Scheduling(config, log)
