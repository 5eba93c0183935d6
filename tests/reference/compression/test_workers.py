"""How the compression sandbox starts its engine workers: forked from a fork server in its own process, spawned
anywhere else (a process has one fork server, which an idle worker keeps alive)."""

from __future__ import annotations

import multiprocessing

import pytest

from conformance.reference.compression import workers


def test_an_app_served_inside_another_program_spawns_its_workers() -> None:
    assert workers._context().get_start_method() == "spawn"


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server here")
def test_the_sandboxs_own_process_forks_them_from_a_fork_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "_fork_server", [True])  # what use_fork_server() does, undone after the test
    preloads: list[list[str]] = []  # the process's fork server keeps what other tests preload in it
    monkeypatch.setattr(multiprocessing.get_context("forkserver"), "set_forkserver_preload", preloads.append)
    assert workers._context().get_start_method() == "forkserver"
    assert preloads == [[workers.__name__]]  # the engine is imported once, by the fork server


def test_a_pool_starts_its_further_workers_as_told_and_keeps_those_it_has(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[str, object]] = []

    class Recorded:  # a context that records what it is asked to start, and starts nothing
        def __init__(self, name: str) -> None:
            self.name = name

        def Pipe(self) -> tuple[object, object]:
            return object(), self

        def Process(self, target: object, args: tuple[object, ...], daemon: bool, name: str) -> object:
            started.append((self.name, target))
            return self

        def start(self) -> None:
            pass

        def close(self) -> None:
            pass

    def own_target(conn: object) -> None:
        pass

    pool = workers.EnginePool(2)
    pool.start_with(Recorded("own"), own_target)
    kept = pool._take()
    pool._give(kept)
    assert pool._take() is kept and started == [("own", own_target)]  # an idle worker is reused, not restarted
    monkeypatch.setattr(workers, "_context", lambda: Recorded("default"))
    pool.start_with()
    pool._take()
    assert started == [("own", own_target), ("default", workers.serve)]
