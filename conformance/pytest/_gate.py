"""A run started before its reference stack is up (``conformance demo``): its checks wait at the stack's gate
(``core/_stack_gate.py``), and a run whose stack never came up writes nothing.

Registered by the plugin when the run has a gate. Every process that runs checks (the one process of a serial run,
each xdist worker; not an xdist controller, which runs none) waits at the gate before its first check of each
suite, until the services that suite needs are up: its imports and collection overlap the stack's start, and a
suite whose services are up starts while the others' still start. When the gate shuts instead, each check is
skipped at once (no fixture set up, no request sent) and the controller writes no report (and removes the junit.xml
pytest wrote) and exits as interrupted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core import _stack_gate
from conformance.pytest import _marks


class StackGate:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.passed: set[str | None] = set()  # the suites whose needs were up
        self.shut: str | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        suite = _marks.of(item).suite
        if self.shut is None and suite not in self.passed:
            self.shut = _stack_gate.wait(suite)
            if self.shut is None:
                self.passed.add(suite)
        if self.shut is not None:
            pytest.skip(f"conformance: {self.shut}")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The controller of a run whose stack never came up: pytest's own junit.xml, just written, is removed
        (the plugin writes no other report then)."""
        if hasattr(self.config, "workerinput") or _stack_gate.shut_reason() is None:
            return
        xmlpath = getattr(self.config.option, "xmlpath", None)
        if xmlpath:
            Path(xmlpath).unlink(missing_ok=True)
