"""Protected resource metadata (RFC 9728): AUTH-PRM-01 … 06."""

from __future__ import annotations

from urllib.parse import urlsplit

from conformance import expect, fail, observe, rule
from conformance.config import Target
from conformance.host.asmeta import AsMetadata, discover_as_metadata
from conformance.host.discovery import (
    PrmDiscovery,
    challenge_of,
    discover_prm,
    json_object,
    opening_method,
    unauthenticated_probe,
)
from conformance.host.http import HostHTTP
from conformance.suites._linking import blocked_by, challenge_probe
from conformance.suites._transport import judge_https
from conformance.validate.auth import (
    challenge_problems,
    prm_optional_field_problems,
    prm_resource_problems,
    prm_servers_problems,
    scope_problems,
)


@rule("AUTH-PRM-01")
def test_metadata_is_served(host_http: HostHTTP, tool_server_target: Target) -> None:
    found = discover_prm(host_http, tool_server_target.base_url)
    held = f"served as JSON via {found.via}: {found.url}"
    https = judge_https(host_http, found.url, "HTTPS of the protected resource metadata", held=held)
    expect(https, f"metadata served over {urlsplit(found.url).scheme}, not HTTPS")
    observe(held)


@rule("AUTH-PRM-02")
def test_resource_is_canonical(host_http: HostHTTP, prm_discovery: PrmDiscovery, tool_server_target: Target) -> None:
    problems = prm_resource_problems(prm_discovery.document, tool_server_target.base_url, judge_scheme=False)
    expect(not problems, "; ".join(problems))
    resource = prm_discovery.document["resource"]
    https = judge_https(host_http, resource, "`resource` an HTTPS URL", held="`resource` is the URL the host uses")
    expect(https, f"`resource` {resource!r} is not an HTTPS URL")


@rule("AUTH-PRM-04")
def test_optional_field_types(prm_discovery: PrmDiscovery) -> None:
    problems = prm_optional_field_problems(prm_discovery.document)
    expect(not problems, "; ".join(problems))


@rule("AUTH-PRM-03")
def test_authorization_servers_match_their_issuers(
    host_http: HostHTTP, prm_discovery: PrmDiscovery, as_metadata: AsMetadata
) -> None:
    if shape := prm_servers_problems(prm_discovery.document):
        fail("; ".join(shape))
    servers = prm_discovery.document["authorization_servers"]
    problems = []
    for issuer in servers:
        if issuer == as_metadata.expected_issuer:
            meta = as_metadata
        else:
            with blocked_by("AUTH-ASM-01"):
                meta = discover_as_metadata(host_http, issuer)
        if not meta.issuer_matches:
            problems.append(f"{issuer!r} serves metadata whose issuer is {meta.issuer!r} ({meta.url})")
    expect(not problems, "; ".join(problems) + " (compared character for character)")


@rule("AUTH-PRM-05")
def test_401_challenge_points_to_metadata(
    host_http: HostHTTP, tool_server_target: Target, prm_discovery: PrmDiscovery
) -> None:
    response = unauthenticated_probe(host_http, tool_server_target.base_url)
    what = f"an unauthenticated {opening_method(response)}"
    if response.status_code != 401:
        # Anonymous read-only use is allowed: provoke the 401 a host meets with a token the server must refuse.
        observe(f"{what} answered {response.status_code} (anonymous use allowed); probed with an invalid token")
        response = challenge_probe(host_http, tool_server_target.base_url)
        what = f"an {opening_method(response)} with an invalid bearer token"
    expect(response.status_code == 401, f"{what} answered {response.status_code}, not 401")
    problems, _ = challenge_problems(response.headers.get("www-authenticate") or "")
    expect(not problems, f"the 401 to {what}: " + "; ".join(problems))
    challenge = challenge_of(response)
    url = challenge.get("resource_metadata") if challenge else None
    if not url:  # the header's first Bearer challenge has it; another header's may not
        fail(f"the 401 to {what}: the Bearer challenge has no resource_metadata parameter")
    served = json_object(host_http.get(url, metadata_driven=True), "resource_metadata URL")
    expect(served == prm_discovery.document, f"{url} serves different metadata than the discovered document")


@rule("AUTH-PRM-06")
def test_challenge_names_scopes(prm_discovery: PrmDiscovery) -> None:
    problems = scope_problems(prm_discovery.challenge, prm_discovery.document.get("scopes_supported"))
    expect(not problems, "; ".join(problems))
