"""A pytest plugin for ``benchmarks/tls_handshakes.py``: every TLS handshake of the process (``ssl.SSLSocket`` and
``ssl.SSLObject``, client and server side), with the thread, the harness's frames that led to it and, for a client
connection of an httpcore pool, the pool and its connections at that moment; written as JSON to
``$CONFORMANCE_HANDSHAKES`` when the run ends."""

from __future__ import annotations

import json
import os
import ssl
import sys
import threading
import time
import traceback
from typing import Any

_FOUND: list[dict[str, Any]] = []
_LOCK = threading.Lock()
_STARTED = time.monotonic()


def _frame_name(frame: traceback.FrameSummary) -> str:
    path, inside = frame.filename, "/conformance/"
    shown = "conformance/" + path.rsplit(inside, 1)[1] if inside in path else path.rsplit("/", 1)[-1]
    return f"{shown}:{frame.lineno}:{frame.name}"


def _pool() -> dict[str, Any]:
    """The httpcore connection pool on the stack (the client's), and its connections as it shows them."""
    frame = sys._getframe(3)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if owner is not None and type(owner).__name__ == "ConnectionPool":
            return {"pool": id(owner), "connections": [repr(c) for c in getattr(owner, "_connections", [])]}
        frame = frame.f_back  # type: ignore[assignment]
    return {}


def _counted(cls: type[Any]) -> None:
    handshake = cls.do_handshake

    def do_handshake(self: Any, *args: Any, **kwargs: Any) -> Any:
        frames = [_frame_name(f) for f in traceback.extract_stack()[:-1]]
        try:
            peer = self.getpeername()[1] if hasattr(self, "getpeername") else None
        except OSError:
            peer = None
        found = {
            "at_s": round(time.monotonic() - _STARTED, 3),
            "server": bool(self.server_side),
            "peer_port": peer,
            "thread": threading.current_thread().name,
            "harness": [f for f in frames if f.startswith("conformance/")],
            **_pool(),
        }
        with _LOCK:
            _FOUND.append(found)
        return handshake(self, *args, **kwargs)

    cls.do_handshake = do_handshake


_counted(ssl.SSLSocket)
_counted(ssl.SSLObject)


def pytest_unconfigure(config: Any) -> None:
    out = os.environ.get("CONFORMANCE_HANDSHAKES")
    if out:
        with _LOCK:
            found = list(_FOUND)
        with open(out, "w", encoding="utf-8") as file:
            json.dump(found, file, indent=1)
