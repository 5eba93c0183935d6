"""Serve the platform sandbox in this process (uvicorn in a thread, plain HTTP on 127.0.0.1, a free port)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from starlette.applications import Starlette

from conformance.reference._service import free_port
from conformance.reference.platform import create_app, run_settings
from conformance.reference.platform.settings import SandboxSettings
from conformance.reference.stack import make_certificates
from tests._serving import serving_on_thread


@dataclass
class LiveSandbox:
    base_url: str
    app: Starlette
    ca_file: Path | None = None  # served over TLS with a certificate of this CA

    @property
    def settings(self) -> dict[str, str]:
        """Environment for a conformance run against it."""
        if self.ca_file is not None:  # as running_stack() gives it
            trust = {"CONFORMANCE_CA_BUNDLE": str(self.ca_file), "CONFORMANCE_ALLOW_PRIVATE_NETWORK": "true"}
            return {**run_settings(self.base_url), **trust}
        return {**run_settings(self.base_url), "CONFORMANCE_ALLOW_INSECURE_LOOPBACK": "true"}


@contextmanager
def serving(
    data_dir: Path,
    *,
    mutants: frozenset[str] = frozenset(),
    settings: SandboxSettings | None = None,
    tls: bool = False,
) -> Iterator[LiveSandbox]:
    """``tls``: over HTTPS with the reference stack's certificates (``make_certificates``, in ``data_dir``), so that
    a run can be ACCEPTED (plain HTTP on loopback is at best PASSED LOCALLY)."""
    app = create_app(data_dir, settings=settings, mutants=mutants)
    port = free_port()
    ca_file, certfile, keyfile = make_certificates(data_dir) if tls else (None, None, None)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ssl_certfile=str(certfile) if certfile else None,
        ssl_keyfile=str(keyfile) if keyfile else None,
    )
    with serving_on_thread(uvicorn.Server(config), f"platform-sandbox-{port}", timeout=15):
        yield LiveSandbox(f"{'https' if tls else 'http'}://127.0.0.1:{port}", app, ca_file)
