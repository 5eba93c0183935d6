"""The GCS emulator's bearer guard (``objstores.make_gcs_server``): every request is checked before the emulator
dispatches it, the health check excepted."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from conformance.reference.compression.objstores import make_gcs_server, make_wsgi_server
from tests._serving import serving
from tests._sockets import accepted_socket_option


@pytest.fixture
def gcs() -> Iterator[str]:
    with serving(make_gcs_server("127.0.0.1", 0, ["good-token"], ["bucket-1"], None)) as origin:
        yield origin


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"])
def test_every_method_needs_the_bearer_token(gcs: str, method: str) -> None:
    url = f"{gcs}/storage/v1/b/bucket-1/o"
    # One client (its trust store loaded once), a connection per request.
    with httpx.Client(headers={"Connection": "close"}) as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic good-token"}):
            assert client.request(method, url, headers=headers).status_code == 401
        with_token = client.request(method, url, headers={"Authorization": "Bearer good-token"})
    assert with_token.status_code != 401


def test_the_health_check_needs_no_token(gcs: str) -> None:
    assert httpx.get(f"{gcs}/healthz").json() == {"status": "ok"}


def test_the_s3_server_answers_without_waiting_for_the_clients_ack() -> None:
    """werkzeug writes an answer's head and body apart on a kept-alive connection: TCP_NODELAY keeps the body from
    waiting for the client's delayed ACK of the head (a stall on every store request, even on loopback)."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]

    with (
        serving(make_wsgi_server("127.0.0.1", 0, app, None)) as origin,
        httpx.Client() as client,
        client.stream("GET", f"{origin}/") as answer,
    ):
        client_port = answer.extensions["network_stream"].get_extra_info("socket").getsockname()[1]
        server_port = int(origin.rpartition(":")[2])
        assert accepted_socket_option(server_port, client_port, socket.IPPROTO_TCP, socket.TCP_NODELAY)
