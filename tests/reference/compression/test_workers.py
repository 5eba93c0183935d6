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
