"""What every Python reference service shares (``conformance/reference/_service.py``): how it writes a response."""

from __future__ import annotations

import asyncio
from typing import Any

from conformance.reference._service import ONE_WRITE_MAX, _OneWritePerTurn, http_protocol


class Recorder:
    """A transport that records what is written to it and whether it was closed."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 1)}.get(name, default)


def test_the_writes_of_one_turn_leave_as_one_and_in_order() -> None:
    async def scenario() -> list[bytes]:
        recorder = Recorder()
        transport = _OneWritePerTurn(recorder, asyncio.get_running_loop())
        transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        transport.write(memoryview(b"body"))
        assert recorder.writes == []  # held until the turn ends
        await asyncio.sleep(0)
        transport.write(b"next")
        await asyncio.sleep(0)
        return recorder.writes

    assert asyncio.run(scenario()) == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"next"]


def test_a_large_body_leaves_at_once_and_a_close_sends_what_is_held_first() -> None:
    async def scenario() -> Recorder:
        recorder = Recorder()
        transport = _OneWritePerTurn(recorder, asyncio.get_running_loop())
        transport.write(b"head")
        transport.write(b"x" * ONE_WRITE_MAX)
        assert recorder.writes == [b"head" + b"x" * ONE_WRITE_MAX]
        transport.write(b"tail")
        transport.close()
        assert recorder.writes[-1] == b"tail" and recorder.closed
        await asyncio.sleep(0)  # the turn's scheduled flush finds nothing left
        return recorder

    assert len(asyncio.run(scenario()).writes) == 2


def test_anything_else_is_the_transports_own() -> None:
    transport = _OneWritePerTurn(Recorder(), None)
    assert transport.get_extra_info("sockname") == ("127.0.0.1", 1)


def test_the_services_serve_with_uvicorns_httptools_protocol() -> None:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    protocol = http_protocol()
    assert isinstance(protocol, type) and issubclass(protocol, HttpToolsProtocol)


def test_services_keep_an_idle_connection_longer_than_the_host_pools_one(tmp_path: Any) -> None:
    """The host closes its idle connections first (httpx's pool expiry), so a request never meets a service closing
    the connection it was sent on: a POST dropped that way is not the target's failure and is not sent again."""
    import argparse

    import httpx

    from conformance.reference._service import KEEP_ALIVE_S, uvicorn_options
    from conformance.reference.compression.serve import SandboxServer

    pooled = httpx.Limits().keepalive_expiry
    assert pooled is not None and pooled < KEEP_ALIVE_S
    args = argparse.Namespace(host="127.0.0.1", port=1, certfile=tmp_path / "c", keyfile=tmp_path / "k")
    assert uvicorn_options(args)["timeout_keep_alive"] == KEEP_ALIVE_S
    sandbox = SandboxServer(object(), "127.0.0.1", 0, "c", "k", plain_http=True, plain_port=0)
    listeners = [sandbox.tls, sandbox.plain, sandbox.redirect]
    assert [s.config.timeout_keep_alive for s in listeners if s is not None] == [KEEP_ALIVE_S] * 3
