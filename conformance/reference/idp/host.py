"""Several reference IdPs in one Node process (``host.js``), for a test suite that starts many stacks.

Starting Node costs an IdP CPU, and a cold JIT more over its first flows (benchmarks/idp_host.py); a warm process
serving many stacks pays both once. Every stack still meets an IdP of its own: a fresh Provider instance (own config,
accounts, mutants, store, keys, caches, port, TLS server and log file), closed when its stack stops.

``IdpHost(ca_file, log_file)`` starts the host; ``host.launcher(fallback)`` is a ``running_stack`` launcher that
sends the IdP's spec to it and starts every other service with ``fallback``. Node reads NODE_EXTRA_CA_CERTS once:
every stack a host serves must use that host's CA (``running_stack(certificates=...)``); the launcher refuses a
spec that asks for another.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from conformance.core._exceptions import ConformanceError
from conformance.reference._service import ServiceSpec
from conformance.reference.idp import HERE, PROVIDER_JS, ensure_installed, node_env, node_executable
from conformance.reference.stack import Launcher, ServiceHandle, _die_with_parent

HOST_JS = HERE / "host.js"
START_FAILED = 1  # the exit code a hosted IdP reports when its start failed (its log says why)
CLOSE_GRACE_S = 5.0


class HostError(ConformanceError, RuntimeError):
    """The host cannot serve this IdP (it has stopped, or the spec wants another CA)."""


class HostedIdp:
    """One IdP of the host as the stack sees it (a ``SelfStoppingHandle``): ``pid`` is the host's; ``poll``/``wait``
    give its exit code once it has ended: 0 when stopped, 1 when its start failed, the host's own when the host
    died."""

    def __init__(self, host: IdpHost, instance_id: str, argv: list[str]) -> None:
        self._host = host
        self.instance_id = instance_id
        self._argv = argv
        self._ended = threading.Event()
        self._code: int | None = None
        self.error: str | None = None  # why its start failed (the log has the trace)

    @property
    def pid(self) -> int:
        return self._host.pid

    def poll(self) -> int | None:
        return self._code

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout) or self._code is None:
            raise subprocess.TimeoutExpired(self._argv, timeout or 0.0)
        return self._code

    def stop_service(self) -> None:
        if self._code is None:
            self._host._send({"op": "stop", "id": self.instance_id})

    def _end(self, code: int, error: str | None = None) -> None:
        if self._code is None:
            self._code, self.error = code, error
            self._ended.set()


class IdpHost:
    """``node host.js`` with NODE_EXTRA_CA_CERTS = ``ca_file``, its own output to ``log_file``. It dies with the
    thread that started it (Linux parent-death signal) and when its stdin closes; :meth:`close` stops it."""

    def __init__(self, ca_file: Path, log_file: Path) -> None:
        ensure_installed()
        self.env = node_env(ca_file)
        answers_read, answers_write = os.pipe()
        log_file.parent.mkdir(parents=True, exist_ok=True)
        try:
            with log_file.open("wb") as log:
                self._process = subprocess.Popen(
                    [node_executable(), str(HOST_JS), "--answers-fd", str(answers_write)],
                    cwd=HERE,
                    env={**os.environ, **self.env},
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(answers_write,),
                    start_new_session=True,  # a terminal's Ctrl-C reaches us, not it: we stop it
                    preexec_fn=_die_with_parent,
                )
        finally:
            os.close(answers_write)
        self.log_file = log_file
        self._answers: IO[bytes] = os.fdopen(answers_read, "rb")
        assert self._process.stdin is not None
        self._stdin: IO[bytes] = self._process.stdin
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._instances: dict[str, HostedIdp] = {}
        self._reader = threading.Thread(target=self._read_answers, name="idp-host-answers", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def start(self, args: list[str], log_file: Path) -> HostedIdp:
        """A new IdP with provider.js's arguments ``args``, writing to ``log_file``: returns at once (``poll`` says
        when its start failed; its health URL when it serves)."""
        with self._lock:
            if self._process.poll() is not None:
                raise HostError(f"the IdP host has exited ({self._process.returncode}); its log: {self.log_file}")
            idp = HostedIdp(self, str(next(self._ids)), [str(HOST_JS), *args])
            self._instances[idp.instance_id] = idp
        self._send({"op": "start", "id": idp.instance_id, "args": args, "log": str(log_file)})
        return idp

    def launcher(self, fallback: Launcher) -> Launcher:
        """A launcher serving the stack's IdP here and starting anything else with ``fallback``."""

        def launch(spec: ServiceSpec, env: dict[str, str], log_file: Path) -> ServiceHandle:
            if spec.name != "idp" or spec.argv[1:2] != [str(PROVIDER_JS)]:
                return fallback(spec, env, log_file)
            if any(self.env.get(name) != value for name, value in spec.env.items()):
                raise HostError(f"the IdP host runs with {self.env}, the stack's IdP needs {spec.env}: same CA?")
            return self.start(spec.argv[2:], log_file)

        return launch

    def close(self) -> None:
        """Stop the host (and every IdP still in it) and wait for it."""
        with contextlib.suppress(OSError):
            self._stdin.close()  # the host exits at the end of its input
        try:
            self._process.wait(timeout=CLOSE_GRACE_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(timeout=CLOSE_GRACE_S)

    def _send(self, command: dict[str, Any]) -> None:
        line = (json.dumps(command) + "\n").encode("utf-8")
        with self._write_lock, contextlib.suppress(OSError, ValueError):  # a dead host: its reader ends every IdP
            self._stdin.write(line)
            self._stdin.flush()

    def _read_answers(self) -> None:
        with self._answers:
            for line in self._answers:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    answer = json.loads(line)
                    idp = self._instances.get(str(answer["id"]))
                    if idp is None:
                        continue
                    if answer["op"] == "start" and not answer["ok"]:
                        idp._end(START_FAILED, str(answer.get("error")))
                    elif answer["op"] == "stop":
                        idp._end(0)
                    if idp.poll() is not None:
                        with self._lock:
                            self._instances.pop(idp.instance_id, None)
        # The host is gone: every IdP it served has ended with it.
        code = self._process.wait()
        with self._lock:
            ended, self._instances = list(self._instances.values()), {}
        for idp in ended:
            idp._end(code if code != 0 else START_FAILED, f"the IdP host exited ({code})")
