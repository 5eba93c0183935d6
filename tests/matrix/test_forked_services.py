"""The matrix's tool-server stacks fork their Python services from the preloaded fork server (``running_stack``'s
``launcher``): each service is still its own process group with its own log, answers its health check, is seen
when it dies, is stopped with the stack and dies when the process that started the stack is killed. Its forked
processes inherit the memos _preload.warm() filled: a step that silently stopped working (a private API
moved, an image renamed) would only cost time, so test_forked_runs_inherit_the_warmed_memos says when one did."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from conformance.reference.stack import running_stack
from tests.matrix import harness
from tests.matrix.harness import forked_service
from tests.reference.conftest import https_client, pids_alive

ROOT = Path(__file__).resolve().parents[2]


def parent_pid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def wait_gone(pids: list[int], timeout_s: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while pids_alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids_alive(pids)


def test_python_services_are_forked_with_their_own_group_and_log(tmp_path: Path) -> None:
    with running_stack(services=["toolserver"], data_dir=tmp_path, launcher=forked_service) as stack:
        by_name = {p.spec.name: p for p in stack.processes}
        pids = [p.pid for p in stack.processes]
        # The tool server comes from the fork server (not a child of ours); the IdP (node) is started as usual.
        assert parent_pid(by_name["toolserver"].pid) != os.getpid()
        assert parent_pid(by_name["idp"].pid) == os.getpid()
        assert all(os.getpgid(p.pid) == p.pid for p in stack.processes)
        assert len({p.log_file for p in stack.processes}) == 2 and by_name["toolserver"].log_file.is_file()
        with https_client(stack) as client:
            assert client.get(by_name["toolserver"].spec.health_url).status_code == 200
        assert stack.dead() == []
        os.kill(by_name["toolserver"].pid, signal.SIGKILL)
        assert by_name["toolserver"].process.wait(timeout=5) == -signal.SIGKILL
        assert stack.dead() == ["toolserver"]
    assert wait_gone(pids) == []


def test_forked_services_die_with_a_killed_parent(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from conformance.reference.stack import running_stack
        from tests.matrix.harness import forked_service

        if __name__ == "__main__":
            with running_stack(services=["toolserver"], data_dir=Path({str(tmp_path)!r}), launcher=forked_service) as s:
                print(" ".join(str(p.pid) for p in s.processes), flush=True)
                time.sleep(120)
        """
    )
    (tmp_path / "starter.py").write_text(script)
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "starter.py")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert parent.stdout is not None
        pids = [int(x) for x in parent.stdout.readline().split()]
        assert len(pids) == 2 and pids_alive(pids) == pids
        parent.kill()  # no cleanup runs: the fork server sees its parent gone and exits, its children get SIGTERM
        parent.wait(timeout=5)
        assert wait_gone(pids) == []
    finally:
        parent.kill()


def report_memos(conn: Connection) -> None:
    """In a process forked from the fork server: which memos it inherited (never imported elsewhere: importing
    _preload outside the fork server would freeze this process's heap)."""
    import inspect
    import sys

    from hypothesis.internal.conjecture import providers

    from conformance.report import html
    from conformance.suites.compression import images
    from tests.matrix._preload import IMAGES

    memos: dict[str, Any] = {
        "inspect": "conformance.pytest.plugin" in inspect._filesbymodname,  # type: ignore[attr-defined]
        # Not warmed: Hypothesis' pool of constants filled before its plugin loads makes a run warn (_preload).
        "hypothesis": id(sys.modules["conformance.pytest.plugin"]) in providers._seen_modules,
        "images": images.image.cache_info().currsize == len(IMAGES),
        "template": any(key[1] == "report.html.j2" for key, _ in html._environment().cache.items()),  # type: ignore[union-attr]
    }
    conn.send(memos)
    conn.close()


def test_forked_runs_inherit_the_warmed_memos() -> None:
    context = harness.fork_context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=report_memos, args=(sender,), name="memos")
    with harness._lock:
        process.start()
    sender.close()
    try:
        assert receiver.poll(60), "the forked process sent nothing"
        assert receiver.recv() == {"inspect": True, "hypothesis": False, "images": True, "template": True}
    finally:
        process.join(10)
        if process.exitcode is None:
            process.kill()


def report_preloaded(conn: Connection) -> None:
    """In a forked process: whether the fork server had preloaded the project (_preload, and with it the package)."""
    conn.send(
        sorted(name for name in ("tests.matrix._preload", "conformance.suites.auth.test_tokens") if name in sys.modules)
    )
    conn.close()


def test_the_fork_server_preloads_the_project_whatever_the_directory_it_is_started_from(tmp_path: Path) -> None:
    """First used from another working directory (as from a pytester test), the fork server still preloads the
    project; a fresh interpreter, so that this process's fork server is not the one started."""
    script = f"""
        import os, sys
        from tests.matrix import harness
        from tests.matrix.test_forked_services import report_preloaded
        os.chdir({str(tmp_path)!r})
        context = harness.fork_context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=report_preloaded, args=(sender,))
        process.start()
        sender.close()
        print(receiver.recv() if receiver.poll(60) else "nothing sent")
        process.join(10)
        harness.stop_fork_server()
    """
    done = in_a_fresh_interpreter(script)
    assert done.stdout.strip() == "['conformance.suites.auth.test_tokens', 'tests.matrix._preload']", done.stderr[
        -2000:
    ]


def test_compression_engines_are_forked_and_hold_up_no_stop_of_the_fork_server() -> None:
    """The sandboxes served in the matrix's process fork their engines from its fork server (stacks.py): an idle
    engine still serves once the server has stopped, which it did at once; then the pool spawns them again. A fresh
    interpreter, so that this process's pool and fork server are not the ones used."""
    script = """
        import os, time
        from pathlib import Path
        from conformance.reference.compression.workers import shared_pool
        from conformance.suites.compression import images
        from tests.matrix import harness
        from tests.matrix.stacks import keep_engines_for, start_engines_spawned

        def parent(pid):
            return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])

        keep_engines_for(1)
        pool = shared_pool(0)
        engine = pool._take()
        job = {"original": images.image("flat.png")}
        print(parent(engine.process.pid) != os.getpid(), engine.run(job)[0])
        pool._give(engine)
        start_engines_spawned()
        began = time.monotonic()
        harness.stop_fork_server()
        print(time.monotonic() - began < 10)
        kept, spawned = pool._take(), pool._take()
        print(kept is engine, kept.run(job)[0], parent(spawned.process.pid) == os.getpid(), spawned.run(job)[0])
        pool._give(kept)
        pool._give(spawned)
        pool.close()
    """
    done = in_a_fresh_interpreter(script)
    assert done.stdout.split() == ["True", "ok", "True", "True", "ok", "True", "ok"], done.stderr[-2000:]


def in_a_fresh_interpreter(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` (indented as written in a test) run by a new interpreter from the checkout's root: a process whose
    fork server and engine pool are not this one's."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
