"""A socketserver served on a daemon thread that stops at once.

``serve_forever(poll_interval)`` wakes every poll interval to see whether ``shutdown()`` was asked for, so every
stop would wait up to that interval for the loop to notice: the CIMD publisher stops several times per auth
run (the session's, and the second identities some checks publish), the JWKS forge and the compression suite's
image server once each. Here the loop sleeps until a connection or the stop signal arrives (a socket pair), so it
never wakes on a timer and ``stop()`` returns as soon as the loop sees the signal.
"""

from __future__ import annotations

import selectors
import socket
import socketserver
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ServingThread:
    """Serve ``server`` (bound and listening) on a daemon thread until :meth:`stop`; stop closes the server."""

    def __init__(self, server: socketserver.BaseServer, name: str) -> None:
        self.server = server
        # handle_request() after the selector saw the listening socket readable: never block there (a connection
        # that went away before accept() must not hold the loop until the next one).
        server.timeout = 0
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> ServingThread:
        self._thread.start()
        return self

    def _loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.server, selectors.EVENT_READ)  # type: ignore[arg-type]  # has fileno()
            selector.register(self._wake_r, selectors.EVENT_READ)
            while True:
                ready = selector.select()  # no timeout: only a connection or stop() wakes the loop
                if any(key.fileobj is self._wake_r for key, _ in ready):
                    return
                if ready:
                    self.server.handle_request()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, wait for the loop to end (handlers on their own threads finish or die with the process),
        close the server. Idempotent."""
        if self._wake_w.fileno() != -1:
            self._wake_w.send(b"x")
            if self._thread.is_alive():
                self._thread.join(timeout)
            self._wake_w.close()
            self._wake_r.close()
        self.server.server_close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def https_server(
    address: tuple[str, int],
    handler: Callable[..., BaseHTTPRequestHandler],
    context: ssl.SSLContext,
    server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer,
) -> ThreadingHTTPServer:
    """A threading HTTP server (``server_class``) listening on ``address`` over TLS (``context``), not yet serving:
    the handshake is done in each connection's thread, so one client that never completes it stalls nobody. Closed
    if it cannot listen."""
    server = server_class(address, handler, bind_and_activate=False)
    server.daemon_threads = True
    try:
        server.server_bind()
        server.server_activate()
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    except BaseException:
        server.server_close()
        raise
    return server
