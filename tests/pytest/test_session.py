"""The run's state: the report prepared ahead of the serial tail."""

from __future__ import annotations

from types import SimpleNamespace

from conformance.core.rules import IMPLEMENTED, RULES
from conformance.pytest._session import ConformanceSession


def test_the_report_is_prepared_once_in_the_background() -> None:
    """When an xdist controller's first worker is done it imports the selected suites' checks (and the writers)
    while the others finish; a second worker done starts nothing more, and building the report waits for it."""
    state = SimpleNamespace(settings=SimpleNamespace(selected_suites=["compression"]), report_preparation=None)
    ConformanceSession.prepare_report(state)  # type: ignore[arg-type]
    thread = state.report_preparation
    assert thread is not None
    ConformanceSession.prepare_report(state)  # type: ignore[arg-type]
    assert state.report_preparation is thread
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert any(RULES[rule].suite == "compression" for rule in IMPLEMENTED)  # the compression checks registered
