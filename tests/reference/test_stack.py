"""The stack starts, is healthy, and leaves no process behind: on exit, after a child crash, on start-up failure,
and when its parent is killed."""

from __future__ import annotations

import base64
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from conformance.config import all_options
from conformance.core._exceptions import ConfigError
from conformance.reference._service import ServiceSpec
from conformance.reference.stack import StackError, make_certificates, run_services, running_stack
from tests.reference.conftest import https_client, pids_alive


def _wait_gone(pids: list[int], timeout_s: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while pids_alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids_alive(pids)


def test_stack_is_healthy_and_stops_every_process(tmp_path: Path) -> None:
    up: list[frozenset[str]] = []  # the packages up, told as each service becomes healthy
    with running_stack(services=["toolserver"], data_dir=tmp_path, packages_up=up.append) as stack:
        pids = [p.pid for p in stack.processes]
        assert {s.name for s in stack.services} == {"idp", "toolserver"}
        assert len(up) == 2 and up[0] < up[1] == {"idp", "toolserver"}
        with https_client(stack) as client:
            for spec in stack.services:
                assert client.get(spec.health_url).status_code == 200, spec.name
        assert stack.settings["CONFORMANCE_TARGET_URL"].startswith("https://127.0.0.1:")
        assert Path(stack.settings["CONFORMANCE_CA_BUNDLE"]) == stack.ca_file
        assert {"CONFORMANCE_TEST_PASSWORD", "CONFORMANCE_TEST_PASSWORD_2"} <= set(stack.secret_names)
        # Every setting the harness declares secret is hidden by the stack too (it cannot import the declarations).
        declared = {o.env_var for o in all_options() if o.secret} & set(stack.settings)
        assert {"CONFORMANCE_TEST_USER", "CONFORMANCE_TEST_USER_2"} <= declared <= set(stack.secret_names)
        assert stack.public_settings()["CONFORMANCE_TEST_PASSWORD"] != stack.settings["CONFORMANCE_TEST_PASSWORD"]
        env_file = tmp_path / "stack.env"
        stack.write_env_file(env_file)
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        assert f"CONFORMANCE_TARGET_URL={stack.settings['CONFORMANCE_TARGET_URL']}" in env_file.read_text()
        assert pids_alive(pids) == pids
    assert pids_alive(pids) == []


def test_a_crashed_child_does_not_leave_the_others_running(tmp_path: Path) -> None:
    with running_stack(services=["toolserver"], data_dir=tmp_path) as stack:
        pids = [p.pid for p in stack.processes]
        idp = next(p for p in stack.processes if p.spec.name == "idp")
        os.kill(idp.pid, signal.SIGKILL)
        idp.process.wait(timeout=5)
        assert stack.dead() == ["idp"]
    assert pids_alive(pids) == []


def test_a_failing_service_stops_the_ones_already_started(tmp_path: Path) -> None:
    ca_file, _, _ = make_certificates(tmp_path)
    pid_file = tmp_path / "sleeper.pid"
    sleeper = ServiceSpec(
        name="sleeper",
        argv=[
            sys.executable,
            "-c",
            f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)",
        ],
        health_url="https://127.0.0.1:9/healthz",
    )
    crasher = ServiceSpec(
        name="crasher",
        argv=[
            sys.executable,
            "-c",
            f"import os, time\nwhile not os.path.exists({str(pid_file)!r}): time.sleep(0.01)\nraise SystemExit(3)",
        ],
        health_url="https://127.0.0.1:9/healthz",
    )
    with (
        pytest.raises(StackError, match="crasher exited with 3"),
        run_services([sleeper, crasher], ca_file, tmp_path / "logs"),
    ):
        pytest.fail("run_services must not yield when a service fails")
    assert _wait_gone([int(pid_file.read_text())], timeout_s=1.0) == []


def test_children_die_with_a_killed_parent(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from conformance.reference.stack import running_stack
        with running_stack(services=["toolserver"], data_dir=Path({str(tmp_path)!r})) as stack:
            print(" ".join(str(p.pid) for p in stack.processes), flush=True)
            time.sleep(120)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pids = [int(x) for x in parent.stdout.readline().split()]
        assert len(pids) == 2 and pids_alive(pids) == pids
        parent.kill()  # no cleanup code runs: only the kernel's parent-death signal can stop the children
        parent.wait(timeout=5)
        assert _wait_gone(pids) == []
    finally:
        parent.kill()


def test_unknown_mutant_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown mutant"), running_stack(mutants=["no-such-mutant"]):
        pass


def test_a_port_taken_between_choice_and_bind_is_retried_on_fresh_ports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A free port is free only until another process binds it (parallel test runs): the stack starts again."""
    import socket

    from conformance.reference import _service

    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    real_free_port = _service.free_port
    handed: list[int] = []

    def racy_free_port(host: str = "127.0.0.1") -> int:
        handed.append(taken if not handed else real_free_port(host))
        return handed[-1]

    monkeypatch.setattr(_service, "free_port", racy_free_port)
    announced: list[dict[str, str]] = []  # a run started on the stack's settings as soon as its processes are
    try:
        with running_stack(services=["platform"], data_dir=tmp_path, launched=announced.append) as stack:
            url = stack.settings["CONFORMANCE_PLATFORM_URL"]
            assert str(taken) not in url
            # Told the settings of each start, before its health: the lost race's, then the fresh ports'.
            assert [s["CONFORMANCE_PLATFORM_URL"] for s in announced] == [f"https://127.0.0.1:{taken}", url]
            assert announced[-1] == stack.settings
            with https_client(stack) as client:
                assert client.get(stack.services[0].health_url).is_success
    finally:
        squatter.close()
    assert handed[0] == taken and len(handed) >= 2


def test_a_port_race_is_told_apart_from_other_start_failures() -> None:
    assert StackError("x", None, "ERROR: [Errno 98] error while attempting to bind: address already in use").port_taken
    assert StackError("x", None, "Error: listen EADDRINUSE: address already in use 127.0.0.1:4000").port_taken
    assert not StackError("x", None, "ModuleNotFoundError: No module named 'pyvips'").port_taken


def test_a_stack_never_gives_two_services_the_same_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The OS may offer a port twice while none is bound yet; a second service on it would fail to bind while the
    first answered its health URL (same CA, same /healthz), so the stack would start with a service missing."""
    from conformance.reference import _service

    offered = iter([49701, 49701, 49701, 49702])
    monkeypatch.setattr(_service, "free_port", lambda host="127.0.0.1": next(offered))
    ctx = _service.StackContext(tmp_path, tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem")
    assert [ctx.port(), ctx.port()] == [49701, 49702]


def test_an_idp_given_a_signing_key_signs_with_it(tmp_path: Path) -> None:
    """running_stack(idp_signing_key=...) (tests/matrix/stacks.py gives every case's IdP one key made once): the IdP
    publishes that key, not one of its own."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path / "idp-key.pem"
    key_file.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    modulus = key.public_key().public_numbers().n
    with (
        running_stack(services=["idp"], data_dir=tmp_path / "stack", idp_signing_key=key_file) as stack,
        https_client(stack) as client,
    ):
        origin = next(s for s in stack.services if s.name == "idp").health_url.rsplit("/", 1)[0]
        jwks_uri = client.get(f"{origin}/.well-known/openid-configuration").json()["jwks_uri"]
        keys = client.get(jwks_uri).json()["keys"]
    published = [int.from_bytes(base64.urlsafe_b64decode(k["n"] + "=" * (-len(k["n"]) % 4)), "big") for k in keys]
    assert published == [modulus]
