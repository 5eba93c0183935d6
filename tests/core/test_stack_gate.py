"""The gate a run started before its stack is up waits at: open, shut, or its opener gone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conformance.core import _stack_gate


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "stack-ready"
    monkeypatch.setenv(_stack_gate.GATE_ENV, _stack_gate.gate_value(os.getpid(), path))
    return path


def test_a_run_without_a_gate_neither_waits_nor_is_kept_from_reporting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_stack_gate.GATE_ENV, raising=False)
    assert _stack_gate.wait(limit_s=0.0) is None
    assert _stack_gate.shut_reason() is None


def test_an_open_gate_lets_the_run_go_on_and_report(gate: Path) -> None:
    assert _stack_gate.shut_reason() == "the reference stack never came up"
    _stack_gate.write(gate, _stack_gate.READY)
    assert _stack_gate.wait(limit_s=0.0) is None
    assert _stack_gate.shut_reason() is None
    assert [p.name for p in gate.parent.iterdir()] == [gate.name]  # written whole: no partial file is left


def test_a_shut_gate_says_why_and_keeps_the_run_from_reporting(gate: Path) -> None:
    _stack_gate.write(gate, "failed: service toolserver exited with 1 while starting")
    assert _stack_gate.wait(limit_s=1.0) == (
        "the reference stack did not come up (failed: service toolserver exited with 1 while starting)"
    )
    assert _stack_gate.shut_reason() == (
        "the reference stack never came up (failed: service toolserver exited with 1 while starting)"
    )


def test_a_gate_whose_opener_is_gone_is_not_waited_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setenv(_stack_gate.GATE_ENV, _stack_gate.gate_value(gone.pid, tmp_path / "stack-ready"))
    assert _stack_gate.wait(limit_s=60.0, poll_s=0.001) == "the process that starts the reference stack is gone"


def test_a_gate_never_written_is_waited_at_only_so_long(gate: Path) -> None:
    assert _stack_gate.wait(limit_s=0.0, poll_s=0.001) == "the reference stack was not up within 0 s"


def test_a_malformed_gate_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_stack_gate.GATE_ENV, "stack-ready")
    assert _stack_gate.wait(limit_s=0.0) == f"{_stack_gate.GATE_ENV} is not PID:PATH"
    assert _stack_gate.shut_reason() == f"{_stack_gate.GATE_ENV} is not PID:PATH"


def test_a_suite_waits_only_for_the_services_it_needs(gate: Path) -> None:
    """The platform's checks start once the platform sandbox is up, while the tool server still imports."""
    _stack_gate.write(gate, _stack_gate.up(frozenset({"platform", "idp"})))
    assert _stack_gate.wait("platform", limit_s=0.0) is None
    assert _stack_gate.wait("campaigns", limit_s=0.0) is None
    assert _stack_gate.wait("auth", limit_s=0.0, poll_s=0.001) == "the reference stack was not up within 0 s"
    assert _stack_gate.wait(None, limit_s=0.0, poll_s=0.001) == "the reference stack was not up within 0 s"
    # Some of the stack up is not the stack up: a run whose stack stopped there has nothing to report.
    assert _stack_gate.shut_reason() == "the reference stack never came up"
    _stack_gate.write(gate, _stack_gate.READY)
    assert _stack_gate.wait("auth", limit_s=0.0) is None


def test_what_each_suite_needs() -> None:
    assert _stack_gate.needs("platform") == _stack_gate.needs("campaigns") == {"platform"}
    assert _stack_gate.needs("compression") == {"compression"}
    # The tool server's suites: the IdP it requires and the proxy a mutant puts in front of that IdP.
    assert _stack_gate.needs("auth") == _stack_gate.needs("profile") == {"toolserver", "idp", "proxy"}
    assert _stack_gate.needs(None) is None and _stack_gate.needs("not-a-suite") is None
