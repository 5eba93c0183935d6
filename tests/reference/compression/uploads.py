"""Uploads that a client abandons, shared by the disconnect test and ``benchmarks/compression_aborts.py``."""

from __future__ import annotations

import base64
import io
import os
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager

from PIL import Image


def noise_png(side: int) -> bytes:
    """A photo-sized PNG of noise: seconds of quantization work, far more than the client waits."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "PNG", compress_level=1)
    return out.getvalue()


@contextmanager
def upload_held_open(port: int, context: ssl.SSLContext, body: bytes, key: str) -> Iterator[ssl.SSLSocket]:
    """Send a whole ``/shrink`` upload over TLS and hold the connection, unanswered, until the block ends; leaving
    the block drops it (the client went away)."""
    auth = base64.b64encode(f"api:{key}".encode()).decode()
    head = (
        f"POST /shrink HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Basic {auth}\r\n"
        f"Content-Type: image/png\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with (
        socket.create_connection(("127.0.0.1", port)) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(head + body)
        yield tls
