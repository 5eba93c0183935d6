"""What every reference service tells the stack: how to start it, where it is healthy, what a run needs.

Each service package under ``conformance.reference`` exposes ``services(ctx: StackContext) -> list[ServiceSpec]``.
``conformance.reference.stack`` starts the specs as child processes (one process group each), waits for every
``health_url`` and stops them all on exit. Tests may instead start a service in-process; the spec is the contract.
"""

from __future__ import annotations

import argparse
import importlib
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from conformance.reference._latency import format_latency, parse_latency

if TYPE_CHECKING:
    import asyncio


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class StackContext:
    """Shared by every service of one stack: loopback host, one local CA, a data directory, the mutants."""

    data_dir: Path
    ca_file: Path  # PEM of the local CA (trust this to talk to the stack)
    cert_file: Path  # server certificate chain for 127.0.0.1 and localhost, signed by the CA
    key_file: Path
    host: str = "127.0.0.1"
    mutants: frozenset[str] = frozenset()
    # (requests, window seconds) for the services that limit their request rate (the platform sandbox); None: none
    request_limit: tuple[int, float] | None = None
    # PEM of the RSA key the IdP signs with; None: the IdP makes a fresh one at start (see running_stack)
    idp_signing_key: Path | None = None
    # Seconds every service waits before each answer, and once more on a new connection (a remote target's round
    # trip, see _latency.py); 0: none
    latency_s: float = 0.0
    # Ports already handed to this stack's services: none of them is bound until the services start, so the OS may
    # offer one twice; two services on one port would have one answer the other's health URL (same CA, same path).
    given_ports: set[int] = field(default_factory=set)
    # The MCP eras the tool server serves: both (the SDK's default), legacy (initialize) or modern (2026-07-28) only
    mcp_era: str = "both"

    def port(self) -> int:
        """A free port no other service of this stack was given."""
        while (port := free_port(self.host)) in self.given_ports:
            pass
        self.given_ports.add(port)
        return port

    def latency_args(self) -> list[str]:
        """``--latency SECONDS`` when this stack is served with a round-trip time, else nothing."""
        return ["--latency", format_latency(self.latency_s)] if self.latency_s > 0 else []

    def mutant_args(self, own: Iterable[Any]) -> list[str]:
        """``--mutant NAME`` for each of this stack's mutants among ``own`` (a service's catalogue)."""
        return [arg for name in sorted(self.mutants & {m.name for m in own}) for arg in ("--mutant", name)]


@dataclass
class ServiceSpec:
    """One child process of the stack."""

    name: str
    argv: list[str]  # full command; Python services use [sys.executable, "-m", ...]
    health_url: str  # GET answers 2xx once the service is ready (https, verified with ca_file)
    env: dict[str, str] = field(default_factory=dict)
    # NAME=VALUE settings a conformance run needs for this service (printed by `conformance up`)
    settings: dict[str, str] = field(default_factory=dict)
    # settings whose values are secret although their names do not say so (e.g. a test account's login)
    secrets: frozenset[str] = frozenset()
    cwd: Path | None = None
    start_timeout_s: float = 20.0


def service_argv(module: str, ctx: StackContext, port: int, *extra: str, data_dir: Path | None = None) -> list[str]:
    """The command that starts a Python reference service on ``ctx.host:port`` with the stack's certificate."""
    argv = [sys.executable, "-m", module, *extra, "--host", ctx.host, "--port", str(port), *ctx.latency_args()]
    argv += ["--certfile", str(ctx.cert_file), "--keyfile", str(ctx.key_file)]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    return argv


def service_parser(
    prog: str, mutant_names: Iterable[str] | None = None, *, tls_required: bool = True, description: str | None = None
) -> argparse.ArgumentParser:
    """The arguments every reference service takes: where to listen, its certificate, its data, its mutants."""
    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--certfile", type=Path, required=tls_required)
    parser.add_argument("--keyfile", type=Path, required=tls_required)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--ca-file", help="CA bundle this service trusts for its own outbound requests")
    choices = sorted(mutant_names) if mutant_names is not None else None
    parser.add_argument("--mutant", action="append", default=[], choices=choices, help="switch on one defect")
    add_latency_argument(parser)
    return parser


def _latency_type(text: str) -> float:
    try:
        return parse_latency(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_latency_argument(parser: argparse.ArgumentParser) -> None:
    """``--latency`` (e.g. ``50ms``): answer each request that much later, a new connection's first once more."""
    parser.add_argument(
        "--latency",
        type=_latency_type,
        default=0.0,
        metavar="DURATION",
        help="answer each request that much later, and a new connection's first request once more (e.g. 50ms)",
    )


# How long a reference service keeps an idle keep-alive connection open: longer than a host keeps one in its pool
# (httpx's keep-alive expiry), so that the host, not the service, closes it. A service that closes it at the moment
# the host reuses it drops a request the host may not send again (a POST): a harness's failure, not the rule's.
KEEP_ALIVE_S = 30


def uvicorn_options(args: argparse.Namespace) -> dict[str, Any]:
    """How a Python reference service serves (``uvicorn.run``/``uvicorn.Config`` keywords): on the address of
    :func:`service_parser`'s arguments, over TLS with the stack's certificate, quiet, and quick to stop."""
    return {
        "host": args.host,
        "port": args.port,
        "ssl_certfile": str(args.certfile),
        "ssl_keyfile": str(args.keyfile),
        "log_level": "warning",
        "timeout_graceful_shutdown": 2,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "http": http_protocol(),
    }


def present_module(name: str) -> ModuleType | None:
    """``conformance.reference.<...>`` module ``name``, or None when that part of the reference stack is not in
    this installation (a missing third-party module still raises)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("conformance.reference"):
            return None
        raise


ONE_WRITE_MAX = 64 * 1024  # bytes of a response held back to leave in one write at the end of the loop's turn


class _OneWritePerTurn:
    """An asyncio transport whose writes of one event-loop turn leave as one: uvicorn writes a response's head and
    its body apart, which over TLS are two records and two sends (and two wake-ups of the client) for one small
    answer. Anything else is the transport's own."""

    def __init__(self, transport: Any, loop: Any) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self._size = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        chunk = bytes(data)
        self._pending.append(chunk)
        self._size += len(chunk)
        if self._size >= ONE_WRITE_MAX:  # a large body: no need to wait, nor to hold it twice
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._size = 0
            self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._size = 0
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def http_protocol() -> type[Any] | str:
    """uvicorn's ``http`` option: its httptools protocol writing each response at once (see
    :class:`_OneWritePerTurn`); ``"auto"`` (uvicorn's choice) when httptools is not installed."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return "auto"

    class Protocol(HttpToolsProtocol):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(cast("asyncio.Transport", _OneWritePerTurn(transport, self.loop)))

    return Protocol
