"""Protected resource metadata (RFC 9728): AUTH-PRM-01 … 06."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

import httpx
import pytest

from conformance import TargetError, early, expect, fail, observe, rule
from conformance.config import Target
from conformance.host import InvalidResponse
from conformance.host.asmeta import AsMetadata, discover_as_metadata
from conformance.host.challenge import first_bearer_challenge
from conformance.host.discovery import (
    PrmDiscovery,
    discover_prm,
    json_object,
    opening_method,
    unauthenticated_probe,
)
from conformance.host.http import HostHTTP
from conformance.judges.auth import (
    challenge_problems,
    prm_optional_field_problems,
    prm_resource_problems,
    prm_servers_problems,
    scope_problems,
    unlisted_scopes,
)
from conformance.judges.declarations import CHALLENGE_META_KEY
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites._linking import blocked_by, challenge_probe
from conformance.suites._tool_access import Unauthorized, obtained_results, unauthorized_answers
from conformance.suites._transport import judge_https


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
    observe(f"`resource` {resource!r} is the URL the host connects to ({tool_server_target.base_url})")


@rule("AUTH-PRM-04")
def test_optional_field_types(prm_discovery: PrmDiscovery) -> None:
    problems = prm_optional_field_problems(prm_discovery.document)
    expect(not problems, "; ".join(problems))
    optional = ("scopes_supported", "resource_documentation", "resource_policy_uri", "resource_tos_uri")
    present = [name for name in optional if name in prm_discovery.document]
    observe(f"{prm_discovery.url}: optional fields present and well typed: {', '.join(present) or 'none'}")


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
    observe(f"each issuer serves metadata naming itself, character for character: {', '.join(map(repr, servers))}")


FIRST_401 = "the 401 a host meets first"
OTHER_401 = "every other 401 of the run"
META_CHALLENGES = 'the challenges of in-call auth errors (_meta["mcp/www_authenticate"])'
PRM05 = attack_table(
    "AUTH-PRM-05",
    Attack(FIRST_401, "RFC 9728 §5.1; RFC 6750 §3; contract A Errors", named=True, expected="points to this metadata"),
    Attack(OTHER_401, "RFC 9728 §5.1; RFC 6750 §3; contract A Errors", expected="points to this metadata"),
    Attack(META_CHALLENGES, "RFC 9728 §5.1; contract A Tool result; Errors", expected="points to this metadata"),
)


def meta_challenge_urls(host_http: HostHTTP) -> dict[str, str]:
    """resource_metadata URL -> the first tool result of the run whose in-call challenge names it."""
    urls: dict[str, str] = {}
    for found in obtained_results(host_http):
        meta = found.result.get("_meta")
        values = meta.get(CHALLENGE_META_KEY) if isinstance(meta, Mapping) else None
        if not isinstance(values, list):
            continue  # the challenge's form is AUTH-CHAL-01's
        challenge = first_bearer_challenge([v for v in values if isinstance(v, str)])
        url = challenge.get("resource_metadata") if challenge else None
        if isinstance(url, str) and url:
            urls.setdefault(url, f"the in-call auth error of {found.describe()}")
    return urls


@pytest.fixture(scope="session")
@early()
def first_401(host_http: HostHTTP, tool_server_target: Target) -> tuple[str, httpx.Response] | TargetError:
    """The 401 a host meets first, fetched as the run starts (AUTH-PRM-05, which judges it, runs after every other
    check): what was sent and the answer, or the target's failure to answer."""
    try:
        response = unauthenticated_probe(host_http, tool_server_target.base_url)
        what = f"an unauthenticated {opening_method(response)}"
        if response.status_code != 401:
            # Anonymous read-only use is allowed: provoke the 401 a host meets with a token the server must refuse.
            observe(f"{what} answered {response.status_code} (anonymous use allowed); probed with an invalid token")
            response = challenge_probe(host_http, tool_server_target.base_url)
            what = f"an {opening_method(response)} with an invalid bearer token"
    except TargetError as exc:
        return exc
    return what, response


@rule("AUTH-PRM-05")
def test_401_challenge_points_to_metadata(
    host_http: HostHTTP, first_401: tuple[str, httpx.Response] | TargetError, prm_discovery: PrmDiscovery
) -> None:
    """The 401 a host meets first, then every 401 the run's tool calls met, then every in-call challenge of the
    run (this check runs after the others, suites/_order.py): each names a resource_metadata URL serving
    this resource's metadata (the 401s carry the Bearer challenge; an in-call challenge's form is AUTH-CHAL-01's)."""
    if isinstance(first_401, TargetError):
        raise first_401
    what, response = first_401
    expect(response.status_code == 401, f"{what} answered {response.status_code}, not 401")
    first = Unauthorized(what, tuple(response.headers.get_list("www-authenticate")), "AUTH-PRM-05")
    served: dict[str, str | None] = {}  # resource_metadata URL -> what is wrong with what it serves

    def serves_this_metadata(url: str, where: str) -> list[str]:
        if url not in served:
            try:
                document = json_object(host_http.get(url, metadata_driven=True), "resource_metadata URL")
            except InvalidResponse as exc:  # not this resource's metadata; a transport failure is no case's
                served[url] = f"serves no metadata ({exc.message})"
            else:
                same = document == prm_discovery.document
                served[url] = None if same else "serves different metadata than the discovered document"
        return [f"{url} (named by {where}) {served[url]}"] if served[url] else []

    def judge_401(found: Unauthorized) -> list[str]:
        header = ", ".join(found.challenges)
        wrong, _ = challenge_problems(header)
        challenge = first_bearer_challenge(list(found.challenges))
        url = challenge.get("resource_metadata") if challenge else None
        if not wrong and not url:  # the header's first Bearer challenge has it; another header's may not
            wrong = ["the Bearer challenge has no resource_metadata parameter"]
        where = f"the 401 to {found.what}" + (f" (during {found.during})" if found.during != "AUTH-PRM-05" else "")
        return [f"{where}: {p}" for p in wrong] + (serves_this_metadata(url, where) if url else [])

    run = AttackRun.of("AUTH-PRM-05")
    with run.attempt(FIRST_401):
        problems = judge_401(first)
        expect(not problems, "; ".join(problems))
    others = unauthorized_answers(host_http)
    if others:
        with run.attempt(OTHER_401):
            problems = [p for found in others for p in judge_401(found)]
            shown = "; ".join(problems[:8]) + (f" (and {len(problems) - 8} more)" if len(problems) > 8 else "")
            expect(not problems, shown)
    else:
        run.inapplicable(OTHER_401, "no other call of the run was answered with 401")
    in_call = meta_challenge_urls(host_http)
    if in_call:
        with run.attempt(META_CHALLENGES):
            problems = [p for url, where in in_call.items() for p in serves_this_metadata(url, where)]
            expect(not problems, "; ".join(problems))
    else:
        run.inapplicable(META_CHALLENGES, "no tool call of the run was answered with an in-call challenge")
    observe(f"{1 + len(others)} HTTP 401 answer(s) and {len(in_call)} in-call challenge URL(s) judged: {list(served)}")
    run.conclude()


@rule("AUTH-PRM-06")
def test_challenge_names_scopes(prm_discovery: PrmDiscovery) -> None:
    challenge = prm_discovery.challenge
    problems = scope_problems(challenge)
    expect(not problems, "; ".join(problems))
    if unlisted := unlisted_scopes(challenge, prm_discovery.document.get("scopes_supported")):
        observe(unlisted)
    observe(f'the 401 challenge names scope="{challenge.get("scope") if challenge else ""}"')
