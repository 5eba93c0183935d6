"""The sandbox's own TLS clients (source fetches, objstore_b writes) share one context per trust setting (building one
per request would load the system trust store each time), and a new CA written where the old one was is
trusted at once."""

from __future__ import annotations

import ssl
from pathlib import Path

import trustme

from conformance.reference.compression._tls import client_context


def test_one_context_per_trust_setting(tmp_path: Path) -> None:
    ca_file = tmp_path / "ca.pem"
    trustme.CA(organization_name="first").cert_pem.write_to_path(str(ca_file))
    context = client_context(str(ca_file))
    assert client_context(str(ca_file)) is context
    assert client_context(None) is client_context(None) is not context
    # The stack's CA comes on top of the system's trust, as ssl.create_default_context() + the CA file did.
    system = ssl.create_default_context()
    assert len(context.get_ca_certs()) == len(system.get_ca_certs()) + 1
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_a_new_ca_at_the_same_path_is_trusted(tmp_path: Path) -> None:
    ca_file = tmp_path / "ca.pem"
    trustme.CA(organization_name="first stack").cert_pem.write_to_path(str(ca_file))
    first = client_context(str(ca_file))
    trustme.CA(organization_name="second stack").cert_pem.write_to_path(str(ca_file))
    second = client_context(str(ca_file))
    assert second is not first
    organizations = {value for cert in second.get_ca_certs() for rdn in cert["subject"] for key, value in rdn}
    assert "second stack" in organizations and "first stack" not in organizations
