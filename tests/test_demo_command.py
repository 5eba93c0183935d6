"""`conformance demo` certifies each kind of target the chosen suites name in a pytest run of its own, all started
with the stack, their output shown whole as each ends and their reports joined (conformance/cli/_demo.py). The
verdicts of such a run are proven by tests/test_demo.py (every rule passed or a need the stack cannot meet)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.cli import _demo
from conformance.cli import _main as cli


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every command the demo runs, with a stand-in stack (no services) and a stand-in run (``true``)."""
    seen: list[list[str]] = []

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0, **callbacks: Any) -> Iterator[Any]:
        settings = {"CONFORMANCE_PLATFORM_URL": "https://127.0.0.1:1"}
        callbacks["launched"](settings)
        yield SimpleNamespace(settings=settings, startup_s=0.0)

    real_popen = subprocess.Popen

    def popen(command: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        seen.append(command)
        return real_popen(["true"], **kwargs)

    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(_demo.subprocess, "Popen", popen)
    return seen


def _suites(command: list[str]) -> str:
    return command[command.index("--suite") + 1]


def test_the_demo_certifies_each_kind_of_target_in_a_run_of_its_own(commands: list[list[str]], tmp_path: Path) -> None:
    assert cli.main(["demo", "--report-dir", str(tmp_path)]) == 0
    assert [_suites(c) for c in commands] == ["auth,profile", "platform,campaigns", "compression"]
    directories = [c[c.index("--report-dir") + 1] for c in commands]
    assert directories == [str(tmp_path / kind) for kind in ("tool_server", "platform", "compression")]
    for command in commands:
        # One target a run: no xdist worker; the formats the join reads, whatever the extra arguments say.
        assert command[command.index("no:xdist") - 1] == "-p"
        assert command[-2:] == ["--report-formats", "json,har"]


def test_the_suites_chosen_choose_the_runs(commands: list[list[str]], tmp_path: Path) -> None:
    assert cli.main(["demo", "--suite", "compression,auth", "--report-dir", str(tmp_path)]) == 0
    assert [_suites(c) for c in commands] == ["auth", "compression"]


def test_an_unknown_suite_is_a_clear_error_before_anything_starts(
    commands: list[list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["demo", "--suite", "auth,bogus", "--report-dir", str(tmp_path)]) == 2
    assert "unknown suite(s) bogus; known: auth, profile" in capsys.readouterr().err
    assert commands == []


@pytest.mark.parametrize(
    "extra", [["-n", "2"], ["--numprocesses=2"], ["-p", "xdist"], ["--dist", "loadscope"]], ids=str
)
def test_workers_asked_for_by_the_caller_are_left_to_xdist(
    commands: list[list[str]], tmp_path: Path, extra: list[str]
) -> None:
    assert cli.main(["demo", "--suite", "compression", "--report-dir", str(tmp_path), "--", *extra]) == 0
    (command,) = commands
    assert "no:xdist" not in command and command[-len(extra) - 2 : -2] == extra


@pytest.mark.parametrize("plugin", ["anyio", "asyncio"])
def test_the_demo_leaves_async_pytest_plugins_out_unless_asked_for(
    commands: list[list[str]], tmp_path: Path, plugin: str
) -> None:
    """No check of ours is an anyio test nor an async one: the demo's processes do not load those plugins
    (start-up CPU, hooks around every check), but extra arguments that name one keep it (tests/test_demo.py proves
    the demo's verdicts unchanged)."""
    assert cli.main(["demo", "--suite", "auth", "--report-dir", str(tmp_path)]) == 0
    assert cli.main(["demo", "--suite", "auth", "--report-dir", str(tmp_path), "--", "-p", plugin]) == 0
    plain, asked = commands
    assert plain[plain.index(f"no:{plugin}") - 1] == "-p"
    assert f"no:{plugin}" not in asked and asked[-4:-2] == ["-p", plugin]


def test_the_demo_serves_the_stack_at_the_latency_asked_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: list[float] = []

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0, **callbacks: Any) -> Iterator[Any]:
        asked.append(latency_s)
        callbacks["launched"]({})
        yield SimpleNamespace(settings={}, startup_s=0.0)

    real_popen = subprocess.Popen
    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(_demo.subprocess, "Popen", lambda command, **kwargs: real_popen(["true"], **kwargs))
    assert cli.main(["demo", "--latency", "50ms", "--report-dir", str(tmp_path)]) == 0
    assert cli.main(["demo", "--report-dir", str(tmp_path)]) == 0
    assert asked == [pytest.approx(0.05), 0.0]


# A stand-in for the demo's pytest run: a controller that starts a worker (its own child, as xdist's are), says
# both process ids and its gate, and waits.
STAND_IN_RUN = """
import os, subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(sys.argv[1], "a") as out:
    out.write(f"{os.getpid()} {worker.pid} {os.environ['CONFORMANCE_STACK_GATE']} "
              f"{os.environ['CONFORMANCE_PLATFORM_URL']}\\n")
time.sleep(120)
"""


def _stand_in_runs(ids_file: Path, count: int, timeout_s: float = 30.0) -> list[list[str]]:
    """The lines the stand-in runs wrote, once ``count`` of them have."""
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        lines = ids_file.read_text().splitlines() if ids_file.exists() else []
        if len(lines) >= count:
            return [line.split() for line in lines]
        time.sleep(0.02)
    raise AssertionError(f"the stand-in run did not start ({ids_file})")


def _gone(pids: list[int]) -> bool:
    """Every process gone (a zombie whose parent has not reaped it yet counts as gone)."""
    import time

    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                alive.append(pid)
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_a_stack_that_never_comes_up_is_a_clear_error_and_stops_the_run_started_meanwhile(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest starts while the stack's services start; when they never come up the demo says why (one line, the
    service's log), exits 2, and the run (its controller and its workers) is killed before it ran a check or wrote a
    report."""
    import sys

    from conformance.reference.stack import StackError

    ids_file = tmp_path / "ids"
    report_dir = tmp_path / "reports"

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0, **callbacks: Any) -> Iterator[Any]:
        callbacks["launched"]({"CONFORMANCE_PLATFORM_URL": "https://127.0.0.1:1"})
        _stand_in_runs(ids_file, 1)  # the run is up (a worker of its own too) while the services still start
        raise StackError("service toolserver not healthy at https://127.0.0.1:2/healthz after 60 s", tmp_path / "log")
        yield  # never reached: the generator must be one

    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(_demo, "command", lambda *_: [sys.executable, "-c", STAND_IN_RUN, str(ids_file)])
    assert cli.main(["demo", "--suite", "platform", "--report-dir", str(report_dir)]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"conformance: service toolserver not healthy at https://127.0.0.1:2/healthz after 60 s; its log: "
        f"{tmp_path / 'log'}"
    ]
    ((controller, worker, gate, _),) = _stand_in_runs(ids_file, 1)
    assert _gone([int(controller), int(worker)])
    assert not report_dir.exists() or list(report_dir.iterdir()) == []
    assert not Path(gate.partition(":")[2]).parent.exists()  # the gate's directory is removed with the demo


def test_a_stack_started_again_on_fresh_ports_starts_the_run_again_on_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A service lost the race for its port: the stack starts again on fresh ports, so the run started on the old
    settings is killed (workers too) and a new one started on the new settings, the one whose exit code counts."""
    import sys

    ids_file = tmp_path / "ids"

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0, **callbacks: Any) -> Iterator[Any]:
        callbacks["launched"]({"CONFORMANCE_PLATFORM_URL": "https://127.0.0.1:1"})
        _stand_in_runs(ids_file, 1)
        callbacks["launched"]({"CONFORMANCE_PLATFORM_URL": "https://127.0.0.1:2"})
        (first, second) = _stand_in_runs(ids_file, 2)
        assert _gone([int(first[0]), int(first[1])])
        os.kill(int(second[0]), signal.SIGTERM)  # the second run ends (its exit code is the demo's)
        yield SimpleNamespace(settings={}, startup_s=0.0)

    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(_demo, "command", lambda *_: [sys.executable, "-c", STAND_IN_RUN, str(ids_file)])
    assert cli.main(["demo", "--suite", "platform", "--report-dir", str(tmp_path / "reports")]) == -signal.SIGTERM
    first, second = _stand_in_runs(ids_file, 2)
    assert [first[3], second[3]] == ["https://127.0.0.1:1", "https://127.0.0.1:2"]
    assert first[2] == second[2]  # the same gate: the second run waits for the same stack
    assert _gone([int(second[1])])  # the worker its controller left behind, stopped with the run's group


# A stand-in for a run that prints three lines, a little apart, named by its suites.
TALKING_RUN = """
import sys, time
for n in range(3):
    print(sys.argv[1], n, flush=True)
    time.sleep(0.05)
"""


def test_each_runs_output_is_shown_whole_as_it_ends(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The runs print at the same time; the demo shows each one's lines together, under a line naming its
    target and exit code, never one run's lines among another's."""
    import sys

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0, **callbacks: Any) -> Iterator[Any]:
        callbacks["launched"]({})
        yield SimpleNamespace(settings={}, startup_s=0.0)

    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(_demo, "command", lambda _dir, suites, _args: [sys.executable, "-c", TALKING_RUN, *suites])
    assert cli.main(["demo", "--suite", "auth,platform,compression", "--report-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    shown = out[out.index("# reference stack up") :].splitlines()  # after the commands (the stand-in's script)
    blocks = [shown[n : n + 4] for n in range(1, len(shown), 4)]  # after the stack's line: a heading, three lines
    assert len(shown) == 13, out
    assert sorted(block[0] for block in blocks) == [
        "# the MCP tool server (auth): exit 0",
        "# the compression sandbox (compression): exit 0",
        "# the platform sandbox (platform): exit 0",
    ]
    for block in blocks:
        suite = block[0].split("(")[1].split(")")[0]
        assert block[1:] == [f"{suite} 0", f"{suite} 1", f"{suite} 2"]


# A stand-in for a run that says when it has started and, told to stop (SIGINT, as Ctrl-C would), says so and ends.
STOPPABLE_RUN = """
import signal, sys, time
def stop(*_):
    print("told to stop", flush=True)
    sys.exit(2)
signal.signal(signal.SIGINT, stop)
open(sys.argv[1], "a").write("started\\n")
time.sleep(120)
"""


def test_an_interrupted_demo_tells_its_runs_and_shows_what_they_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while the runs run: each run is told as it would have been in the foreground, and what it printed
    before it ended is shown (a run writes the report of what it decided meanwhile; the demo joins what was
    written)."""
    import _thread
    import sys
    import threading

    started = tmp_path / "started"

    @contextlib.contextmanager
    def stack(mutants: list[str], suites: str | None = None, latency_s: float = 0.0, **callbacks: Any) -> Iterator[Any]:
        callbacks["launched"]({})
        yield SimpleNamespace(settings={}, startup_s=0.0)

    def interrupt_once_started() -> None:
        _stand_in_runs(started, 2)
        _thread.interrupt_main()  # Ctrl-C, in the demo's main thread

    monkeypatch.setattr(cli, "_stack", stack)
    monkeypatch.setattr(_demo, "command", lambda *_: [sys.executable, "-c", STOPPABLE_RUN, str(started)])
    # Ctrl-C raises KeyboardInterrupt, as in a terminal (an xdist worker ignores SIGINT: interrupt_main would not).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt_once_started, daemon=True).start()
    try:
        code = cli.main(["demo", "--suite", "auth,compression", "--report-dir", str(tmp_path / "reports")])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code == 130
    out = capsys.readouterr().out
    shown = out[out.index("# reference stack up") :].splitlines()[1:]  # after the commands (the stand-in's script)
    assert sorted(shown) == sorted(
        ["# the MCP tool server (auth): exit 2", "# the compression sandbox (compression): exit 2"]
        + ["told to stop"] * 2
    ), out
