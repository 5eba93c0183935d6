"""What a server in this process set on the socket it accepted for a given client: read from the socket itself, found
among the process's open descriptors by its two ends (POSIX; /dev/fd lists them)."""

from __future__ import annotations

import contextlib
import os
import socket
import stat


def accepted_socket_option(server_port: int, client_port: int, level: int, option: int) -> int:
    """``getsockopt(level, option)`` of this process's socket whose local port is ``server_port`` and whose peer's
    port is ``client_port`` (the server's end of that connection); LookupError when no such socket is open.

    Each socket is read through a duplicate of its descriptor, closed before the next: a duplicate left open would
    keep the other end of a pipe or socket from ever seeing it closed (a fork server waiting for EOF, say)."""
    for name in os.listdir("/dev/fd"):
        with contextlib.suppress(OSError, ValueError):
            fd = int(name)
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            duplicate = os.dup(fd)
            try:
                sock = socket.socket(fileno=duplicate)
            except OSError:
                os.close(duplicate)
                continue
            with sock:
                if sock.family not in (socket.AF_INET, socket.AF_INET6):  # a Unix socket has no port (socketpairs)
                    continue
                if sock.getsockname()[1] == server_port and sock.getpeername()[1] == client_port:
                    return sock.getsockopt(level, option)
    raise LookupError(f"no socket of this process connects port {server_port} to client port {client_port}")
