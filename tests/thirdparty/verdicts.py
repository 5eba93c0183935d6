"""Pinned verdict tables of the third-party targets: rule → expected status, with the reason for every non-pass.

Filled from runs of the harness; a changed verdict fails the tests (tests/thirdparty/test_*.py).
"""

from __future__ import annotations

from tests.thirdparty._support import Verdict, table

TS_SDK_OAUTH = table({})
TS_SDK_OAUTH_STRICT = table({})
PYSDK_AUDIENCE = table({})
PYSDK_DEFAULT = table({})
FASTMCP_AUDIENCE = table({})
FASTMCP_NO_AUDIENCE = table({})
FASTMCP_PATHLESS = table({})
