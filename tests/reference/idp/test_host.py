"""conformance.reference.idp.host: several IdPs in one Node process (host.js), one Provider instance per stack.

What the mutant matrix relies on when its stacks share a host (tests/matrix/stacks.py): each instance keeps its own
state (store, mutants, the Client class a mutant patches), stopping one leaves the others serving and frees its
port, a start that fails is answered and does not end the host, and the host dies with its parent."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.reference._service import ServiceSpec
from conformance.reference.idp.host import START_FAILED, HostedIdp, HostError, IdpHost
from conformance.reference.idp.scripted import FlowError, ScriptedClient, pkce_pair
from conformance.reference.stack import (
    CERTIFICATE_FILES,
    SelfStoppingHandle,
    Stack,
    StackError,
    make_certificates,
    popen_service,
    running_stack,
)
from tests.reference.conftest import https_client, pids_alive

ROOT = Path(__file__).resolve().parents[3]
SCOPE = "openid email profile tools.read tools.write"


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_certificates(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, certificates: tuple[Path, Path, Path]) -> Iterator[IdpHost]:
    idp_host = IdpHost(certificates[0], tmp_path_factory.mktemp("host") / "host.log")
    try:
        yield idp_host
    finally:
        idp_host.close()


@contextlib.contextmanager
def hosted_idp(host: IdpHost, certificates: tuple[Path, Path, Path], data_dir: Path, *mutants: str) -> Iterator[Stack]:
    with running_stack(
        services=["idp"],
        mutants=mutants,
        data_dir=data_dir,
        certificates=certificates,
        launcher=host.launcher(popen_service),
    ) as stack:
        yield stack


def idp_of(stack: Stack) -> tuple[str, HostedIdp]:
    """(issuer, handle) of a stack's hosted IdP."""
    process = next(p for p in stack.processes if p.spec.name == "idp")
    assert isinstance(process.process, HostedIdp)
    return process.spec.health_url.rsplit("/", 1)[0], process.process


def client_of(stack: Stack) -> ScriptedClient:
    return ScriptedClient(idp_of(stack)[0], str(stack.ca_file))


def exchanges_twice(stack: Stack) -> bool:
    """Whether a code is exchanged a second time (idp-code-reuse) at the stack's IdP."""
    client = client_of(stack)
    try:
        client.register()
        verifier, challenge = pkce_pair()
        s = stack.settings
        code = client.authorize(
            login=s["CONFORMANCE_TEST_USER"],
            password=s["CONFORMANCE_TEST_PASSWORD"],
            resource=None,
            scope=SCOPE,
            challenge=challenge,
        ).params["code"]
        client.exchange(code, verifier, None)
        try:
            client.exchange(code, verifier, None)
        except FlowError:
            return False
        return True
    finally:
        client.close()


def prefix_redirect_accepted(stack: Stack) -> bool:
    """Whether a redirect URI extending the registered one is accepted (idp-redirect-prefix patches the Client)."""
    client = client_of(stack)
    try:
        client.register()
        _, challenge = pkce_pair()
        s = stack.settings
        try:
            client.authorize(
                login=s["CONFORMANCE_TEST_USER"],
                password=s["CONFORMANCE_TEST_PASSWORD"],
                resource=None,
                scope="openid",
                challenge=challenge,
                redirect_uri="https://127.0.0.1:9/callback/elsewhere",
            )
        except FlowError:
            return False
        return True
    finally:
        client.close()


def test_two_instances_keep_their_own_state(
    host: IdpHost, certificates: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A mutant switched on in one instance is off in the other (config, mutants, store and Client class are per
    instance: module-level state in idp.js, or one Client class for both, would fail one of these)."""
    with (
        hosted_idp(host, certificates, tmp_path / "a", "idp-code-reuse", "idp-redirect-prefix") as mutated,
        hosted_idp(host, certificates, tmp_path / "b") as plain,
    ):
        assert idp_of(mutated)[1].pid == idp_of(plain)[1].pid == host.pid  # one Node process serves both
        assert exchanges_twice(mutated) and not exchanges_twice(plain)
        assert prefix_redirect_accepted(mutated) and not prefix_redirect_accepted(plain)
        # A client registered at one is unknown to the other (one store each).
        first, second = client_of(mutated), client_of(plain)
        try:
            client_id = first.register()
            answer = second.http.get(
                second.metadata["authorization_endpoint"],
                params={"client_id": client_id, "response_type": "code", "scope": "openid"},
            )
            assert answer.status_code == 400 and "invalid_client" in answer.text
        finally:
            first.close()
            second.close()


def test_stopping_one_instance_leaves_the_other_serving_and_frees_its_port(
    host: IdpHost, certificates: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    with hosted_idp(host, certificates, tmp_path / "kept") as kept:
        with hosted_idp(host, certificates, tmp_path / "stopped") as stopped:
            origin, handle = idp_of(stopped)
            assert isinstance(handle, SelfStoppingHandle) and handle.poll() is None
            # The given CA is where a stack keeps its certificates (its data directory), as if made for it.
            assert [(stopped.data_dir / name).resolve() for name in CERTIFICATE_FILES] == [
                c.resolve() for c in certificates
            ]
            log_file = next(p.log_file for p in stopped.processes)
        assert handle.wait(timeout=5) == 0
        assert "idp listening on" in log_file.read_text()
        port = int(origin.rsplit(":", 1)[1])
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # closed, not just unanswered
        with https_client(kept) as client:
            assert client.get(idp_of(kept)[0] + "/healthz").status_code == 200
        assert kept.dead() == []
    assert pids_alive([host.pid]) == [host.pid]


def test_a_failed_start_is_answered_and_the_host_keeps_serving(
    host: IdpHost, certificates: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    with hosted_idp(host, certificates, tmp_path / "kept") as kept:
        origin = idp_of(kept)[0]
        # Its port is taken: the start fails with EADDRINUSE in the instance's log (what running_stack retries on).
        args = list(next(s for s in kept.services if s.name == "idp").argv[2:])
        args[args.index("--port") + 1] = origin.rsplit(":", 1)[1]
        taken = host.start(args, tmp_path / "taken.log")
        assert taken.wait(timeout=10) == START_FAILED
        assert "EADDRINUSE" in (tmp_path / "taken.log").read_text() and "EADDRINUSE" in str(taken.error)
        # A config that is not JSON.
        bad_config = tmp_path / "bad.json"
        bad_config.write_text("{not json")
        args[args.index("--config") + 1] = str(bad_config)
        broken = host.start(args, tmp_path / "broken.log")
        assert broken.wait(timeout=10) == START_FAILED and "JSON" in (tmp_path / "broken.log").read_text()

        # The stack's own error path: a failed start is a StackError pointing at the instance's log.
        def on_taken_port(spec: ServiceSpec, env: dict[str, str], log_file: Path) -> HostedIdp:
            return host.start([*spec.argv[2:], "--port", origin.rsplit(":", 1)[1]], log_file)  # the last one wins

        unlucky = running_stack(
            services=["idp"], data_dir=tmp_path / "unlucky", certificates=certificates, launcher=on_taken_port
        )
        with pytest.raises(StackError, match="service idp exited with 1 while starting") as raised, unlucky:
            pass
        assert raised.value.port_taken  # so running_stack tried fresh ports first, as it does for a process
        with https_client(kept) as client:
            assert client.get(origin + "/healthz").status_code == 200


def test_an_instance_ends_when_its_host_dies(certificates: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """The stack sees its IdP die with the host (poll, wait, Stack.dead) and still stops cleanly."""
    own_host = IdpHost(certificates[0], tmp_path / "host.log")
    try:
        with hosted_idp(own_host, certificates, tmp_path / "stack") as stack:
            _, handle = idp_of(stack)
            assert stack.dead() == []
            os.kill(own_host.pid, signal.SIGKILL)
            assert handle.wait(timeout=5) == -signal.SIGKILL
            assert stack.dead() == ["idp"]
        with pytest.raises(HostError, match="has exited"):
            own_host.start([], tmp_path / "late.log")
    finally:
        own_host.close()


def test_the_launcher_refuses_an_idp_of_another_ca(host: IdpHost, tmp_path: Path) -> None:
    """Node reads NODE_EXTRA_CA_CERTS once: a stack with a CA of its own cannot share the host."""
    own_ca = running_stack(services=["idp"], data_dir=tmp_path, launcher=host.launcher(popen_service))
    with pytest.raises(HostError, match="same CA"), own_ca:
        pass


def test_the_host_dies_with_its_parent(certificates: tuple[Path, Path, Path], tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from conformance.reference.idp.host import IdpHost
        host = IdpHost(Path({str(certificates[0])!r}), Path({str(tmp_path / "host.log")!r}))
        print(host.pid, flush=True)
        sys.stdin.read()
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    host_pid = int(parent.stdout.readline())
    assert pids_alive([host_pid]) == [host_pid]
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=5)
    deadline = time.monotonic() + 10
    while pids_alive([host_pid]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_alive([host_pid]) == []


def test_the_command_line_provider_still_serves_alone(certificates: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """provider.js (the product's stacks): one IdP per process, the same log line, stopped by SIGTERM with exit 0."""
    with running_stack(services=["idp"], data_dir=tmp_path, certificates=certificates) as stack:
        process = stack.processes[0]
        assert isinstance(process.process, subprocess.Popen) and not isinstance(process.process, SelfStoppingHandle)
        with https_client(stack) as client:
            assert client.get(process.spec.health_url).status_code == 200
        assert "idp listening on https://127.0.0.1:" in process.log_file.read_text()
    assert process.process.returncode == 0
