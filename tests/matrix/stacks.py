"""How a case's stack is started, per target: what the case's harness run needs is the stack's settings.

tool_server: the embedded stack (IdP, tool server, and the proxy for its mutants): the IdP a fresh Provider instance
in the matrix's one warm Node process (conformance.reference.idp.host), the Python services forked from the matrix's
fork server, which has imported them (harness.forked_service). Every stack uses the matrix's one CA (the Node
process trusts one CA for good).
platform: the platform sandbox, served in this process (no interpreter start per case).
compression: the compression sandbox served in this process, wired to object stores shared by every case.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from conformance.reference.idp.host import IdpHost
from conformance.reference.idp.layout import write_private
from conformance.reference.stack import Launcher, Stack, make_certificates, running_stack
from tests.matrix._child import run_engine
from tests.matrix.harness import fork_context, forked_service
from tests.matrix.plan import Case
from tests.reference.compression.stack import Stores, running_stores, serving_sandbox
from tests.reference.platform.live import serving

Settings = dict[str, str]


@dataclass(frozen=True)
class Started:
    """A case's running stack: the settings its harness run gets and, for the tool server, the reference ``Stack``
    (what tests/reference/auth_probe.py observes beside the run, tests/matrix/conftest.py)."""

    settings: Settings
    stack: Stack | None = None


@contextlib.contextmanager
def tool_server_stack(case: Case, data_dir: Path, shared: SharedServices) -> Iterator[Started]:
    services = {"toolserver", *([case.mutant.service] if case.mutant else [])}
    mutants = [case.mutant.name] if case.mutant else []
    with running_stack(
        mutants=mutants,
        services=sorted(services),
        data_dir=data_dir,
        launcher=shared.launcher(),
        idp_signing_key=shared.idp_signing_key(),
        certificates=shared.certificates(),
    ) as stack:
        yield Started(stack.settings, stack)


@contextlib.contextmanager
def platform_stack(case: Case, data_dir: Path, shared: SharedServices) -> Iterator[Started]:
    mutants = frozenset({case.mutant.name}) if case.mutant else frozenset()
    with serving(data_dir, mutants=mutants) as sandbox:
        # Every mutant is caught by an explicit case or the first examples (the properties carry @example cases
        # for that); the reference run keeps the default number to guard against false failures.
        yield Started({**sandbox.settings, **({"CONFORMANCE_HYPOTHESIS_EXAMPLES": "3"} if case.mutant else {})})


@contextlib.contextmanager
def compression_stack(case: Case, data_dir: Path, shared: SharedServices) -> Iterator[Started]:
    mutants = frozenset({case.mutant.name}) if case.mutant else frozenset()
    with serving_sandbox(shared.stores(), data_dir.name, mutants) as sandbox:
        yield Started(sandbox.settings)


Starter = Callable[[Case, Path, "SharedServices"], AbstractContextManager[Started]]
STACKS: dict[str, Starter] = {
    "tool_server": tool_server_stack,
    "platform": platform_stack,
    "compression": compression_stack,
}


class SharedServices:
    """Services several cases share, started on first use and stopped by :meth:`close`; and the key every case's IdP
    signs with (made once: a key of its own is a good part of each IdP's start, benchmarks/idp_start.py). Sharing it
    keeps the cases apart: a stack's tool server trusts only its own IdP's issuer, and no run ever holds another's
    tokens.
    The tool-server stacks' IdPs are Provider instances of one Node process (Node's start and a cold JIT cost each
    IdP CPU a warm process does not spend, benchmarks/idp_host.py); each is still an IdP of its own (own store,
    clients, codes, caches, mutants, port: tests/reference/idp/test_host.py), and every stack uses one CA (made
    once), the one that process trusts. Sharing the CA keeps the cases apart as the key does: each talks to its own
    ports.

    The compression sandboxes of one process share one pool of engine processes (``shared_pool``), which keeps as
    many idle as one sandbox may use at once; with ``in_flight`` cases at a time, a burst of every case's jobs would
    start engine processes only to stop them when the burst ends (and start them again at the next), so the pool
    keeps as many idle as all the cases in flight may use. Each case still gets a sandbox of its own (own database,
    keys, limiter, mutants); an engine process only ever runs ``engine.optimize`` on what one job sends it. The
    engines are forked from the matrix's fork server, which has imported the engine (a spawned one is a fresh
    interpreter importing it); from :meth:`close` on, the pool spawns them again.

    ``prepare`` must run in the thread that will call ``close`` (the children die with the thread that started
    them), so the matrix prepares before handing cases to its worker threads."""

    def __init__(self, root: Path, in_flight: int = 1) -> None:
        self._root = root
        self._in_flight = in_flight
        self._cleanup = contextlib.ExitStack()
        self._stores: Stores | None = None
        self._lock = threading.Lock()
        self._idp_key: Path | None = None
        self._certificates: tuple[Path, Path, Path] | None = None
        self._idp_host: IdpHost | None = None

    def idp_signing_key(self) -> Path:
        with self._lock:
            if self._idp_key is None:
                key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
                pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
                self._root.mkdir(parents=True, exist_ok=True)
                path = self._root / "idp-signing-key.pem"
                write_private(path, pem.decode("ascii"))
                self._idp_key = path
            return self._idp_key

    def certificates(self) -> tuple[Path, Path, Path]:
        """(CA bundle, server certificate chain, server key) of every tool-server stack."""
        with self._lock:
            if self._certificates is None:
                directory = self._root / "ca"
                directory.mkdir(parents=True, exist_ok=True)
                self._certificates = make_certificates(directory)
            return self._certificates

    def launcher(self) -> Launcher:
        """The tool-server stacks' launcher: the IdP into the shared host, the Python services forked."""
        if self._idp_host is None:
            raise RuntimeError("the IdP host was not prepared")
        return self._idp_host.launcher(forked_service)

    def prepare(self, cases: list[Case]) -> None:
        certificates = self.certificates() if any(case.target == "tool_server" for case in cases) else None
        with self._lock:
            if self._stores is None and any(case.target == "compression" for case in cases):
                self._stores = self._cleanup.enter_context(running_stores(self._root / "compression-stores"))
                keep_engines_for(self._in_flight)
            if self._idp_host is None and certificates is not None:
                self._idp_host = IdpHost(certificates[0], self._root / "idp-host.log")
                self._cleanup.callback(self._idp_host.close)

    def idp_host_problems(self) -> str:
        """What the shared IdP host's own log says went wrong outside any one IdP's log (an uncaught exception, an
        unhandled rejection: one IdP's code that failed outside a request), for a case's failure message."""
        if self._idp_host is None:
            return ""
        try:
            text = self._idp_host.log_file.read_text(errors="replace")
        except OSError:
            return ""
        problems = [line for line in text.splitlines() if line.startswith(("uncaught:", "unhandled rejection:"))]
        return "\n".join(problems[-20:])

    def stores(self) -> Stores:
        if self._stores is None:
            raise RuntimeError("compression stores not prepared")
        return self._stores

    def close(self) -> None:
        self._cleanup.close()
        if self._stores is not None:
            start_engines_spawned()


def keep_engines_for(sandboxes: int) -> None:
    """Let this process's pool of compression engines keep idle as many as ``sandboxes`` sandboxes use at once (the
    jobs one sandbox runs at once: its limiter, create_app's ``workers``), and fork those it starts from the
    matrix's fork server (``_child.run_engine``)."""
    # Here, not at import: the sandbox's modules load libvips.
    from conformance.reference.compression.app import create_app
    from conformance.reference.compression.workers import shared_pool

    pool = shared_pool(sandboxes * inspect.signature(create_app).parameters["workers"].default)
    pool.start_with(fork_context(), run_engine)


def start_engines_spawned() -> None:
    """The pool's default again: the matrix's fork server is about to stop."""
    from conformance.reference.compression.workers import shared_pool

    shared_pool(0).start_with()
