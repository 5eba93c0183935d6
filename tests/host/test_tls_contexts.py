"""One SSL context per trust setting, shared by every host client of a run (building one per client would be a
large share of an auth+profile run's CPU)."""

from __future__ import annotations

import os
import ssl
from pathlib import Path

import trustme

from conformance.host import mcp as host_mcp  # McpSession is named when a test opens one: it loads the SDK
from conformance.host._guard import UrlGuard
from conformance.host.async_http import AsyncHostHTTP
from conformance.host.http import HostHTTP, _build_context, ssl_context


def _pool_context(transport: object) -> ssl.SSLContext:
    inner = getattr(transport, "_transport", transport)  # a client, or a transport
    return inner._pool._ssl_context  # type: ignore[attr-defined]  # httpx/httpcore internals


def test_clients_with_the_same_trust_setting_share_one_context(tmp_path: Path) -> None:
    ca = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    _build_context.cache_clear()
    with (
        HostHTTP(guard=UrlGuard(), retry=None, ca_bundle=ca_file) as one,
        HostHTTP(guard=UrlGuard(), retry=None, ca_bundle=ca_file) as two,
    ):
        shared = _pool_context(one._client)
        assert _pool_context(two._client) is shared
        assert _pool_context(AsyncHostHTTP(one)._client) is shared
        session = host_mcp.McpSession(two, "https://127.0.0.1:1/mcp")
        session._http_client()
        assert session._transport is not None and _pool_context(session._transport.inner) is shared
    assert _build_context.cache_info().misses == 1  # built once for five clients

    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert ssl_context(ca_file, verify=False) is not shared
    insecure = ssl_context(ca_file, verify=False)
    assert insecure.verify_mode == ssl.CERT_NONE and not insecure.check_hostname
    # Nothing is verified with it: the system trust store is not loaded (only the CA bundle).
    assert len(insecure.get_ca_certs()) == 1 and len(shared.get_ca_certs()) > 1
    assert insecure.minimum_version == shared.minimum_version and insecure.options == shared.options
    assert ssl_context(None) is not shared  # another CA bundle, another context


def test_a_client_certificate_or_a_rewritten_ca_gets_its_own_context(tmp_path: Path) -> None:
    ca = trustme.CA()
    ca_file, pem = tmp_path / "ca.pem", tmp_path / "client.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    ca.issue_cert("client.example").private_key_and_cert_chain_pem.write_to_path(str(pem))
    plain = ssl_context(ca_file)
    with_cert = ssl_context(ca_file, client_cert=(str(pem), str(pem)))
    assert with_cert is not plain and with_cert is ssl_context(ca_file, client_cert=(str(pem), str(pem)))
    session = host_mcp.McpSession(HostHTTP(guard=UrlGuard(), retry=None, ca_bundle=ca_file), "https://127.0.0.1:1/mcp")
    session.client_cert = (str(pem), str(pem))
    session._http_client()
    assert session._transport is not None and _pool_context(session._transport.inner) is with_cert
    assert ssl_context(ca_file) is plain  # the shared context was not given the certificate
    # a regenerated CA at the same path (a new embedded stack) is trusted afresh
    trustme.CA().cert_pem.write_to_path(str(ca_file))
    os.utime(ca_file, ns=(0, os.stat(ca_file).st_mtime_ns + 1))
    assert ssl_context(ca_file) is not plain
