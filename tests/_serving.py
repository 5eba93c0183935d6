"""A plain-HTTP test server on 127.0.0.1 with a free port, on a thread, always stopped."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` until the block ends; yields the origin ``http://127.0.0.1:PORT``."""
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as origin:
        yield origin


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """Run an already bound plain-HTTP ``server`` (on 127.0.0.1) until the block ends; yields its origin."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
