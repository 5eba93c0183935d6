from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpcore  # noqa: F401 - imported with the session, see below
import httpcore2  # noqa: F401 - the same for the MCP SDK's httpx2
import pytest

pytest_plugins = ["pytester"]

# httpx (and httpx2, the MCP SDK's fork) imports httpcore (httpcore2) lazily and caches its exception classes at
# the first request; pytester's in-process runs drop the modules first imported inside them. Were httpcore first
# imported inside one, the next import would be a second copy whose exceptions httpx no longer maps (a refused TLS
# handshake would escape unmapped, in whatever test runs next, e.g. the MCP session's mTLS test after
# tests/test_plugin.py). Importing both with the session keeps one copy of each, whatever the test order.


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    """One `conformance demo` of every suite against the embedded reference stack, shared by the tests that need a
    real full run (exit code, report directory, console output)."""
    report_dir = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    completed = subprocess.run(
        [sys.executable, "-m", "conformance", "demo", "--report-dir", str(report_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    return completed.returncode, report_dir, completed.stdout + completed.stderr


def xdist_scope(nodeid: str, groups: dict[str, str]) -> str:
    """The unit of work of ``-n N``: a test module, so that a module's fixtures (a stack, a harness run) are made
    once; but the mutant matrix's cases (one module) go by their group (tests/matrix/plan.py), so that the workers
    share its work and each group's runs are made by one worker. (xdist's ``loadgroup`` would do this with markers,
    but under pytest 9 it adds no group to the node ids and groups nothing.)"""
    module, _, rest = nodeid.partition("::")
    case = rest.rpartition("[")[2].rstrip("]") if rest.endswith("]") else ""
    return groups.get(case, module) if module.endswith("tests/matrix/test_matrix.py") else module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from conformance.plugin import SESSION_KEY

    state = config.stash.get(SESSION_KEY, None)
    if config.getvalue("dist") != "load" or (state is not None and state.active):
        return None  # a harness run (e.g. `conformance demo -n 2` from this directory) keeps its own scheduling
    from xdist.scheduler import LoadScopeScheduling

    from tests.matrix.plan import plan

    groups = {case.id: case.group for case in plan()}

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid, groups)

    return Scheduling(config, log)
