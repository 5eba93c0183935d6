"""Test servers on 127.0.0.1 on a thread, always stopped: a plain-HTTP one with a free port (serve_http, serving),
any socketserver already bound (running), and a uvicorn-style one already configured (serving_on_thread)."""

from __future__ import annotations

import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conformance.host._serving import ServingThread


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` until the block ends; yields the origin ``http://127.0.0.1:PORT``."""
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as origin:
        yield origin


@contextmanager
def serving(server: socketserver.TCPServer) -> Iterator[str]:
    """Run an already bound plain-HTTP ``server`` (on 127.0.0.1) until the block ends, on the harness's own serving
    thread (it stops at once: ``serve_forever`` waits for its next poll); yields its origin."""
    with running(server):
        yield f"http://127.0.0.1:{server.server_address[1]}"


@contextmanager
def running(server: socketserver.BaseServer, name: str = "test-server") -> Iterator[None]:
    """Serve ``server`` (bound and listening) on a :class:`ServingThread` until the block ends, then close it."""
    thread = ServingThread(server, name).start()
    try:
        yield
    finally:
        thread.stop()


@contextmanager
def serving_on_thread(
    server: Any, name: str, *, timeout: float, stop: Callable[[], None] | None = None
) -> Iterator[None]:
    """Run a uvicorn-style ``server`` (``run()``, ``started``; a ``uvicorn.Server`` or the compression sandbox's
    ``SandboxServer``) on a daemon thread until the block ends. Enters once it has started (RuntimeError naming
    ``name`` when its thread dies or ``timeout`` passes first); then ``stop()`` (default: ``should_exit``) and join."""
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start")
            time.sleep(0.02)
        yield
    finally:
        if stop is not None:
            stop()
        else:
            server.should_exit = True
        thread.join(timeout=15)
