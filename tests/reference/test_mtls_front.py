"""The reference tool server's mTLS front: real handshakes with the harness's test PKI against a tiny upstream.

The host's certificate and a second leaf of the intermediate with the same SAN get through to the upstream; no
certificate, a wrong SAN, another CA's leaf and a leaf without the clientAuth EKU do not; each front mutant lets
exactly its case through (or, pinning, refuses the second leaf).
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
from cryptography.hazmat.primitives import serialization

from conformance.host.mtls import MtlsMaterial, make_client_leaf, make_mtls_material, pem
from conformance.reference._service import free_port
from conformance.reference.toolserver.mtls_front import MtlsFront

DNS_NAME = "connector.host.conformance.test"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[MtlsMaterial, Path, Path, Path, Path]:
    directory = tmp_path_factory.mktemp("mtls-front")
    material = make_mtls_material(directory, DNS_NAME)
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1")
    ca_file, cert_file, key_file = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    ca.cert_pem.write_to_path(str(ca_file))
    server.private_key_pem.write_to_path(str(key_file))
    cert_file.write_bytes(b"".join(blob.bytes() for blob in server.cert_chain_pems))
    # A leaf of the trusted intermediate with the right SAN but only the serverAuth EKU.
    no_eku = make_client_leaf(material.intermediate, DNS_NAME, client_auth=False)
    no_eku_file = directory / "mtls-client-no-eku.pem"
    no_eku_file.write_bytes(pem(no_eku.cert) + pem(material.intermediate.cert))
    no_eku_file.with_suffix(".key").write_bytes(
        no_eku.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return material, ca_file, cert_file, key_file, no_eku_file


async def _upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nupstream")
    await writer.drain()
    writer.close()


async def _answers(pki: Any, check_san: bool, san_prefix: bool = False, **defects: bool) -> dict[str, Any]:
    material, ca_file, cert_file, key_file, no_eku_file = pki
    upstream_port, front_port = free_port(), free_port()
    upstream_ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    upstream_ssl.load_cert_chain(str(cert_file), str(key_file))
    upstream = await asyncio.start_server(_upstream, "127.0.0.1", upstream_port, ssl=upstream_ssl)
    front = MtlsFront(
        certfile=str(cert_file),
        keyfile=str(key_file),
        trust_file=str(material.intermediate_file),
        dns_name=DNS_NAME,
        upstream_host="127.0.0.1",
        upstream_port=upstream_port,
        upstream_ca=str(ca_file),
        check_san=check_san,
        san_prefix=san_prefix,
        **defects,
    )
    listener = await front.start("127.0.0.1", front_port)
    cases = {
        "good": material.good.pair,
        "second": material.second.pair,
        "none": None,
        "wrong_san": material.wrong_san.pair,
        "foreign_ca": material.foreign_ca.pair,
        "no_eku": (str(no_eku_file), str(no_eku_file.with_suffix(".key"))),
        "san_extended": (
            str(material.root_file.parent / "mtls-client-san-extended.pem"),
            str(material.root_file.parent / "mtls-client-san-extended.key"),
        ),
    }
    answers: dict[str, Any] = {}
    try:
        for name, pair in cases.items():
            context = ssl.create_default_context(cafile=str(ca_file))
            if pair is not None:
                context.load_cert_chain(*pair)
            async with httpx.AsyncClient(verify=context, timeout=5.0) as client:
                try:
                    response = await client.get(f"https://127.0.0.1:{front_port}/mcp")
                    answers[name] = (response.status_code, response.text)
                except httpx.HTTPError as exc:
                    answers[name] = type(exc).__name__
    finally:
        listener.close()
        upstream.close()
    return answers


def test_only_the_hosts_certificate_gets_through(pki: Any) -> None:
    answers = asyncio.run(_answers(pki, check_san=True))
    assert answers["good"] == answers["second"] == (200, "upstream")
    refused = {name: answer for name, answer in answers.items() if name not in ("good", "second")}
    assert all(isinstance(answer, str) for answer in refused.values()), refused


def test_wrong_san_mutant_accepts_any_san_of_the_intermediate(pki: Any) -> None:
    answers = asyncio.run(_answers(pki, check_san=False))
    assert answers["good"] == (200, "upstream")
    assert answers["wrong_san"] == (200, "upstream")
    assert all(isinstance(answers[name], str) for name in ("none", "foreign_ca", "no_eku")), answers


def test_san_prefix_mutant_accepts_a_name_extending_the_configured_one(pki: Any) -> None:
    answers = asyncio.run(_answers(pki, check_san=True, san_prefix=True))
    assert answers["good"] == (200, "upstream")
    assert answers["san_extended"] == (200, "upstream")
    assert all(isinstance(answers[name], str) for name in ("none", "wrong_san", "foreign_ca", "no_eku")), answers


def test_pinning_mutant_refuses_a_second_leaf(pki: Any) -> None:
    answers = asyncio.run(_answers(pki, check_san=True, pin_first_leaf=True))
    assert answers["good"] == (200, "upstream")
    assert isinstance(answers["second"], str), answers


def test_any_purpose_mutant_accepts_a_leaf_without_client_auth(pki: Any) -> None:
    answers = asyncio.run(_answers(pki, check_san=True, any_purpose=True))
    assert answers["good"] == answers["second"] == answers["no_eku"] == (200, "upstream")
    assert all(isinstance(answers[name], str) for name in ("none", "wrong_san", "foreign_ca")), answers
