"""A run started before its reference stack is up (``conformance demo``): its checks wait at the stack's gate
(``core/_stack_gate.py``), and a run whose stack never came up writes nothing.

Registered by the plugin when the run has a gate. Every process that runs checks (the one process of a serial run,
each xdist worker; not an xdist controller, which runs none) waits at the gate before its first check of each
suite, until the services that suite needs are up: its imports and collection overlap the stack's start, and a
suite whose services are up starts while the others' still start. When the gate shuts instead, each check is
skipped at once (no fixture set up, no request sent) and the controller writes no report (not junit.xml either)
and exits as interrupted.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from conformance.core import _stack_gate
from conformance.core.rules import rules_of, suite_of


class StackGate:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.passed: set[str | None] = set()  # the suites whose needs were up
        self.shut: str | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        try:
            return (yield)
        finally:
            if not hasattr(self.config, "workerinput") and _stack_gate.shut_reason() is not None:
                self._drop_junit()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        suite = suite_of(item) if rules_of(item) else None
        if self.shut is None and suite not in self.passed:
            self.shut = _stack_gate.wait(suite)
            if self.shut is None:
                self.passed.add(suite)
        if self.shut is not None:
            pytest.skip(f"conformance: {self.shut}")

    def _drop_junit(self) -> None:
        """junit.xml is written by pytest's own plugin at the session's end: it is unregistered before then."""
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            del self.config.stash[xml_key]
            self.config.pluginmanager.unregister(xml)
