"""Authorization server metadata (RFC 8414 / OpenID discovery): AUTH-ASM-01 … 09."""

from __future__ import annotations

import json
from typing import Any

from conformance import Blocked, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.host.asmeta import AsMetadata, as_metadata_urls, discover_as_metadata
from conformance.host.discovery import PrmDiscovery
from conformance.host.http import HostHTTP
from conformance.host.identity import HostIdentity
from conformance.host.oauth import TokenEndpoint, choose_redirect_mode, negotiate_auth_method
from conformance.host.publisher import Publisher
from conformance.judges.auth import (
    auth_method_notes,
    auth_method_problems,
    endpoint_https_problems,
    identification_problems,
    iss_parameter_problems,
    s256_problems,
)
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites._linking import FlowAttempt, Linker
from conformance.suites._transport import loopback_run, transport_not_judged
from conformance.suites.auth.client import none_only_client

# Every well-known location a host may use for the issuer (RFC 8414 §3.1 path insertion, OpenID discovery with
# the path inserted or appended) is fetched, and each copy that is served is judged: a host may settle on any.
COPY_USED = "the copy the host settles on"
COPY_OAUTH = "the RFC 8414 copy (/.well-known/oauth-authorization-server, path inserted)"
COPY_OIDC = "the OpenID discovery copy (/.well-known/openid-configuration, path inserted or at the root)"
COPY_OIDC_APPENDED = "the OpenID discovery copy with the issuer's path appended"
ASM02 = attack_table(
    "AUTH-ASM-02",
    Attack(COPY_USED, "RFC 8414 §3.3; contract A AS table", named=True, expected="issuer identical"),
    Attack(COPY_OAUTH, "RFC 8414 §3.1, §3.3", expected="issuer identical"),
    Attack(COPY_OIDC, "RFC 8414 §5; OpenID Connect Discovery 1.0 §4.3", expected="issuer identical"),
    Attack(COPY_OIDC_APPENDED, "OpenID Connect Discovery 1.0 §4.1, §4.3", expected="issuer identical"),
)
# Members every served copy must agree on when both carry them: one authorization server has one metadata.
CONSISTENT_MEMBERS = (
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "jwks_uri",
    "code_challenge_methods_supported",
)
OTHER_ENDPOINTS = ("revocation_endpoint", "introspection_endpoint", "userinfo_endpoint", "end_session_endpoint")
SERVED = "served at a well-known location of the issuer"
OTHER_CASE = "every copy names the same " + ", ".join(OTHER_ENDPOINTS)
ASM01 = attack_table(
    "AUTH-ASM-01",
    Attack(SERVED, "RFC 8414 §3.1; OpenID Connect Discovery 1.0 §4; contract A Endpoints", named=True, expected="200"),
    *(
        Attack(f"every copy names the same {m}", "RFC 8414 §2, §3.2; contract A Endpoints", expected="the same")
        for m in CONSISTENT_MEMBERS
    ),
    Attack(OTHER_CASE, "RFC 8414 §2, §3.2; RFC 7009 §4; RFC 7662 §4", expected="the same"),
)


def copy_case(via: str) -> str:
    """The ASM-02 case of a well-known location (``via`` as :func:`as_metadata_urls` names it)."""
    if via.startswith("oauth-authorization-server"):
        return COPY_OAUTH
    return COPY_OIDC_APPENDED if "path appended" in via else COPY_OIDC


def disagreements(copies: list[tuple[str, str, dict[str, Any]]], members: tuple[str, ...]) -> list[str]:
    """Members two served copies both carry with different values (a member one copy omits is not judged)."""
    found = []
    for member in members:
        values = {url: doc[member] for _, url, doc in copies if member in doc}
        if len({json.dumps(v, sort_keys=True) for v in values.values()}) > 1:
            found.append(f"{member} differs: " + "; ".join(f"{url} says {json.dumps(v)}" for url, v in values.items()))
    return found


@rule("AUTH-ASM-01")
def test_metadata_is_served(host_http: HostHTTP, prm_discovery: PrmDiscovery) -> None:
    servers = prm_discovery.document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise Blocked("AUTH-PRM-03", f"authorization_servers is {servers!r}: no issuer to try")
    meta = discover_as_metadata(host_http, servers[0], try_all=True)  # a Failure says what each URL gave
    run = AttackRun.of("AUTH-ASM-01")
    run.tried_case(SERVED)
    observe(f"served at {meta.url} ({meta.via}); also at: {', '.join(meta.others) or 'none'}")
    for attack in run.table[1:]:
        members = OTHER_ENDPOINTS if attack.case == OTHER_CASE else (attack.case.rsplit(" ", 1)[1],)
        if len(meta.copies) < 2:
            run.inapplicable(attack.case, "one copy is served: nothing to compare")
            continue
        run.tried_case(attack.case, "; ".join(disagreements(meta.copies, members)) or None)
    omitted = sorted(
        {m for _, _, d in meta.copies for m in CONSISTENT_MEMBERS + OTHER_ENDPOINTS if m in d}
        - {m for m in CONSISTENT_MEMBERS + OTHER_ENDPOINTS if all(m in d for _, _, d in meta.copies)}
    )
    if omitted:
        observe(f"reported, not judged: members some copies carry and others omit: {omitted}")
    run.conclude()


@rule("AUTH-ASM-02")
def test_issuer_is_identical(host_http: HostHTTP, as_metadata: AsMetadata) -> None:
    run = AttackRun.of("AUTH-ASM-02")
    run.tried_case(COPY_USED, "; ".join(as_metadata.issuer_problems()) or None)
    every = discover_as_metadata(host_http, as_metadata.expected_issuer, try_all=True)
    served = {copy_case(via): (url, doc) for via, url, doc in every.copies}
    locations = {copy_case(via) for via, _ in as_metadata_urls(as_metadata.expected_issuer)}
    for case in (COPY_OAUTH, COPY_OIDC, COPY_OIDC_APPENDED):
        if case not in locations:
            run.inapplicable(case, "the issuer has no path: the same URL as the OpenID discovery copy")
        elif case not in served:
            run.inapplicable(case, "not served (one served copy is enough for AUTH-ASM-01)")
        else:
            url, doc = served[case]
            issuer = doc.get("issuer")
            wrong = issuer != as_metadata.expected_issuer
            problem = f"issuer {json.dumps(issuer)} in {url} is not identical to {as_metadata.expected_issuer!r}"
            run.tried_case(case, problem if wrong else None)
    observe(f"the listed issuer {as_metadata.expected_issuer!r}, compared character for character")
    run.conclude()


@rule("AUTH-ASM-03")
def test_s256_is_advertised(as_metadata: AsMetadata) -> None:
    problems = s256_problems(as_metadata.document)
    expect(not problems, "; ".join(problems))
    observe(f"code_challenge_methods_supported: {as_metadata.document.get('code_challenge_methods_supported')!r}")


@rule("AUTH-ASM-04")
def test_endpoints_are_https(host_http: HostHTTP, as_metadata: AsMetadata) -> None:
    problems = endpoint_https_problems(as_metadata.document, judged=lambda url: not loopback_run(host_http, url))
    expect(not problems, "; ".join(problems))
    if endpoint_https_problems(as_metadata.document):
        transport_not_judged("HTTPS of authorization_endpoint and token_endpoint", "both are present and absolute")
    endpoints = {k: as_metadata.document.get(k) for k in ("authorization_endpoint", "token_endpoint")}
    observe("absolute HTTPS URLs: " + ", ".join(f"{k} {v}" for k, v in endpoints.items()))


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
        probe = none_only_client(other)
        return linker.attempt(client=probe, tokens=TokenEndpoint(linker.http, as_metadata, probe))
