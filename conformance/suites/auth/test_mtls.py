"""The host's transport identity (mTLS): AUTH-MTLS-01, only with ``--mtls``.

The target must be configured to trust the intermediate of the harness's test PKI (``--mtls-material``, made by
``conformance.host.mtls.make_mtls_material``) and to expect ``--mtls-dns-name``. The MCP opening request
(``initialize`` or ``server/discover``, by the era) is sent with each client certificate: the host's own, and a
second leaf of the same intermediate with the same SAN (leaves rotate: no pinning), must be accepted (any HTTP answer
that is not a certificate refusal); no certificate, a wrong SAN dnsName, a leaf without the clientAuth EKU and a leaf
of another CA must be refused (a failed handshake, a closed connection, or 403/495/496).
"""

from __future__ import annotations

import ssl
from pathlib import Path

from cryptography import x509

from conformance import TargetError, expect, needs, observe, rule
from conformance.config import Settings, Target
from conformance.host import LimitReached
from conformance.host.discovery import open_endpoint
from conformance.host.http import HostHTTP, own_ssl_context
from conformance.host.mtls import san_dns_names
from conformance.suites._cases import Attack, AttackRun, attack_table

CERT_REFUSALS = (403, 495, 496)  # forbidden; nginx's "SSL certificate error" and "no certificate"
MTLS = "AUTH-MTLS-01; contract A Auth 5"
SECOND = "a second leaf of the intermediate with the same SAN"
EKU = "a leaf without the clientAuth EKU (serverAuth only)"
NAMED = ("a wrong SAN dnsName", "a leaf of another CA")
STEMS = {
    "good": "mtls-client",
    SECOND: "mtls-client-second",
    "a wrong SAN dnsName": "mtls-client-wrong-san",
    "a leaf of another CA": "mtls-client-foreign-ca",
    "a SAN dnsName extending the configured name": "mtls-client-san-extended",
    EKU: "mtls-client-server-eku",
}
MTLS01 = attack_table(
    "AUTH-MTLS-01",
    Attack(SECOND, f"{MTLS} (do not pin a leaf fingerprint: leaves rotate)", named=True),
    Attack("no certificate", f"{MTLS} (no certificate refused); RFC 8705 §2", named=True),
    Attack("a wrong SAN dnsName", f"{MTLS} (SAN dnsName = the configured name)", named=True),
    Attack("a leaf of another CA", f"{MTLS} (chain to the configured intermediate); RFC 5280 §6", named=True),
    Attack(
        "a SAN dnsName extending the configured name",
        f"{MTLS} (SAN dnsName = the configured name); RFC 6125 §6.4.1 (exact DNS-ID match)",
    ),
    Attack(EKU, f"{MTLS} (valid for client authentication); RFC 5280 §4.2.1.12", named=True),
)
OPTION = "--mtls with --mtls-material and --mtls-dns-name"


class _CertContexts:
    """The TLS context each client certificate of the check is presented from: one of the check's own, with each
    certificate loaded in turn just before its one connection (every context costs the system trust store, a
    costly load; one per certificate would be a visible share of the checks' CPU in an auth+profile run). A context
    holds one certificate per key type, so a certificate of another key type than the first (a material not made by
    the harness) gets a shared context of its own instead."""

    def __init__(self, ca_bundle: Path | None) -> None:
        self.ca_bundle = ca_bundle
        self._context: ssl.SSLContext | None = None
        self._kind: object = None

    def presenting(self, pair: tuple[str, str]) -> ssl.SSLContext | None:
        try:
            kind = x509.load_pem_x509_certificate(Path(pair[0]).read_bytes()).public_key_algorithm_oid
        except (OSError, ValueError):  # not one PEM certificate: the shared path loads it (and says why it fails)
            return None
        if self._context is None:
            self._context, self._kind = own_ssl_context(self.ca_bundle), kind
        if kind != self._kind:
            return None
        self._context.load_cert_chain(*pair)
        return self._context


def _answer(
    settings: Settings, http: HostHTTP, url: str, pair: tuple[str, str] | None, contexts: _CertContexts
) -> str | int:
    """The HTTP status of the MCP opening request with this client certificate (None: none at all), or why no
    answer came."""
    context = contexts.presenting(pair) if pair is not None else None
    client = HostHTTP.from_settings(
        settings, redactor=http.redactor, client_cert=pair, pacer=http.pacer, tls_context=context
    )
    try:
        return open_endpoint(client, url, host=http).status_code
    except LimitReached:
        raise
    except TargetError as exc:
        return str(exc)
    finally:
        client.close()


@rule("AUTH-MTLS-01")
def test_host_client_certificate(
    host_http: HostHTTP, conformance_settings: Settings, tool_server_target: Target
) -> None:
    s = conformance_settings
    if not s.get("mtls"):
        needs("mTLS host identity checks", OPTION)
    material, dns_name = s.get("mtls_material"), s.get("mtls_dns_name")
    if not material or not dns_name:
        needs("the harness's test PKI trusted by the target and the SAN dnsName it expects", OPTION)
    directory = Path(material)
    pairs = {name: (str(directory / f"{stem}.pem"), str(directory / f"{stem}.key")) for name, stem in STEMS.items()}
    missing = [p for name in ("good", *NAMED) for p in pairs[name] if not Path(p).is_file()]
    if missing:
        needs(f"the test PKI files {missing}", "--mtls-material")
    leaf = x509.load_pem_x509_certificate(Path(pairs["good"][0]).read_bytes())
    if dns_name not in san_dns_names(leaf):
        needs(f"a client certificate for {dns_name!r} (the material's is {san_dns_names(leaf)})", "--mtls-material")
    url = s.get("mtls_url") or tool_server_target.base_url
    contexts = _CertContexts(s.get("ca_bundle"))
    good = _answer(s, host_http, url, pairs["good"], contexts)
    expect(
        isinstance(good, int) and good not in CERT_REFUSALS,
        f"the host's certificate (SAN {dns_name}, chained to the intermediate) was refused: {good}",
    )
    run = AttackRun.of("AUTH-MTLS-01")
    for attack in run.table:
        pair = None if attack.case == "no certificate" else pairs[attack.case]
        if pair is not None and not Path(pair[0]).is_file():
            run.not_tried(attack.case, f"{pair[0]} is not in --mtls-material (made by an older harness)")
            continue
        answer = _answer(s, host_http, url, pair, contexts)
        accepted = isinstance(answer, int) and answer not in CERT_REFUSALS
        if attack.case == SECOND:
            run.tried_case(SECOND, None if accepted else f"{SECOND} was refused ({answer}): a pinned leaf?")
            continue
        run.tried_case(attack.case, f"{attack.case} was accepted (HTTP {answer})" if accepted else None)
        if not accepted:
            observe(f"{attack.case}: refused ({answer})"[:200])
    run.conclude()
