"""The CIMD publisher over real TLS (trustme CA): documents served, every fetch recorded, callbacks delivered."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trustme

from conformance.core import _context
from conformance.core._exceptions import ConfigError
from conformance.host.identity import HostKey
from conformance.host.publisher import Publisher
from tests._sockets import accepted_socket_option


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    root = tmp_path_factory.mktemp("tls")
    files = {"ca": root / "ca.pem", "cert": root / "cert.pem", "key": root / "key.pem"}
    ca.cert_pem.write_to_path(str(files["ca"]))
    leaf.private_key_pem.write_to_path(str(files["key"]))
    for i, blob in enumerate(leaf.cert_chain_pems):
        blob.write_to_path(str(files["cert"]), append=i > 0)
    return files


@pytest.fixture(scope="module")
def key() -> HostKey:
    return HostKey.generate()


@pytest.fixture
def publisher(tls: dict[str, Path], key: HostKey) -> Iterator[Publisher]:
    with Publisher(certfile=tls["cert"], keyfile=tls["key"], key=key) as pub:
        yield pub
    assert not pub.running


@pytest.fixture
def fetch(tls: dict[str, Path]) -> Iterator[httpx.Client]:
    with httpx.Client(verify=ssl.create_default_context(cafile=str(tls["ca"])), timeout=5) as client:
        yield client


def test_documents_and_jwks_are_served_over_verified_tls(publisher: Publisher, fetch: httpx.Client) -> None:
    identity = publisher.identity
    assert identity is not None
    assert publisher.base_url == f"https://127.0.0.1:{publisher.port}" and publisher.port > 0
    stable = fetch.get(identity.stable_document_url)
    assert stable.status_code == 200 and stable.headers["content-type"] == "application/json"
    assert stable.json() == identity.client_document()
    specific = fetch.get(identity.callback_document_url("abc123")).json()
    assert specific["client_id"] == identity.callback_document_url("abc123")
    assert specific["redirect_uris"] == [f"{publisher.base_url}/oauth/callback/abc123"]
    jwks = fetch.get(identity.jwks_url)
    assert jwks.json() == identity.jwks() and "d" not in jwks.json()["keys"][0]
    assert fetch.get(f"{publisher.base_url}/nothing").status_code == 404
    assert fetch.post(identity.jwks_url, content=b"x").status_code == 405


def test_every_fetch_is_recorded_with_who_and_what(publisher: Publisher, fetch: httpx.Client) -> None:
    identity = publisher.identity
    assert identity is not None
    start = time.time()
    fetch.get(identity.stable_document_url, headers={"User-Agent": "the-as/1"})
    fetch.get(identity.jwks_url)
    fetch.get(identity.callback_document_url("cb1"))
    kinds = [(f.document, f.status, f.callback_id) for f in publisher.fetches()]
    assert kinds == [("client", 200, None), ("jwks", 200, None), ("callback-client", 200, "cb1")]
    first = publisher.fetches()[0]
    assert first.client.startswith("127.0.0.1:") and first.user_agent == "the-as/1" and first.at >= start
    assert len(publisher.fetched(identity.stable_document_url)) == 1
    assert publisher.fetched(identity.jwks_url, since=time.time() + 60) == []
    publisher.clear()
    assert publisher.fetches() == []


def test_answers_leave_without_waiting_for_the_clients_ack(publisher: Publisher, fetch: httpx.Client) -> None:
    """The answer's head and body are two writes: with Nagle's algorithm on, the body waits for the ACK of the
    head, which an authorization server delays (TCP's delayed ACK) while it waits for the body: every token request
    that makes the AS fetch the client document would stall so."""
    identity = publisher.identity
    assert identity is not None
    assert fetch.get(identity.stable_document_url).status_code == 200  # the connection stays open (keep-alive)
    client_port = int(publisher.fetches()[-1].client.rpartition(":")[2])
    assert accepted_socket_option(publisher.port, client_port, socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_fetches_become_inbound_evidence_of_the_running_check(publisher: Publisher, fetch: httpx.Client) -> None:
    identity = publisher.identity
    assert identity is not None
    record = _context.begin()
    try:
        fetch.get(identity.jwks_url)
        deadline = time.monotonic() + 5
        while not record.exchanges and time.monotonic() < deadline:
            time.sleep(0.01)  # the handler thread records after writing the answer
    finally:
        _context.end()
    (exchange,) = record.exchanges
    assert exchange["direction"] == "inbound" and exchange["document"] == "jwks"
    assert exchange["method"] == "GET" and exchange["status"] == 200
    assert exchange["url"] == identity.jwks_url and exchange["peer"].startswith("127.0.0.1:")
    assert json.loads(exchange["response_body"])["keys"][0]["kid"] == identity.key.kid


def test_concurrent_fetches_are_all_recorded(publisher: Publisher, tls: dict[str, Path]) -> None:
    identity = publisher.identity
    assert identity is not None

    def worker() -> None:
        with httpx.Client(verify=ssl.create_default_context(cafile=str(tls["ca"])), timeout=5) as client:
            for _ in range(5):
                assert client.get(identity.stable_document_url).status_code == 200

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(publisher.fetches(document="client")) == 20


def test_callback_route_delivers_the_response_to_a_waiter(publisher: Publisher, fetch: httpx.Client) -> None:
    identity = publisher.identity
    assert identity is not None
    since = time.time()
    timer = threading.Timer(0.2, lambda: fetch.get(identity.redirect_uri() + "?code=c0de&state=s1&iss=x"))
    timer.start()
    try:
        hit = publisher.wait_for_callback(5, since=since, state="s1")
    finally:
        timer.join()
    assert hit is not None and hit.params == {"code": "c0de", "state": "s1", "iss": "x"}
    assert hit.url.startswith(identity.redirect_uri() + "?")
    assert publisher.wait_for_callback(0.05, state="other") is None  # bounded wait
    page = fetch.get(identity.redirect_uri("cbX") + "?error=access_denied&state=s2")
    assert page.status_code == 200 and "close this window" in page.text
    assert publisher.callbacks()[-1].path == "/oauth/callback/cbX"


def test_overrides_answer_instead_of_the_documents(publisher: Publisher, fetch: httpx.Client) -> None:
    identity = publisher.identity
    assert identity is not None
    publisher.override("/oauth/jwks.json", 500, {"error": "boom"})
    assert fetch.get(identity.jwks_url).status_code == 500
    publisher.clear_overrides()
    assert fetch.get(identity.jwks_url).status_code == 200


def test_a_tls_failure_does_not_stop_the_server(publisher: Publisher, fetch: httpx.Client) -> None:
    identity = publisher.identity
    assert identity is not None
    with httpx.Client(timeout=5) as untrusting, pytest.raises(httpx.ConnectError):
        untrusting.get(identity.jwks_url)  # the client refuses the unknown CA mid-handshake
    assert fetch.get(identity.jwks_url).status_code == 200


def test_public_base_url_and_stop_always_happens(tls: dict[str, Path], key: HostKey) -> None:
    publisher = Publisher(certfile=tls["cert"], keyfile=tls["key"], key=key, public_base_url="https://cimd.example.net")
    with pytest.raises(RuntimeError), publisher:
        assert publisher.identity is not None
        assert publisher.identity.stable_document_url == "https://cimd.example.net/oauth/client.json"
        raise RuntimeError("a failing check")
    assert not publisher.running
    publisher.stop()  # idempotent


def test_missing_certificate_is_a_config_error(tmp_path: Path) -> None:
    with (
        pytest.raises(ConfigError, match="does not exist"),
        Publisher(certfile=tmp_path / "none.pem", keyfile=tmp_path / "none.key"),
    ):
        pass
