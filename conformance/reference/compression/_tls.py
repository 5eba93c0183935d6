"""The TLS context the sandbox's own clients use (source fetches, objstore_b writes): built once per trust setting.

``ssl.create_default_context()`` loads the system trust store, which is costly, and the sandbox fetches sources and
writes objects many times per run: one context per source fetch and per write would be much of the sandbox's CPU in
the mutant matrix. A context is safe to share between threads and connections once configured, and nothing here
changes it afterwards.
"""

from __future__ import annotations

import functools
import ssl
from pathlib import Path


def client_context(ca_file: str | None) -> ssl.SSLContext:
    """The system's trust plus the CA in ``ca_file`` (the stack's), keyed by that file's content, not its path: a
    stack restarted in the same directory writes a new CA there."""
    return _context(Path(ca_file).read_bytes() if ca_file else None)


@functools.lru_cache(maxsize=8)
def _context(ca_pem: bytes | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_pem is not None:
        context.load_verify_locations(cadata=ca_pem.decode("ascii"))
    return context
