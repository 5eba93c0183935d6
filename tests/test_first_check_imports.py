"""A tool-server run reaches its first check without loading what only later checks need. The ``mcp``
SDK (a costly import: pydantic models for every protocol version) is loaded by the first check that lists or calls
tools the SDK's way, not by collection; Pillow only by checks that judge an image.

``pytest --collect-only`` of the auth and profile suites imports every module their checks use; the probe plugin
of tests/test_lazy_imports.py lists, at the end, which watched modules were loaded (its controls show that it sees
them when they are).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.test_lazy_imports import UNREACHABLE, probed_run


def test_collecting_the_tool_server_suites_loads_neither_the_sdk_nor_pillow(tmp_path: Path) -> None:
    loaded = probed_run(tmp_path, "--suite", "auth,profile", "--target-url", UNREACHABLE)["loaded"]
    assert "conformance.host.mcp" in loaded  # the raw probes are there: the suites were collected
    assert "mcp" not in loaded


def test_the_raw_probes_and_validators_load_no_sdk_and_no_pillow() -> None:
    code = (
        "import sys, conformance.host.mcp, conformance.suites._tool_access, conformance.judges; "
        "print([m for m in ('mcp', 'mcp_types', 'httpx2', 'PIL', 'conformance.host.mcp_session') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_the_session_is_still_named_where_it_was() -> None:
    """``conformance.host.mcp.McpSession`` (and conformance.host's) is the SDK session, loaded on first use."""
    code = (
        "import sys, conformance.host.mcp as m, conformance.host as h; from conformance.host import mcp_session; "
        "print(m.McpSession is mcp_session.McpSession is h.McpSession, m.ToolListing is mcp_session.ToolListing, "
        "'mcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["True", "True", "True"]
