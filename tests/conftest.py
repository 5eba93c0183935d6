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


SHARED_SCOPES = ("session", "package", "module")


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """The fixtures of these tests (not of plugins) that ``item`` shares with other tests: made once per process."""
    info = getattr(item, "_fixtureinfo", None)  # pytest's own record of the item's fixture closure
    names: list[str] = []
    for name, defs in info.name2fixturedefs.items() if info else []:
        fixture = defs[-1]
        if fixture.scope in SHARED_SCOPES and getattr(fixture.func, "__module__", "").startswith("tests."):
            names.append(f"{fixture.func.__module__}.{name}")
    return names


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """For ``-n N --dist loadgroup``: tests that share an expensive fixture (a stack, a demo run, a harness run)
    go to one xdist worker, so that it is made once; a test already in a group keeps it. Groups are the connected
    sets of tests linked by such fixtures."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    linked = [(item, _shared_fixtures(item)) for item in items if not item.get_closest_marker("xdist_group")]
    for _, names in linked:
        for name in names[1:]:
            parent[root(name)] = root(names[0])
    for item, names in linked:
        if names:
            item.add_marker(pytest.mark.xdist_group(root(names[0])))
