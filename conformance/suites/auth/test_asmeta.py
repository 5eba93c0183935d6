"""Authorization server metadata (RFC 8414 / OpenID discovery): AUTH-ASM-01 … 09."""

from __future__ import annotations

from conformance import Blocked, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host.asmeta import AsMetadata, discover_as_metadata
from conformance.host.discovery import PrmDiscovery
from conformance.host.http import HostHTTP
from conformance.host.identity import HostIdentity
from conformance.host.oauth import OAuthClient, TokenEndpoint, choose_redirect_mode, negotiate_auth_method
from conformance.host.publisher import Publisher
from conformance.suites._linking import FlowAttempt, Linker
from conformance.suites._transport import loopback_run, transport_not_judged
from conformance.validate.auth import (
    auth_method_notes,
    auth_method_problems,
    identification_problems,
    iss_parameter_problems,
    s256_problems,
)


@rule("AUTH-ASM-01")
def test_metadata_is_served(host_http: HostHTTP, prm_discovery: PrmDiscovery) -> None:
    servers = prm_discovery.document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise Blocked("AUTH-PRM-03", f"authorization_servers is {servers!r}: no issuer to try")
    meta = discover_as_metadata(host_http, servers[0], try_all=True)  # a Failure says what each URL gave
    observe(f"served at {meta.url} ({meta.via}); also at: {', '.join(meta.others) or 'none'}")


@rule("AUTH-ASM-02")
def test_issuer_is_identical(as_metadata: AsMetadata) -> None:
    as_metadata.require_issuer_match()
    issuer = as_metadata.document.get("issuer")
    observe(f"issuer {issuer!r} at {as_metadata.url} is the listed {as_metadata.expected_issuer!r}")


@rule("AUTH-ASM-03")
def test_s256_is_advertised(as_metadata: AsMetadata) -> None:
    problems = s256_problems(as_metadata.document)
    expect(not problems, "; ".join(problems))
    observe(f"code_challenge_methods_supported: {as_metadata.document.get('code_challenge_methods_supported')!r}")


@rule("AUTH-ASM-04")
def test_endpoints_are_https(host_http: HostHTTP, as_metadata: AsMetadata) -> None:
    problems = as_metadata.https_problems(judged=lambda url: not loopback_run(host_http, url))
    expect(not problems, "; ".join(problems))
    if as_metadata.https_problems():
        transport_not_judged("HTTPS of authorization_endpoint and token_endpoint", "both are present and absolute")


@rule("AUTH-ASM-05")
def test_host_can_identify_itself(as_metadata: AsMetadata, conformance_settings: Settings) -> None:
    problems = identification_problems(as_metadata.document, client_id=conformance_settings.get("client_id"))
    expect(not problems, "; ".join(problems))
    ways = []
    if as_metadata.cimd_supported:
        ways.append("CIMD (client_id_metadata_document_supported: true)")
    if as_metadata.registration_endpoint:
        ways.append(f"DCR ({as_metadata.registration_endpoint})")
    if conformance_settings.get("client_id"):
        ways.append("a predefined client (client_id configured)")
    observe("available: " + "; ".join(ways))


@rule("AUTH-ASM-06")
def test_auth_methods_are_usable(as_metadata: AsMetadata) -> None:
    problems = auth_method_problems(as_metadata.document)
    expect(not problems, "; ".join(problems))
    for note in auth_method_notes(as_metadata.document):
        observe(f"reported, not judged (RFC 7591 §2 allows other methods): {note}")
    if as_metadata.cimd_supported:
        observe(negotiate_auth_method(as_metadata.auth_methods_supported).reason)


@rule("AUTH-ASM-07")
def test_every_advertised_scope_is_usable(as_metadata: AsMetadata, linker: Linker, first_link: FlowAttempt) -> None:
    scopes = as_metadata.scopes_supported
    if not scopes:
        needs("scopes_supported in the authorization server metadata")
    if first_link.accepted is None or not first_link.accepted.code:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "the default authorization failed")
    observe(f"the host requests by default: {linker.host.scopes.value} (from {linker.host.scopes.source})")
    attempt = linker.attempt(scopes=scopes, exchange=False)
    callback = attempt.callback
    asked = " ".join(scopes)
    if callback is None:
        fail(f"a request for every advertised scope ({asked}) did not come back: {attempt.problem}")
    if callback.error is not None:
        fail(f"a request for every advertised scope ({asked}) failed: {attempt.problem}")
    expect(bool(callback.code), f"a request for every advertised scope ({asked}) returned no code")


@rule("AUTH-ASM-08")
def test_iss_parameter_is_advertised(as_metadata: AsMetadata, host_identity: HostIdentity) -> None:
    redirect = choose_redirect_mode(as_metadata, host_identity, "callback-id")
    observe(f"redirect mode {redirect.mode} ({redirect.reason}); CIMD document {redirect.client_id}")
    # The rule's parenthesis: true *and* issuer identification met (the identical issuer string). Never a pass
    # while the host, for the same metadata, falls back to callback-specific redirects.
    problems = iss_parameter_problems(as_metadata, why=redirect.reason)
    expect(not problems, "; ".join(problems))


# The first authorization's rules that say the authorization server refused the host's CIMD client itself.
CIMD_REFUSED = ("AUTH-CIMD-01", "AUTH-CIMD-02")


@rule("AUTH-ASM-09")
def test_cimd_is_supported(as_metadata: AsMetadata, linker: Linker, first_link: FlowAttempt) -> None:
    """Contract, Authentication 12: the authorization server supports CIMD (none or private_key_jwt); DCR or a
    predefined client may stand beside it, not instead of it."""
    flag = as_metadata.document.get("client_id_metadata_document_supported")
    if flag is not True:
        instead = " (it offers DCR instead)" if as_metadata.registration_endpoint else ""
        fail(f"client_id_metadata_document_supported is {flag!r}, not true: no CIMD{instead}")
    decision = negotiate_auth_method(as_metadata.auth_methods_supported)
    if not decision.intersection:
        fail(f"CIMD is advertised but a CIMD client cannot authenticate at the token endpoint: {decision.reason}")
    client = linker.host.client
    if client.kind != "cimd":
        needs(
            f"a CIMD link (the host identifies by {client.kind})",
            "--client-registration cimd or auto, without --client-id",
        )
    if first_link.ok:
        observe(f"a CIMD client ({client.auth_method}) linked: {client.client_id}")
        return
    if first_link.need is not None:
        first_link.require()
    token = first_link.token
    if first_link.rule not in CIMD_REFUSED and not (token is not None and token.error == "invalid_client"):
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "the first authorization failed")
    refused = f"the host's CIMD client ({client.auth_method}) was refused: {first_link.problem}"
    if client.auth_method == "none" or "none" not in decision.intersection:
        fail(refused)
    if linker.publisher is None:
        needs(
            f"{refused}; a CIMD client listing only `none`, published by the harness",
            "--publisher-certfile/--publisher-keyfile",
        )
    attempt = _link_with_none(linker, as_metadata, linker.publisher)
    if not attempt.ok:
        fail(f"{refused}; a CIMD client listing only `none` was refused as well: {attempt.problem}")
    observe(f"{refused}; but a CIMD client listing only `none` linked ({attempt.client.client_id})")


def _link_with_none(linker: Linker, as_metadata: AsMetadata, publisher: Publisher) -> FlowAttempt:
    """A full authorization of a CIMD client whose document lists only `none`, published on another origin (the
    host's own documents, cached by the authorization server, stay as they are)."""
    with Publisher(
        certfile=publisher.certfile, keyfile=publisher.keyfile, host=publisher.host, redactor=linker.http.redactor
    ) as other:
        identity = other.identity
        assert identity is not None
        document = {
            **identity.client_document(),
            "token_endpoint_auth_methods_supported": ["none"],
            "token_endpoint_auth_method": "none",
        }
        for name in ("jwks_uri", "token_endpoint_auth_signing_alg"):
            document.pop(name)
        other.override("/oauth/client.json", 200, document)
        probe = OAuthClient("cimd", identity.stable_document_url, "none", (identity.redirect_uri(),), identity=identity)
        return linker.attempt(client=probe, tokens=TokenEndpoint(linker.http, as_metadata, probe))
