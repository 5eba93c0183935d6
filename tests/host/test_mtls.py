"""mTLS material: chain checks with cryptography's verifier, and real handshakes against a server that wants a
client certificate (through HostHTTP, as a check would make them)."""

from __future__ import annotations

import datetime as dt
import ssl
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import trustme
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.verification import PolicyBuilder, Store, VerificationError

from conformance import TargetUnreachable
from conformance.host._guard import UrlGuard
from conformance.host.http import HostHTTP, own_ssl_context, ssl_context
from conformance.host.mtls import MtlsMaterial, make_client_leaf, make_mtls_material, san_dns_names
from tests._serving import running

DNS_NAME = "connector.host.example"


@pytest.fixture(scope="module")
def material(tmp_path_factory: pytest.TempPathFactory) -> MtlsMaterial:
    return make_mtls_material(tmp_path_factory.mktemp("mtls"), DNS_NAME)


def verify(material: MtlsMaterial, leaf: x509.Certificate, anchors: list[x509.Certificate]) -> list[str]:
    """The chain as a target would check it: trust anchors, clientAuth EKU; returns the verified SAN names."""
    verifier = PolicyBuilder().store(Store(anchors)).time(dt.datetime.now(dt.UTC)).build_client_verifier()
    verified = verifier.verify(leaf, [material.intermediate.cert])
    return [name.value for name in verified.subjects or [] if isinstance(name, x509.DNSName)]


def test_good_leaf_chains_to_the_root_and_to_the_intermediate(material: MtlsMaterial) -> None:
    assert verify(material, material.good.leaf, [material.root.cert]) == [DNS_NAME]
    # A target may pin the connector intermediate as its trust anchor.
    assert verify(material, material.good.leaf, [material.intermediate.cert]) == [DNS_NAME]
    eku = material.good.leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.CLIENT_AUTH]


def test_wrong_san_chains_but_names_another_host(material: MtlsMaterial) -> None:
    names = verify(material, material.wrong_san.leaf, [material.root.cert])
    assert names == [f"wrong-san.{DNS_NAME}"] and DNS_NAME not in names


def test_foreign_leaf_does_not_chain(material: MtlsMaterial) -> None:
    assert san_dns_names(material.foreign_ca.leaf) == [DNS_NAME]
    with pytest.raises(VerificationError):
        verify(material, material.foreign_ca.leaf, [material.root.cert])


def test_server_auth_only_leaf_is_refused_for_client_auth(material: MtlsMaterial) -> None:
    leaf = make_client_leaf(material.intermediate, DNS_NAME, client_auth=False)
    with pytest.raises(VerificationError):
        verify(material, leaf.cert, [material.root.cert])


def test_files_hold_leaf_then_intermediate(material: MtlsMaterial) -> None:
    chain = x509.load_pem_x509_certificates(material.good.certfile.read_bytes())
    assert chain == [material.good.leaf, material.intermediate.cert]
    assert material.good.keyfile.stat().st_mode & 0o077 == 0
    assert x509.load_pem_x509_certificates(material.ca_bundle.read_bytes()) == [
        material.root.cert,
        material.intermediate.cert,
    ]


# ------------------------------------------------------------------------------------- real handshakes


@pytest.fixture(scope="module")
def server_ca(tmp_path_factory: pytest.TempPathFactory) -> tuple[trustme.CA, Path]:
    ca = trustme.CA()
    path = tmp_path_factory.mktemp("server-ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return ca, path


@pytest.fixture(scope="module")
def mtls_server(
    material: MtlsMaterial, server_ca: tuple[trustme.CA, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """HTTPS on loopback requiring a client certificate from the test root; answers with the peer's SAN."""
    pem = tmp_path_factory.mktemp("server") / "server.pem"
    server_ca[0].issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(pem))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            peer = self.connection.getpeercert()
            names = [value for kind, value in peer.get("subjectAltName", ()) if kind == "DNS"]
            body = ",".join(names).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pem))
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cafile=str(material.root_file))

    class Quiet(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            return  # refused handshakes are the point of some tests; no tracebacks on stderr

    httpd = Quiet(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    with running(httpd, "mtls-server"):
        yield f"https://127.0.0.1:{httpd.server_address[1]}/"


def _get(url: str, ca: Path, cert: tuple[str, str] | None) -> str:
    with HostHTTP(guard=UrlGuard(), ca_bundle=ca, retry=None, client_cert=cert, read_timeout=5) as host:
        return host.get(url).text


def test_handshake_with_the_good_leaf(
    material: MtlsMaterial, mtls_server: str, server_ca: tuple[trustme.CA, Path]
) -> None:
    assert _get(mtls_server, server_ca[1], material.good.pair) == DNS_NAME


def test_wrong_san_completes_the_handshake_so_the_target_must_check_the_name(
    material: MtlsMaterial, mtls_server: str, server_ca: tuple[trustme.CA, Path]
) -> None:
    assert _get(mtls_server, server_ca[1], material.wrong_san.pair) == f"wrong-san.{DNS_NAME}"


@pytest.mark.parametrize("which", ["foreign", "none"])
def test_foreign_ca_and_no_certificate_are_refused(
    material: MtlsMaterial, mtls_server: str, server_ca: tuple[trustme.CA, Path], which: str
) -> None:
    cert = material.foreign_ca.pair if which == "foreign" else None
    with pytest.raises(TargetUnreachable):
        _get(mtls_server, server_ca[1], cert)


def test_one_own_context_presents_each_certificate_loaded_in_turn(
    material: MtlsMaterial, mtls_server: str, server_ca: tuple[trustme.CA, Path]
) -> None:
    """AUTH-MTLS-01 loads its certificates one after another into one context of its own (own_ssl_context): each
    new connection presents the certificate loaded last before it."""
    context = own_ssl_context(server_ca[1])
    assert context is not ssl_context(server_ca[1]) and context.verify_mode == ssl.CERT_REQUIRED
    seen = []
    for pair in (material.good.pair, material.wrong_san.pair, material.good.pair, material.wrong_san.pair):
        context.load_cert_chain(*pair)
        seen.append(_get_with(mtls_server, server_ca[1], context))
    wrong = f"wrong-san.{DNS_NAME}"
    assert seen == [DNS_NAME, wrong, DNS_NAME, wrong]
    context.load_cert_chain(*material.foreign_ca.pair)
    with pytest.raises(TargetUnreachable):  # the leaf of another CA, refused: not the one loaded before it
        _get_with(mtls_server, server_ca[1], context)


def _get_with(url: str, ca: Path, context: ssl.SSLContext) -> str:
    with HostHTTP(guard=UrlGuard(), ca_bundle=ca, retry=None, read_timeout=5, tls_context=context) as host:
        return host.get(url).text


@pytest.mark.parametrize("own_context", [False, True], ids=["shared-context", "own-context"])
def test_an_insecure_loopback_target_still_receives_the_client_certificate(
    material: MtlsMaterial, mtls_server: str, own_context: bool
) -> None:
    """--allow-insecure-loopback: the server's certificate is not verified on loopback (no CA bundle given here),
    but the certificate the host presents must be the one asked for, as AUTH-MTLS-01 passes it (client_cert, and
    its own context)."""
    for pair, expected in ((material.good.pair, DNS_NAME), (material.wrong_san.pair, f"wrong-san.{DNS_NAME}")):
        context = own_ssl_context(None) if own_context else None
        if context is not None:
            context.load_cert_chain(*pair)
        guard = UrlGuard(allow_insecure_loopback=True)
        with HostHTTP(guard=guard, retry=None, read_timeout=5, client_cert=pair, tls_context=context) as host:
            assert host.get(mtls_server).text == expected


@pytest.mark.asyncio
async def test_the_async_twin_presents_it_on_an_insecure_loopback_target_too(
    material: MtlsMaterial, mtls_server: str
) -> None:
    from conformance.host.async_http import AsyncHostHTTP

    guard = UrlGuard(allow_insecure_loopback=True)
    host = HostHTTP(guard=guard, retry=None, read_timeout=5, client_cert=material.good.pair)
    async with AsyncHostHTTP(host) as http:
        assert (await http.get(mtls_server)).text == DNS_NAME
