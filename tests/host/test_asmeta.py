"""Authorization-server metadata discovery: URL order, exact issuer comparison, schema messages naming fields."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core import _context
from conformance.host import InvalidResponse
from conformance.host._guard import UrlGuard
from conformance.host.asmeta import as_metadata_urls, discover_as_metadata, load_schema, schema_problems
from conformance.host.http import HostHTTP
from tests._examples import examples


def client(handler: Callable[[httpx.Request], httpx.Response]) -> HostHTTP:
    # allow_private_network: no DNS look-ups for the made-up hosts of these tests.
    return HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(allow_private_network=True), retry=None)


def metadata(issuer: str, **extra: object) -> dict[str, object]:
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer.rstrip('/')}/authorize",
        "token_endpoint": f"{issuer.rstrip('/')}/token",
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }


def test_issuer_with_path_uses_insertion_then_oidc_inserted_then_appended() -> None:
    assert [u for _, u in as_metadata_urls("https://as.example/tenant/one")] == [
        "https://as.example/.well-known/oauth-authorization-server/tenant/one",
        "https://as.example/.well-known/openid-configuration/tenant/one",
        "https://as.example/tenant/one/.well-known/openid-configuration",
    ]


def test_issuer_without_path_tries_oauth_then_openid() -> None:
    expected = [
        "https://as.example:8443/.well-known/oauth-authorization-server",
        "https://as.example:8443/.well-known/openid-configuration",
    ]
    assert [u for _, u in as_metadata_urls("https://as.example:8443")] == expected
    # RFC 8414 §3.1: a terminating slash is removed before insertion, so "/" is no path.
    assert [u for _, u in as_metadata_urls("https://as.example:8443/")] == expected


def test_trailing_slash_of_a_path_is_dropped_before_insertion() -> None:
    urls = [u for _, u in as_metadata_urls("https://as.example/t/")]
    assert urls == [
        "https://as.example/.well-known/oauth-authorization-server/t",
        "https://as.example/.well-known/openid-configuration/t",
        "https://as.example/t/.well-known/openid-configuration",
    ]


_segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=8)


@settings(max_examples=examples(60), deadline=None, database=None)
@given(
    host=st.from_regex(r"\A[a-z][a-z0-9]{0,10}\.(example|test)\Z"),
    port=st.one_of(st.none(), st.integers(1, 65535)),
    segments=st.lists(_segment, max_size=3),
)
def test_discovery_urls_for_generated_issuers(host: str, port: int | None, segments: list[str]) -> None:
    origin = f"https://{host}" + (f":{port}" if port else "")
    path = "".join(f"/{s}" for s in segments)
    urls = as_metadata_urls(origin + path)
    assert len({u for _, u in urls}) == len(urls)
    for _, url in urls:
        assert url.startswith(origin + "/")  # the origin is kept exactly
    assert urls[0][1] == origin + "/.well-known/oauth-authorization-server" + path
    assert urls[1][1] == origin + "/.well-known/openid-configuration" + path
    if path:
        assert urls[2][1] == origin + path + "/.well-known/openid-configuration"
    else:
        assert len(urls) == 2


def test_first_document_with_the_exact_issuer_wins() -> None:
    issuer = "https://as.example/tenant"
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == "/.well-known/openid-configuration/tenant":
            return httpx.Response(200, json=metadata(issuer, authorization_response_iss_parameter_supported=True))
        return httpx.Response(404)

    record = _context.begin()
    try:
        found = discover_as_metadata(client(handler), issuer)
    finally:
        _context.end()
    assert found.via == "openid-configuration (path inserted)" and found.is_openid
    assert found.issuer_matches and found.iss_parameter_supported and found.supports_s256
    assert seen == [
        "https://as.example/.well-known/oauth-authorization-server/tenant",
        "https://as.example/.well-known/openid-configuration/tenant",
    ]
    assert len(record.exchanges) == 2  # each fetch is evidence
    assert "404" in found.tried[0]


def test_issuer_is_compared_exactly_and_a_mismatch_is_returned_for_the_verdict() -> None:
    issuer = "https://as.example"

    def handler(request: httpx.Request) -> httpx.Response:
        # trailing slash: the kind of difference that must never be normalized away
        return httpx.Response(200, json=metadata("https://as.example/"))

    found = discover_as_metadata(client(handler), issuer)
    assert not found.issuer_matches
    assert len(found.tried) == 2  # kept looking for an exact match before settling
    with pytest.raises(InvalidResponse, match=r'"https://as\.example/" .* not identical to "https://as\.example"'):
        found.require_issuer_match()


@pytest.mark.parametrize("served", ["https://AS.example", "https://as.example:443", "https://as.example/x"])
def test_no_normalizing_of_case_port_or_path(served: str) -> None:
    found = discover_as_metadata(client(lambda r: httpx.Response(200, json=metadata(served))), "https://as.example")
    assert not found.issuer_matches


def test_a_matching_later_document_beats_an_earlier_mismatching_one() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if "oauth-authorization-server" in request.url.path:
            return httpx.Response(200, json=metadata("https://other.example"))
        return httpx.Response(200, json=metadata("https://as.example"))

    found = discover_as_metadata(client(handler), "https://as.example")
    assert found.issuer_matches and found.via == "openid-configuration"
    assert list(found.others) == ["https://as.example/.well-known/oauth-authorization-server"]


def test_nothing_found_says_what_each_url_gave() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if "openid" in request.url.path:
            return httpx.Response(200, text="<html>", headers={"Content-Type": "text/html"})
        return httpx.Response(404)

    with pytest.raises(InvalidResponse) as info:
        discover_as_metadata(client(handler), "https://as.example")
    message = info.value.message
    assert "oauth-authorization-server" in message and "answered 404" in message
    assert "not JSON (Content-Type text/html)" in message


def test_try_all_reports_every_served_location() -> None:
    found = discover_as_metadata(
        client(lambda r: httpx.Response(200, json=metadata("https://as.example"))), "https://as.example", try_all=True
    )
    assert found.via == "oauth-authorization-server" and len(found.others) == 1


def test_metadata_accessors_read_only_well_typed_values() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json=metadata(
                "https://as.example",
                authorization_response_iss_parameter_supported="true",  # a string is not the boolean true
                client_id_metadata_document_supported=True,
                token_endpoint_auth_methods_supported=["none", "private_key_jwt"],
                code_challenge_methods_supported=["plain"],
                scopes_supported="openid",
                token_endpoint="http://as.example/token",
            ),
        )

    found = discover_as_metadata(client(handler), "https://as.example")
    assert not found.iss_parameter_supported and found.cimd_supported
    assert found.auth_methods_supported == ["none", "private_key_jwt"]
    assert not found.supports_s256 and found.scopes_supported is None
    assert 'scopes_supported: expected array, got string "openid"' in found.problems
    assert any(p.startswith("authorization_response_iss_parameter_supported: expected boolean") for p in found.problems)


# -- schemas -------------------------------------------------------------------------------------------------


def test_bundled_schemas_load() -> None:
    for name in ("prm", "as-metadata", "cimd"):
        assert load_schema(name)["type"] == "object"


def test_prm_problems_name_the_field() -> None:
    assert schema_problems({"resource": "https://t.example/mcp", "authorization_servers": ["https://as"]}, "prm") == []
    problems = schema_problems(
        {"resource": "http://t.example/mcp", "authorization_servers": [], "scopes_supported": ["a", 3]}, "prm"
    )
    assert any(p.startswith("resource:") for p in problems)
    assert "authorization_servers: must not be empty" in problems
    assert any(p.startswith("scopes_supported[1]: expected string, got integer") for p in problems)
    assert schema_problems({}, "prm") == [
        "authorization_servers: required field is missing",
        "resource: required field is missing",
    ]
    assert schema_problems([], "prm") == ["document: expected object, got array []"]


def test_prm_optional_string_fields_are_typed() -> None:
    document = {
        "resource": "https://t.example/mcp",
        "authorization_servers": ["https://as.example"],
        "resource_documentation": 5,
        "resource_tos_uri": None,
    }
    problems = schema_problems(document, "prm")
    assert any(p.startswith("resource_documentation: expected string") for p in problems)
    assert any(p.startswith("resource_tos_uri: expected string, got null") for p in problems)


def test_as_metadata_requires_issuer_and_endpoints() -> None:
    assert schema_problems({"issuer": "https://as.example"}, "as-metadata") == [
        "authorization_endpoint: required field is missing",
        "token_endpoint: required field is missing",
    ]


def test_cimd_schema_checks_the_host_document_shape() -> None:
    good = {
        "client_id": "https://host.example/oauth/client.json",
        "redirect_uris": ["https://host.example/cb"],
        "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks_uri": "https://host.example/oauth/jwks.json",
    }
    assert schema_problems(good, "cimd") == []
    bad = {
        **good,
        "client_id": "https://host.example/oauth/client.json?method=pkjwt",
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
        "client_secret": "s3cret",
        "jwks": {"keys": []},
    }
    problems = schema_problems(bad, "cimd")
    assert any(p.startswith("client_id:") for p in problems)
    assert any(p.startswith("token_endpoint_auth_methods_supported[0]:") for p in problems)
    assert "client_secret: must not be present" in problems
    assert "jwks, jwks_uri: a document must not carry both" in problems
    assert all(isinstance(p, str) for p in json.loads(json.dumps(problems)))  # plain strings, ready for evidence
