"""`conformance demo` certifies its targets side by side (`-n auto`: one xdist worker per target kind, no
more than 2 per core, none when only one target could work), unless its extra pytest arguments choose the workers
or turn xdist off. The verdicts of such a run are proven the same by tests/test_demo.py (every rule passed or a
need the stack cannot meet, each target's checks on one worker)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.cli import _main as cli


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every command the demo runs, with a stand-in stack (no services) and no process started."""
    seen: list[list[str]] = []

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0) -> Iterator[Any]:
        yield SimpleNamespace(settings={"CONFORMANCE_PLATFORM_URL": "https://127.0.0.1:1"})

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(cli.subprocess, "run", run)
    return seen


def test_the_demo_certifies_its_targets_side_by_side(commands: list[list[str]], tmp_path: Path) -> None:
    assert cli.main(["demo", "--report-dir", str(tmp_path)]) == 0
    (command,) = commands
    assert command[command.index("-n") + 1] == "auto"


@pytest.mark.parametrize(
    "extra", [["-n", "0"], ["-n3"], ["--numprocesses=2"], ["-p", "no:xdist"], ["--dist", "loadscope"]], ids=str
)
def test_workers_chosen_by_the_caller_are_kept(commands: list[list[str]], tmp_path: Path, extra: list[str]) -> None:
    assert cli.main(["demo", "--report-dir", str(tmp_path), "--", *extra]) == 0
    (command,) = commands
    assert "auto" not in command and command[-len(extra) :] == extra


def test_the_demo_leaves_anyios_pytest_plugin_out_unless_asked_for(commands: list[list[str]], tmp_path: Path) -> None:
    """No check of ours is an anyio test: the demo's processes do not load its plugin (start-up CPU), but
    extra arguments that name it keep it (tests/test_demo.py proves the demo's verdicts unchanged)."""
    assert cli.main(["demo", "--report-dir", str(tmp_path)]) == 0
    assert cli.main(["demo", "--report-dir", str(tmp_path), "--", "-p", "anyio"]) == 0
    plain, asked = commands
    assert plain[plain.index("no:anyio") - 1] == "-p"
    assert "no:anyio" not in asked and asked[-2:] == ["-p", "anyio"]


def test_the_demo_serves_the_stack_at_the_latency_asked_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: list[float] = []

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0) -> Iterator[Any]:
        asked.append(latency_s)
        yield SimpleNamespace(settings={})

    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(cli.subprocess, "run", lambda command, **_: subprocess.CompletedProcess(command, 0))
    assert cli.main(["demo", "--latency", "50ms", "--report-dir", str(tmp_path)]) == 0
    assert cli.main(["demo", "--report-dir", str(tmp_path)]) == 0
    assert asked == [pytest.approx(0.05), 0.0]
