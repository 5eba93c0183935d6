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
from tests._serving import serving_on_thread


@dataclass
class LiveSandbox:
    base_url: str
    app: Starlette

    @property
    def settings(self) -> dict[str, str]:
        """Environment for a conformance run against it."""
        return {**run_settings(self.base_url), "CONFORMANCE_ALLOW_INSECURE_LOOPBACK": "true"}


@contextmanager
def serving(
    data_dir: Path, *, mutants: frozenset[str] = frozenset(), settings: SandboxSettings | None = None
) -> Iterator[LiveSandbox]:
    app = create_app(data_dir, settings=settings, mutants=mutants)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="off")
    )
    with serving_on_thread(server, f"platform-sandbox-{port}", timeout=15):
        yield LiveSandbox(f"http://127.0.0.1:{port}", app)
