"""Test servers on 127.0.0.1 on a thread, always stopped: a plain-HTTP one with a free port (serve_http, serving),
and a uvicorn-style one already configured (serving_on_thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# How often a stdlib server's serve_forever() looks whether shutdown() was called (its default, 0.5 s, is how long
# each stop could wait); a wake-up every 50 ms costs nothing measurable.
POLL_S = 0.05


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` until the block ends; yields the origin ``http://127.0.0.1:PORT``."""
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as origin:
        yield origin


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """Run an already bound plain-HTTP ``server`` (on 127.0.0.1) until the block ends; yields its origin."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


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
