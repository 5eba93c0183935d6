"""The embedded reference stack: every reference service on 127.0.0.1, real HTTPS from one local CA, no orphans.

``running_stack()`` makes a CA (trustme) and one server certificate for 127.0.0.1/localhost, asks each service
package present (``conformance.reference.<package>.services(ctx)``) for its process specs, starts them all at once
(one process group each, killed with the parent on Linux), waits until every health URL answers 2xx (bounded), and
on exit (normal, exception, Ctrl-C, SIGTERM) stops every process group it started. ``Stack.settings`` holds the
NAME=VALUE settings a conformance run against the stack needs.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Protocol, runtime_checkable

# Imports httpx without its command-line client (click, rich's progress and syntax modules) before any module does.
from conformance.core import _httpx_cli  # noqa: F401
from conformance.core._exceptions import ConfigError, ConformanceError
from conformance.core.targets import SERVICE_PACKAGES, SERVICE_REQUIRES
from conformance.reference._service import ServiceSpec, StackContext, present_module
from conformance.reference.mutants import all_mutants

# Any setting whose name says it holds a credential (e.g. ..._SECRET_ACCESS_KEY, ..._PASSWORD_2).
SECRET_NAME = re.compile(r"PASSWORD|SECRET|API_KEY|ADMIN_KEY|TOKEN|ACCESS_KEY")
STOP_GRACE_S = 5.0
PORT_RACE_ATTEMPTS = 3


class StackError(ConformanceError, RuntimeError):
    """The stack could not start (a service exited or never became healthy). The message is one line; ``log`` is
    a copy of the service's log that outlives the stack's temporary directory, ``tail`` its last lines."""

    def __init__(self, message: str, log: Path | None = None, tail: str = "") -> None:
        super().__init__(message + (f"; its log: {log}" if log else ""))
        self.log = log
        self.tail = tail

    @property
    def port_taken(self) -> bool:
        """The service lost the race for the free port it was given (another process bound it first)."""
        tail = self.tail.lower()
        return "address already in use" in tail or "eaddrinuse" in tail


class MissingExtra(ConformanceError):
    """A module of the ``reference`` extra is not installed."""


EXTRA_HINT = "the embedded stack needs the reference extra: pip install 'conformance[reference]'"


def keep_log(source: Path, name: str) -> Path | None:
    """A copy of ``source`` outside the stack's data directory (which is removed when the stack stops)."""
    try:
        fd, kept = tempfile.mkstemp(prefix=f"conformance-{name}-", suffix=".log")
        with os.fdopen(fd, "wb") as handle:
            handle.write(source.read_bytes())
    except OSError:
        return None
    return Path(kept)


class ServiceHandle(Protocol):
    """What the stack needs of a started service process (``subprocess.Popen`` has it): ``poll`` and ``wait`` give
    the exit code (negative: killed by that signal), ``wait`` raises ``subprocess.TimeoutExpired`` on timeout."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


@runtime_checkable
class SelfStoppingHandle(ServiceHandle, Protocol):
    """A service that is not a process group of its own (e.g. one of several servers one process hosts): the stack
    stops it with ``stop_service()`` (ask it to stop, return at once; ``wait`` then says when it has) instead of
    signalling ``pid``'s group, which would take its neighbours along. ``pid`` is the process serving it."""

    def stop_service(self) -> None: ...


# How a service process starts: (spec, its whole environment, its log file) -> a handle. Whatever it does, the
# process must be the leader of its own process group (the stack stops services by group) or the handle a
# SelfStoppingHandle, write its output to the log file, and die when whoever started it dies (no orphans). The
# default, popen_service, runs ``spec.argv``.
Launcher = Callable[[ServiceSpec, dict[str, str], Path], ServiceHandle]


@dataclass
class ServiceProcess:
    spec: ServiceSpec
    process: ServiceHandle
    log_file: Path
    ready_s: float | None = None  # seconds from start until its health URL answered

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass
class Stack:
    settings: dict[str, str]
    ca_file: Path
    services: list[ServiceSpec]
    data_dir: Path
    processes: list[ServiceProcess] = field(default_factory=list)
    mutants: frozenset[str] = frozenset()
    startup_s: float = 0.0

    @property
    def secret_names(self) -> list[str]:
        """Setting names whose values are secrets (print the name, write the value only to an env file): named so,
        or declared secret by their service (e.g. the test accounts' logins)."""
        declared = {name for spec in self.services for name in spec.secrets}
        return sorted(name for name in self.settings if SECRET_NAME.search(name) or name in declared)

    def public_settings(self, also_secret: Iterable[str] = ()) -> dict[str, str]:
        """The settings to print: secrets replaced by a pointer to the env file. ``also_secret`` adds the names the
        caller knows to be secret (the harness's declared secret options: the stack does not import them)."""
        secrets = {*self.secret_names, *also_secret}
        return {k: ("<secret: see env file>" if k in secrets else v) for k, v in self.settings.items()}

    def write_env_file(self, path: Path) -> None:
        """All settings as NAME=VALUE lines, readable by the owner only."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # 0600 from the start when new
        os.fchmod(fd, 0o600)  # and an existing file loses its wider mode before a secret is written
        with os.fdopen(fd, "w") as handle:
            handle.writelines(f"{k}={v}\n" for k, v in sorted(self.settings.items()))

    def dead(self) -> list[str]:
        """Names of services whose process has exited."""
        return [p.spec.name for p in self.processes if p.process.poll() is not None]


CERTIFICATE_FILES = ("ca.pem", "server.pem", "server-key.pem")


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """(CA bundle, server certificate chain, server key) for 127.0.0.1, ::1 and localhost."""
    import trustme

    ca = trustme.CA(organization_name="conformance reference stack")
    cert = ca.issue_cert("127.0.0.1", "localhost", "::1")
    ca_file, cert_file, key_file = (directory / name for name in CERTIFICATE_FILES)
    ca.cert_pem.write_to_path(str(ca_file))
    cert.private_key_pem.write_to_path(str(key_file))
    os.chmod(key_file, 0o600)
    with cert_file.open("wb") as handle:
        for blob in cert.cert_chain_pems:
            handle.write(blob.bytes())
    return ca_file, cert_file, key_file


def link_certificates(certificates: tuple[Path, Path, Path], directory: Path) -> tuple[Path, Path, Path]:
    """Given certificates, also where :func:`make_certificates` would have put them in ``directory`` (symbolic links:
    whoever looks for them in a stack's data directory finds them); returns them unchanged."""
    for source, name in zip(certificates, CERTIFICATE_FILES, strict=True):
        link = directory / name
        link.unlink(missing_ok=True)
        link.symlink_to(source.resolve())
    return certificates


def _select_packages(services: Iterable[str] | None) -> list[str]:
    if services is None:
        return list(SERVICE_PACKAGES)
    wanted = set(services)
    unknown = wanted - set(SERVICE_PACKAGES)
    if unknown:
        raise ValueError(f"unknown service(s) {sorted(unknown)}; known: {', '.join(SERVICE_PACKAGES)}")
    for name in list(wanted):
        wanted.update(SERVICE_REQUIRES[name])
    return [p for p in SERVICE_PACKAGES if p in wanted]


def collect_specs(ctx: StackContext, packages: Iterable[str]) -> list[ServiceSpec]:
    """The specs of every selected package that exists here (others are being written, or not installed)."""
    specs: list[ServiceSpec] = []
    for package in packages:
        try:
            module = present_module(f"conformance.reference.{package}")
        except ModuleNotFoundError as exc:
            if exc.name and not exc.name.startswith("conformance"):
                raise MissingExtra(f"{EXTRA_HINT} (module {exc.name} is missing)") from None
            raise
        factory = getattr(module, "services", None)
        if factory is not None:
            specs.extend(factory(ctx))
    return specs


def _die_with_parent() -> None:
    # Runs in the child before exec: ask Linux to SIGTERM it if the parent dies (no orphans after a crash).
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def popen_service(spec: ServiceSpec, env: dict[str, str], log_file: Path) -> subprocess.Popen[bytes]:
    """The default :data:`Launcher`: ``spec.argv`` as a child process."""
    with log_file.open("wb") as log:
        return subprocess.Popen(
            spec.argv,
            cwd=spec.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: stopping it takes any grandchildren along
            preexec_fn=_die_with_parent,
        )


def start_process(spec: ServiceSpec, log_dir: Path, launcher: Launcher | None = None) -> ServiceProcess:
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / f"{spec.name}.log"
    env = {**os.environ, **spec.env, "PYTHONUNBUFFERED": "1"}
    return ServiceProcess(spec, (launcher or popen_service)(spec, env, log_file), log_file)


def stop_processes(processes: Iterable[ServiceProcess], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM every process group (a SelfStoppingHandle: ask it to stop), wait up to ``grace_s``, then SIGKILL
    what is left."""
    running = list(processes)
    for proc in running:
        if isinstance(proc.process, SelfStoppingHandle):
            proc.process.stop_service()
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in running:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.process.wait(timeout=max(0.0, deadline - time.monotonic()))
    for proc in running:
        if isinstance(proc.process, SelfStoppingHandle):
            continue  # no group of its own: whatever serves it stops it (or dies with its parent)
        # The group may outlive its leader (a grandchild): kill the group whatever the leader did.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.process.wait(timeout=2.0)


def wait_healthy(
    processes: list[ServiceProcess],
    ca_file: Path,
    latency_s: float = 0.0,
    healthy: Callable[[ServiceProcess], None] | None = None,
) -> None:
    """Poll every health URL until each answers 2xx; fail fast when a process exits; bounded per service. A stack
    served with a round-trip time (``latency_s``) answers a new connection's first request twice that late.
    ``healthy`` is told of each service as soon as it is."""
    import httpx  # imported by _httpx_cli: a lookup

    pending = {p.spec.name: p for p in processes}
    started = time.monotonic()
    timeout = 1.0 + 2 * latency_s
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca_file)), timeout=timeout) as client:
        while pending:
            for name, proc in list(pending.items()):
                code = proc.process.poll()
                if code is not None:
                    raise StackError(
                        f"service {name} exited with {code} while starting",
                        keep_log(proc.log_file, name),
                        proc.log_tail(),
                    )
                try:
                    if client.get(proc.spec.health_url).is_success:
                        proc.ready_s = time.monotonic() - started
                        del pending[name]
                        if healthy is not None:
                            healthy(proc)
                        continue
                except httpx.HTTPError:
                    pass
                if time.monotonic() - started > proc.spec.start_timeout_s:
                    raise StackError(
                        f"service {name} not healthy at {proc.spec.health_url} after {proc.spec.start_timeout_s:.0f} s",
                        keep_log(proc.log_file, name),
                        proc.log_tail(),
                    )
            if pending:
                time.sleep(0.05)


@contextmanager
def _terminate_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into SystemExit (main thread only) so that the stack's cleanup runs.

    A caller that installed its own SIGTERM handler (e.g. to stop a wait loop) keeps it.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def run_services(
    specs: Iterable[ServiceSpec],
    ca_file: Path,
    log_dir: Path,
    launcher: Launcher | None = None,
    latency_s: float = 0.0,
    launched: Callable[[], None] | None = None,
    healthy: Callable[[ServiceProcess], None] | None = None,
) -> Iterator[list[ServiceProcess]]:
    """Start the specs (through ``launcher``, default :func:`popen_service`), wait for health, yield the processes;
    stop them all on the way out, whatever happens. ``launched`` is called once every process is started, before
    the wait for health; ``healthy`` with each service as soon as it is healthy.

    ``specs`` may be a generator: each spec starts as soon as it is produced (and a failure while producing the
    next one still stops those already started)."""
    processes: list[ServiceProcess] = []
    with _terminate_on_sigterm():
        try:
            for spec in specs:
                processes.append(start_process(spec, log_dir, launcher))
            if launched is not None:
                launched()
            wait_healthy(processes, ca_file, latency_s, healthy)
            yield processes
        finally:
            stop_processes(processes)


def _start(
    cleanup: contextlib.ExitStack,
    ctx: StackContext,
    packages: list[str],
    launcher: Launcher | None,
    launched: Callable[[dict[str, str]], None] | None,
    packages_up: Callable[[frozenset[str]], None] | None,
) -> tuple[list[ServiceSpec], dict[str, str], list[ServiceProcess]]:
    """The packages' services started and healthy (stopped by ``cleanup``): their specs, settings and processes.
    Each package's services start as soon as they are specified (a package's specs may take a while: the tool
    server's test PKI); the run is told the settings once all are started."""
    for attempt in range(1, PORT_RACE_ATTEMPTS + 1):
        owned: dict[str, list[ServiceSpec]] = {}

        def specified(owned: dict[str, list[ServiceSpec]] = owned) -> Iterator[ServiceSpec]:
            for package in packages:
                owned[package] = collect_specs(ctx, [package])
                yield from owned[package]

        def announce(owned: dict[str, list[ServiceSpec]] = owned) -> None:
            if launched is not None:
                launched(_settings(ctx, [spec for specs in owned.values() for spec in specs]))

        healthy = None if packages_up is None else _PackagesUp(owned, packages_up)
        try:
            services = run_services(
                specified(), ctx.ca_file, ctx.data_dir / "logs", launcher, ctx.latency_s, announce, healthy
            )
            processes = cleanup.enter_context(services)
            specs = [spec for package_specs in owned.values() for spec in package_specs]
            return specs, _settings(ctx, specs), processes
        except StackError as exc:
            # A free port is only free until someone else binds it: start again on fresh ports.
            if attempt == PORT_RACE_ATTEMPTS or not exc.port_taken:
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def _settings(ctx: StackContext, specs: Iterable[ServiceSpec]) -> dict[str, str]:
    """What a run against the stack needs, known as soon as its services are chosen (before they are healthy)."""
    settings = {
        "CONFORMANCE_CA_BUNDLE": str(ctx.ca_file),
        # Everything lives on loopback: let metadata-driven fetches go there.
        "CONFORMANCE_ALLOW_PRIVATE_NETWORK": "true",
        # The host's CIMD publisher serves with the stack's certificate, which the IdP trusts.
        "CONFORMANCE_PUBLISHER_CERTFILE": str(ctx.cert_file),
        "CONFORMANCE_PUBLISHER_KEYFILE": str(ctx.key_file),
    }
    for spec in specs:
        settings.update(spec.settings)
    return settings


class _PackagesUp:
    """Told of each healthy service, tells ``packages_up`` the packages whose every service is healthy (a package
    with no service at all, e.g. the proxy without its mutants, is up at once)."""

    def __init__(self, owned: dict[str, list[ServiceSpec]], packages_up: Callable[[frozenset[str]], None]) -> None:
        self.owned = owned  # filled as the packages are specified, whole before the first service is healthy
        self.waiting: dict[str, set[str]] | None = None
        self.packages_up = packages_up

    def __call__(self, proc: ServiceProcess) -> None:
        if self.waiting is None:
            self.waiting = {package: {spec.name for spec in specs} for package, specs in self.owned.items()}
        for names in self.waiting.values():
            names.discard(proc.spec.name)
        self.packages_up(frozenset(package for package, names in self.waiting.items() if not names))


def _validate_mutants(mutants: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(mutants)
    if not chosen:
        return chosen  # skip importing every package's catalog
    known = all_mutants()
    unknown = sorted(chosen - set(known))
    if unknown:
        raise ConfigError(f"unknown mutant(s) {', '.join(unknown)}; `conformance rules --json` lists them")
    return chosen


@contextmanager
def running_stack(
    *,
    mutants: Iterable[str] = (),
    services: Iterable[str] | None = None,
    data_dir: Path | None = None,
    request_limit: tuple[int, float] | None = None,
    launcher: Launcher | None = None,
    idp_signing_key: Path | None = None,
    certificates: tuple[Path, Path, Path] | None = None,
    mcp_era: str = "both",
    latency_s: float = 0.0,
    launched: Callable[[dict[str, str]], None] | None = None,
    packages_up: Callable[[frozenset[str]], None] | None = None,
) -> Iterator[Stack]:
    """Start the reference stack (optionally with mutants); stop every process on exit.

    ``services`` names service packages (platform, compression, toolserver, idp, proxy); default all present.
    ``request_limit`` (requests, window seconds) starts the sandboxes that limit their request rate (the platform;
    the compression sandbox limits only a monthly count) under that limit, e.g. ``(120, 60.0)``.
    ``data_dir`` keeps certificates, logs and state; default a temporary directory removed afterwards.
    ``launcher`` starts each service process (default :func:`popen_service`: ``spec.argv``); e.g. a test suite
    that starts many stacks may fork its Python services from a process that has already imported them.
    ``idp_signing_key`` (a PEM file of an RSA key) is what the IdP signs with instead of a key of its own made at
    start (a good part of its start-up, benchmarks/idp_start.py): for a test suite that starts many stacks, none of
    which ever sees another's tokens (each checks its own issuer).
    ``certificates`` (CA bundle, server certificate chain, server key, as :func:`make_certificates` writes them) is
    the CA every service uses instead of one made for this stack: for a test suite whose stacks share a process that
    trusts one CA for good (its IdPs in one Node process, which reads NODE_EXTRA_CA_CERTS once).
    ``mcp_era`` is what the tool server serves: ``both`` MCP eras (default), ``legacy`` or ``modern`` only.
    ``latency_s``: each service answers that much later, a new connection's first request twice (``_latency``).
    ``launched`` is given the stack's settings as soon as its processes are started, before they are healthy (a
    run can start meanwhile, holding its first request until the stack is up); when a service loses the race for
    its port the stack starts again on fresh ports, and ``launched`` is called again with the new settings.
    ``packages_up`` is given the service packages whose every service is healthy, each time one more is.
    The children get SIGTERM when the thread that started them ends (Linux parent-death signal): keep the
    ``with`` block in the thread that entered it.
    """
    chosen = _validate_mutants(mutants)
    packages = _select_packages(services)
    with contextlib.ExitStack() as cleanup:
        if data_dir is None:
            data_dir = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="conformance-stack-")))
        data_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        ca_file, cert_file, key_file = (
            make_certificates(data_dir) if certificates is None else link_certificates(certificates, data_dir)
        )
        ctx = StackContext(
            data_dir=data_dir,
            ca_file=ca_file,
            cert_file=cert_file,
            key_file=key_file,
            mutants=chosen,
            request_limit=request_limit,
            idp_signing_key=idp_signing_key,
            mcp_era=mcp_era,
            latency_s=latency_s,
        )
        specs, settings, processes = _start(cleanup, ctx, packages, launcher, launched, packages_up)
        yield Stack(
            settings=settings,
            ca_file=ca_file,
            services=specs,
            data_dir=data_dir,
            processes=processes,
            mutants=chosen,
            startup_s=time.monotonic() - started,
        )
