"""A client that goes away: the sandbox stops the work it asked for and does not count it."""

from __future__ import annotations

import io
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from conformance.reference._service import free_port
from conformance.reference.compression import create_app
from conformance.reference.compression.serve import SandboxServer
from conformance.reference.stack import make_certificates
from tests._serving import serving_on_thread
from tests.reference.compression.uploads import noise_png, upload_held_open

KEY = "disconnect-test-key"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, Any]]:
    ca_file, cert_file, key_file = make_certificates(tmp_path)
    port = free_port()
    app = create_app(tmp_path / "data", [KEY])
    server = SandboxServer(app, "127.0.0.1", port, str(cert_file), str(key_file))
    with serving_on_thread(server, f"compression-sandbox-{port}", timeout=30, stop=server.stop):
        yield f"https://127.0.0.1:{port}", ca_file, app.state.sandbox.pool


def _abort_after_upload(base: str, ca_file: Path, body: bytes, wait_s: float) -> None:
    """Send the whole upload, wait a moment (the engine starts), then drop the connection unanswered."""
    port = int(base.rsplit(":", 1)[1])
    context = ssl.create_default_context(cafile=str(ca_file))
    with upload_held_open(port, context, body, KEY) as tls:
        time.sleep(wait_s)
        tls.settimeout(0.01)
        with pytest.raises((TimeoutError, ssl.SSLError)):  # no answer yet: the work is still under way
            assert not tls.recv(1)


def test_an_aborted_large_upload_stops_the_work_and_is_not_counted(served: tuple[str, Path, Any]) -> None:
    base, ca_file, pool = served
    killed = pool.killed
    started = time.monotonic()
    _abort_after_upload(base, ca_file, noise_png(2400), wait_s=0.5)
    # Quantizing this image takes seconds of CPU: the worker doing it is killed as soon as the client is gone.
    while pool.killed == killed and time.monotonic() - started < 30:
        time.sleep(0.02)
    assert pool.killed == killed + 1
    small = io.BytesIO()
    Image.linear_gradient("L").save(small, "PNG")
    verify = ssl.create_default_context(cafile=str(ca_file))
    with httpx.Client(base_url=base, auth=("api", KEY), verify=verify, timeout=30) as client:
        answer = client.post("/shrink", content=small.getvalue())
    assert answer.status_code == 201, answer.text
    assert answer.headers["compression-count"] == "1"  # only this upload: the aborted one cost nothing
    assert pool.killed == killed + 1
