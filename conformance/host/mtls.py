"""Client certificates for the mutual-TLS connector: a test CA → connector intermediate → host leaf, plus the negatives.

The leaf has the clientAuth EKU and the configured SAN dnsName, and chains to the intermediate the target is
configured to trust. Negatives: a leaf with a wrong SAN (same intermediate) and a leaf from a foreign CA (right
SAN). Each leaf is written as ``<name>.pem`` (leaf followed by its intermediate, ready for httpx's ``cert=``) and
``<name>.key`` (unencrypted PKCS#8); the CA certificates the target should trust are written too.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = dt.timedelta(days=2)
BACKDATE = dt.timedelta(hours=1)  # tolerate a target whose clock is slightly behind


@dataclass(frozen=True)
class Issued:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


@dataclass(frozen=True)
class ClientCert:
    """A leaf ready for httpx: ``cert=(certfile, keyfile)``."""

    certfile: Path  # leaf + intermediate
    keyfile: Path
    leaf: x509.Certificate

    @property
    def pair(self) -> tuple[str, str]:
        return str(self.certfile), str(self.keyfile)


@dataclass(frozen=True)
class MtlsMaterial:
    dns_name: str
    root_file: Path  # the test CA: what a target trusts to verify the chain
    intermediate_file: Path  # the "connector mTLS intermediate CA"
    ca_bundle: Path  # root + intermediate in one file
    good: ClientCert
    second: ClientCert  # another leaf of the intermediate with the same SAN (leaves rotate: no pinning)
    wrong_san: ClientCert
    foreign_ca: ClientCert
    root: Issued
    intermediate: Issued


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "conformance test PKI"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _key_usage(*, signs_certificates: bool) -> x509.KeyUsage:
    """Digital signatures always; certificate and CRL signing for a CA only."""
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def make_ca(common_name: str, parent: Issued | None = None, *, path_length: int | None = None) -> Issued:
    """A root (no parent) or an intermediate CA."""
    key = _key()
    subject = _name(common_name)
    issuer_name = parent.cert.subject if parent else subject
    signing_key = parent.key if parent else key
    builder = (
        _builder(subject, issuer_name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
        .add_extension(_key_usage(signs_certificates=True), critical=True)
    )
    if parent is not None:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(parent.key.public_key()), critical=False
        )
    return Issued(builder.sign(signing_key, hashes.SHA256()), key)


def make_client_leaf(parent: Issued, dns_name: str, *, client_auth: bool = True) -> Issued:
    """An end-entity certificate with SAN dNSName ``dns_name`` and (by default) the clientAuth EKU."""
    key = _key()
    usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client_auth else [ExtendedKeyUsageOID.SERVER_AUTH]
    cert = (
        _builder(_name(dns_name), parent.cert.subject, key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(signs_certificates=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name)]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(parent.key.public_key()), critical=False)
        .sign(parent.key, hashes.SHA256())
    )
    return Issued(cert, key)


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _write_client(directory: Path, name: str, leaf: Issued, chain: list[x509.Certificate]) -> ClientCert:
    certfile = directory / f"{name}.pem"
    keyfile = directory / f"{name}.key"
    certfile.write_bytes(b"".join(pem(c) for c in [leaf.cert, *chain]))
    key_bytes = leaf.key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    keyfile.touch(mode=0o600)
    keyfile.write_bytes(key_bytes)
    return ClientCert(certfile, keyfile, leaf.cert)


def make_mtls_material(directory: Path | str, dns_name: str, *, wrong_dns_name: str | None = None) -> MtlsMaterial:
    """Write the whole set under ``directory`` and return where everything is."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    root = make_ca("conformance test root CA", path_length=1)
    intermediate = make_ca("conformance connector mTLS intermediate CA", root, path_length=0)
    foreign_root = make_ca("conformance foreign root CA", path_length=1)
    foreign_intermediate = make_ca("conformance foreign intermediate CA", foreign_root, path_length=0)
    wrong = wrong_dns_name or f"wrong-san.{dns_name}"

    root_file = out / "mtls-root-ca.pem"
    root_file.write_bytes(pem(root.cert))
    intermediate_file = out / "mtls-intermediate-ca.pem"
    intermediate_file.write_bytes(pem(intermediate.cert))
    ca_bundle = out / "mtls-ca-bundle.pem"
    ca_bundle.write_bytes(pem(root.cert) + pem(intermediate.cert))
    # Nearly-right leaves of the trusted intermediate (the mutual-TLS rule's attack table): the configured name extended
    # (a prefix match accepts it), and the right SAN without the clientAuth EKU.
    extended = make_client_leaf(intermediate, f"{dns_name}.conformance.invalid")
    _write_client(out, "mtls-client-san-extended", extended, [intermediate.cert])
    server_only = make_client_leaf(intermediate, dns_name, client_auth=False)
    _write_client(out, "mtls-client-server-eku", server_only, [intermediate.cert])
    return MtlsMaterial(
        dns_name=dns_name,
        root_file=root_file,
        intermediate_file=intermediate_file,
        ca_bundle=ca_bundle,
        good=_write_client(out, "mtls-client", make_client_leaf(intermediate, dns_name), [intermediate.cert]),
        second=_write_client(out, "mtls-client-second", make_client_leaf(intermediate, dns_name), [intermediate.cert]),
        wrong_san=_write_client(
            out, "mtls-client-wrong-san", make_client_leaf(intermediate, wrong), [intermediate.cert]
        ),
        foreign_ca=_write_client(
            out, "mtls-client-foreign-ca", make_client_leaf(foreign_intermediate, dns_name), [foreign_intermediate.cert]
        ),
        root=root,
        intermediate=intermediate,
    )


def san_dns_names(cert: x509.Certificate) -> list[str]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return list(san.get_values_for_type(x509.DNSName))
