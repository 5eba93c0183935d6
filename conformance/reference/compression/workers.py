"""The engine in worker processes that can be killed.

A request whose client went away must stop costing CPU at once. A thread cannot be stopped, and libvips' kill flag
is checked only while pixels are generated: libimagequant and zlib then run for seconds without a check. A process
can be killed, so every compression runs in one of a few persistent worker processes; a job whose client vanished
kills its worker (a new one is started when needed). Workers are started lazily and die with the server (daemon
processes, and the stack stops the whole process group). In the sandbox's own process (``python -m
conformance.reference.compression``, see :func:`use_fork_server`) they are forked by multiprocessing's
``forkserver`` (safe from a threaded server: the fork server is a single-threaded process of its own), which
imports the engine once (libvips loaded, no thread of its started yet), so that a new worker starts without
importing it again. Elsewhere (an app served inside another program, e.g. a test) they are started with ``spawn``:
a process has one fork server, and an idle worker keeps it alive, which would hold up whoever else in that process
stops it and waits; a program that owns its fork server can have them forked from it (:meth:`EnginePool.start_with`).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import anyio

from . import engine


def serve(conn: Connection) -> None:
    """A worker's loop: one ``engine.optimize(**job)`` per message; the answer is a plain tuple (picklable)."""
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[Any, ...] = ("ok", engine.optimize(**job))
        except engine.ImageError as exc:
            reply = ("image", exc.status, exc.error, exc.message)
        except Exception as exc:
            reply = ("crash", f"{type(exc).__name__}: {exc}")
        conn.send(reply)


Target = Callable[[Connection], None]


class _Worker:
    def __init__(self, context: Any, target: Target) -> None:
        self.conn, child = context.Pipe()
        self.process: BaseProcess = context.Process(target=target, args=(child,), daemon=True, name="engine")
        self.process.start()
        child.close()

    def run(self, job: dict[str, Any]) -> tuple[Any, ...]:
        self.conn.send(job)
        reply: tuple[Any, ...] = self.conn.recv()
        return reply

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


_fork_server: list[bool] = []


def use_fork_server() -> None:
    """Pools made from now on in this process fork their workers from the fork server (the platform permitting).
    For a process that is the sandbox and nothing else: the fork server is the process's only one."""
    _fork_server.append(True)


def _context() -> Any:
    """``forkserver`` with the engine imported before any fork when :func:`use_fork_server` said so and the
    platform has it, else ``spawn``."""
    if not _fork_server or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])  # this module, and the engine it imports
    return context


class EnginePool:
    """At most ``size`` idle workers are kept; callers bound concurrency themselves (the app's limiter)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.killed = 0  # workers killed because their client went away (tests and benchmarks read it)
        self._context = _context()
        self._target: Target = serve
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def start_with(self, context: Any = None, target: Target = serve) -> None:
        """Start the workers still to come with the multiprocessing ``context`` (None: the default above), each
        running ``target`` (which serves by calling :func:`serve`); those already started are kept. For a program
        with a fork server of its own that has imported this module (the test matrix's): a worker forked from it
        starts without importing the engine."""
        with self._lock:
            self._context, self._target = context or _context(), target

    def _take(self) -> _Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
            context, target = self._context, self._target
        return _Worker(context, target)

    def _give(self, worker: _Worker) -> None:
        with self._lock:
            if len(self._idle) < self.size:
                self._idle.append(worker)
                return
        worker.kill()

    async def optimize(self, **job: Any) -> engine.Encoded:
        """``engine.optimize(**job)`` in a worker. Cancelling the caller (the client went away) kills the worker."""
        worker = await anyio.to_thread.run_sync(self._take)
        try:
            reply = await anyio.to_thread.run_sync(worker.run, job, abandon_on_cancel=True)
        except BaseException as exc:  # cancelled, or the worker died: it is never reused
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                self.killed += 1
            worker.kill()
            raise
        self._give(worker)
        if reply[0] == "image":
            raise engine.ImageError(*reply[1:])
        if reply[0] == "crash":
            raise RuntimeError(f"compression engine failed: {reply[1]}")
        result: engine.Encoded = reply[1]
        return result

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


_shared: EnginePool | None = None
_shared_lock = threading.Lock()


def shared_pool(size: int) -> EnginePool:
    """One pool per process, however many apps it serves (tests build many): idle workers are not multiplied."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = EnginePool(size)
        _shared.size = max(_shared.size, size)
        return _shared
