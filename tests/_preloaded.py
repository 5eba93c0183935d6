"""Fixtures that import a heavy library in this process before an in-process (pytester) run needs it.

Collecting the suite does not import the ``mcp`` SDK (a costly import every xdist worker would pay before running
anything). A library first imported inside a pytester test is dropped from ``sys.modules``
when the test ends, so each such run would import it again, and a module kept by the product (a package attribute)
could then hold a second copy. Imported by a module-scoped fixture, it is imported once per worker, outside the run.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def mcp_sdk() -> None:
    """The SDK session of the tool-server checks (``conformance.host.mcp_session``: mcp, mcp_types, httpx2)."""
    import conformance.host.mcp_session  # noqa: F401
