"""The bodies of forked processes (see harness.py): a harness run, which imports nothing of the project itself (the
fork server has preloaded it, _preload.py; pytest loads and registers the plugin in every run, as in
``python -m pytest``), a reference service of a case's stack, and a compression engine of the sandboxes served in
the matrix's own process."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


def _take_over(output: str, env: Mapping[str, str], cwd: str | None, *, line_buffered: bool) -> None:
    """Make this forked process the one it runs: both output streams to ``output``, its cwd, exactly ``env``."""
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    buffering = 1 if line_buffered else -1
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", buffering=buffering, closefd=False)  # noqa: SIM115
    sys.stderr = sys.stdout
    if cwd:
        os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)


def run_pytest(args: Sequence[str], env: Mapping[str, str], cwd: str, output: str) -> None:
    """``pytest ARGS`` in this (freshly forked) process: cwd, environment and both output streams are the run's."""
    _take_over(output, env, cwd, line_buffered=False)
    code = 3  # pytest's "internal error", should pytest itself raise
    try:
        import pytest

        code = int(pytest.main(list(args)))
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        os._exit(code)  # skip the fork server's inherited clean-up: this process is only the run


def run_service(module: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None, log: str) -> None:
    """``python -m MODULE ARGS`` in this (freshly forked) process, as the stack's default launcher would run it: its
    own session and process group, output to its log, SIGTERM when its parent (the fork server) dies."""
    os.setsid()
    from multiprocessing import forkserver

    from conformance.reference.stack import _die_with_parent

    # Every process the fork server forks holds the write end of its "alive" pipe, which keeps the server running
    # until all are gone; a service runs until stopped, so it lets go: the server then exits with the process that
    # started it, and the parent-death signal stops the service.
    os.close(forkserver._forkserver._forkserver_alive_fd)  # type: ignore[attr-defined,arg-type]
    _die_with_parent()
    _take_over(log, env, cwd, line_buffered=True)
    sys.argv = [module, *args]
    code = 1
    try:
        import runpy

        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        os._exit(code)


def run_engine(conn: Connection) -> None:
    """A compression engine worker (``workers.serve``) in this (freshly forked) process. It lets go of the fork
    server's "alive" pipe, as a service does: an idle worker would otherwise hold up whoever stops the server. It
    keeps running when the server stops (its pool may still hand it jobs) and ends when its pool's end of ``conn``
    closes."""
    from multiprocessing import forkserver

    from conformance.reference.compression.workers import serve

    os.close(forkserver._forkserver._forkserver_alive_fd)  # type: ignore[attr-defined,arg-type]
    serve(conn)
