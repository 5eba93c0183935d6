"""Each tool-server mutant differs from the reference in exactly its defect.

The app runs in-process (ASGI) with a test issuer whose key this module holds; a fixed set of probes observes
every behaviour a mutant may touch, and a mutant must change exactly the probes of its footprint.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import jwt
import pytest
import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from conformance.host.forge import alg_none as alg_none_token
from conformance.host.forge import hmac_with_public_key
from conformance.reference import toolserver  # its app (the mcp SDK) is loaded when a test builds one
from conformance.reference.toolserver.mutants import MUTANTS

ISSUER = "https://idp.test"
OTHER_ISSUER = "https://other-idp.test"  # a second trusted issuer (the harness's test issuer, in a stack)
RESOURCE = "https://127.0.0.1:8443/mcp"
ACCEPT = {"accept": "application/json, text/event-stream"}

UNAUTHORIZED = {
    "aud",
    "alg_none",
    "tampered",
    "foreign_key",
    "expired",
    "nbf",
    "wrong_iss",
    "query_token",
    "bad_header",
    # the attack families
    "other_scheme",
    "stripped_signature",
    "alg_none_upper",
    "embedded_jwk",
    "hs256_public_key",
    "exp_string",
    "aud_origin",
    "iss_upper",
    "iss_slash",
    "nbf_string",
    "query_over_header",
    # parties the server trusts for something else
    "key_of_other_issuer",
    "aud_issuer",
}
# A token outside the header: an anonymous call of list_orders to the reference.
OUTSIDE_HEADER = {"token_query_param", "token_cookie", "token_body_member"}
META = {"anon_list_orders", "anon_cancel", "anon_profile", "insufficient_scope", "scope_suffix", *OUTSIDE_HEADER}
PROFILE_CALLS = {"profile", "profile_no_nickname"}
FOOTPRINT: dict[str, set[str]] = {
    "ts-expects-other-audience": {
        "orders",
        "insufficient_scope",
        "scope_error",
        "scope_suffix",
        "blank_id",
        "same_id_across_tokens",
        "distinct_ids",
        "cross_issuer_ids",
        "id_after_display_change",
        *PROFILE_CALLS,
    },
    "ts-skip-audience": {"aud", "aud_origin", "mixed_aud", "aud_issuer"},
    "ts-accept-alg-none": {"alg_none"},
    "ts-ignore-signature": {
        "tampered",
        "alg_none",
        "foreign_key",
        "stripped_signature",
        "alg_none_upper",
        "embedded_jwk",
        "hs256_public_key",
        "key_of_other_issuer",
    },
    "ts-skip-exp": {"expired", "exp_string", "expired_profile", "mixed_expired"},
    "ts-skip-nbf": {"nbf", "nbf_string"},
    "ts-skip-iss": {"wrong_iss", "iss_upper", "iss_slash", "key_of_other_issuer"},
    "ts-skip-scope": {"insufficient_scope", "scope_error", "scope_suffix"},
    "ts-scope-error-invalid-token": {"scope_error"},
    "ts-scope-substring": {"scope_suffix"},
    "ts-accept-query-token": {"query_token"},
    "ts-any-auth-scheme": {"other_scheme"},
    "ts-accept-stripped-signature": {"stripped_signature"},
    "ts-bare-401-on-bad-signature": {"tampered", "foreign_key", "stripped_signature", "embedded_jwk"},
    "ts-alg-none-any-case": {"alg_none_upper"},
    "ts-trust-embedded-jwk": {"embedded_jwk"},
    "ts-hs256-public-key": {"hs256_public_key"},
    "ts-exp-lenient-type": {"exp_string"},
    "ts-audience-prefix": {"aud_origin"},
    "ts-iss-normalized": {"iss_upper", "iss_slash"},
    "ts-nbf-lenient-type": {"nbf_string"},
    "ts-query-token-over-header": {"query_over_header"},
    "ts-malformed-authorization-as-user": {"bad_header", "other_scheme"},
    # Lives in the mTLS front (mtls_front.py), not in the app: proven by tests/reference/test_mtls_front.py.
    "ts-mtls-accept-wrong-san": set(),
    "ts-mtls-san-prefix": set(),
    "ts-mtls-pin-first-leaf": set(),
    "ts-mtls-accept-server-eku": set(),
    "ts-omit-meta-challenge": META | {"scope_error", "meta_metadata_url"},
    "ts-challenge-without-description": META | UNAUTHORIZED,
    "ts-no-www-authenticate": UNAUTHORIZED,
    "ts-no-challenge-scope": META | UNAUTHORIZED,
    "ts-prm-missing": {"prm"},
    "ts-prm-wrong-resource": {"prm"},
    "ts-prm-bad-types": {"prm"},
    "ts-anonymous-list-orders": {"anon_list_orders", "meta_metadata_url", *OUTSIDE_HEADER},
    "ts-anonymous-cancel": {"decl:cancel_order", "anon_cancel"},
    "ts-bad-security-schemes": {"decl:search_docs"},
    "ts-tool-description-not-string": {"decl:search_docs"},
    "ts-mixed-refuses-anonymous": {"anon_mixed"},
    "ts-wrong-audience-as-anonymous": {"aud", "aud_origin", "mixed_aud", "aud_issuer"},
    "ts-bad-output": {"orders"},
    "ts-profile-marker-string": {"decl:get_profile"},
    "ts-profile-two-markers": {"decl:search_docs"},
    "ts-profile-input-props": {"decl:get_profile"},
    "ts-profile-annotations": {"decl:get_profile"},
    "ts-profile-noauth": {"decl:get_profile"},
    "ts-profile-output-schema": {"decl:get_profile"},
    "ts-profile-text-mismatch": PROFILE_CALLS,
    "ts-profile-numeric-id": PROFILE_CALLS,
    "ts-profile-id-per-token": {"same_id_across_tokens"},
    "ts-profile-id-shared": {"distinct_ids", "cross_issuer_ids"},
    "ts-profile-id-from-email": PROFILE_CALLS | {"id_after_display_change"},
    "ts-profile-id-email-digest": {"id_derivation", "id_after_display_change"},
    "ts-profile-id-email-base64": {"id_derivation", "id_after_display_change"},
    "ts-profile-placeholder": {"anon_profile"},
    "ts-profile-guest-on-expired": {"expired", "expired_profile", "mixed_expired"},
    "ts-empty-query-token-as-user": {"empty_query_token"},
    "ts-profile-invented-fields": {"profile_no_nickname"},
    "ts-profile-null-field": {"profile_no_nickname"},
    "ts-profile-blank-id-invents": {"blank_id"},
    "ts-profile-blank-field": {"profile_no_nickname"},
    "ts-profile-zero-placeholder": {"profile_no_nickname"},
    "ts-profile-invisible-field": {"profile_no_nickname"},
    "ts-write-tool-undeclared": {"decl:cancel_order"},
    "ts-meta-challenge-dead-metadata-url": {"meta_metadata_url"},
    "ts-profile-id-follows-display": {"id_after_display_change"},
    "ts-authorizes-by-mcp-name": {"routed_name"},
    "ts-key-from-any-issuer": {"key_of_other_issuer"},
    "ts-audience-trusted-issuer": {"aud_issuer"},
    "ts-token-outside-header": OUTSIDE_HEADER,
    "ts-profile-id-by-subject": {"cross_issuer_ids"},
    # Every probe that is not initialize is served on its token's claims: each token that fails verification.
    "ts-token-checked-at-initialize-only": UNAUTHORIZED
    - {"query_token", "bad_header", "other_scheme", "query_over_header"}
    | {"expired_profile", "mixed_expired", "mixed_aud"},
}


class Keys:
    def __init__(self, directory: Path) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.foreign = ec.generate_private_key(ec.SECP256R1())
        self.other = ec.generate_private_key(ec.SECP256R1())  # the second trusted issuer's
        self.jwks_file = directory / "jwks.json"
        self.other_jwks_file = directory / "other-jwks.json"
        for key, kid, path in ((self.key, "k1", self.jwks_file), (self.other, "k2", self.other_jwks_file)):
            jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
            jwk.update(kid=kid, use="sig", alg="ES256")
            path.write_text(json.dumps({"keys": [jwk]}))

    def token(self, sub: str = "sub-alice", *, key: Any = None, kid: str = "k1", **overrides: Any) -> str:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": sub,
            "aud": RESOURCE,
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
            "scope": "tools.read tools.write",
            "client_id": "client-1",
            "email": f"{sub.removeprefix('sub-')}@example.test",
            "name": sub.removeprefix("sub-").title(),
            **({"nickname": "ali"} if sub == "sub-alice" else {}),
        }
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        pem = (key or self.key).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return jwt.encode(claims, pem, algorithm="ES256", headers={"kid": kid})


def _challenge_shape(value: str | None) -> tuple[str, ...] | None:
    """Which parameters a challenge carries (values vary per call)."""
    if value is None:
        return None
    return tuple(sorted(part.split("=", 1)[0].strip() for part in value.removeprefix("Bearer ").split(",")))


async def observe(defects: frozenset[str], directory: Path, ca_file: Path) -> dict[str, Any]:
    keys = Keys(directory)
    config = toolserver.ToolServerConfig(
        resource=RESOURCE,
        issuer=ISSUER,
        data_dir=directory / "data",
        extra_issuers={ISSUER: f"file:{keys.jwks_file}", OTHER_ISSUER: f"file:{keys.other_jwks_file}"},
        admin_key="admin-key",
        defects=defects,
        ca_file=str(ca_file),  # as a stack starts it (the issuers' keys here are files)
    )
    app = toolserver.create_app(config)
    seen: dict[str, Any] = {}
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://127.0.0.1:8443") as client,
    ):

        async def rpc(method: str, params: dict[str, Any], token: str | None = None, **kw: Any) -> httpx.Response:
            headers = {**ACCEPT, **({"authorization": f"Bearer {token}"} if token else {}), **kw.pop("headers", {})}
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            return await client.post(kw.pop("path", "/mcp"), json=body, headers=headers)

        async def call(name: str, token: str | None = None, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
            answer = await rpc("tools/call", {"name": name, "arguments": arguments or {}}, token)
            if answer.status_code != 200:
                return {"httpStatus": answer.status_code}
            return dict(answer.json()["result"])

        def call_shape(result: dict[str, Any]) -> Any:
            meta = result.get("_meta") or {}
            challenges = meta.get("mcp/www_authenticate")
            return (
                result.get("httpStatus"),
                result.get("isError"),
                "structuredContent" in result,
                None if challenges is None else [_challenge_shape(c) for c in challenges],
            )

        def profile_shape(result: dict[str, Any]) -> Any:
            record = result.get("structuredContent") or {}
            pid = record.get("id")
            text = result["content"][0]["text"] if result.get("content") else None
            return (
                result.get("httpStatus"),
                result.get("isError"),
                type(pid).__name__,
                isinstance(pid, str) and "@" in pid,
                {k: v for k, v in record.items() if k != "id"},
                text is not None and json.loads(text) == record,
            )

        async def status(token: str, **kw: Any) -> Any:
            answer = await rpc("tools/list", {}, token, **kw)
            return answer.status_code, _challenge_shape(answer.headers.get("www-authenticate"))

        listed = (await rpc("tools/list", {})).json()["result"]["tools"]
        for tool in listed:
            seen[f"decl:{tool['name']}"] = tool
        anonymous_orders = await call("list_orders")
        seen["anon_list_orders"] = call_shape(anonymous_orders)
        # The path of the resource_metadata URL its in-call challenge names (the host follows it: AUTH-PRM-05).
        seen["meta_metadata_url"] = [
            urlsplit(part.split("=", 1)[1].strip('"')).path
            for challenge in (anonymous_orders.get("_meta") or {}).get("mcp/www_authenticate") or []
            for part in challenge.removeprefix("Bearer ").split(", ")
            if part.startswith("resource_metadata=")
        ]
        seen["anon_cancel"] = call_shape(await call("cancel_order", None, {"order_id": "ord_1003"}))
        seen["anon_profile"] = call_shape(await call("get_profile"))
        alice = keys.token()
        seen["orders"] = (await call("list_orders", alice)).get("structuredContent")
        first = await call("get_profile", alice)
        seen["profile"] = profile_shape(first)
        # Does the id carry the email as a digest or base64url (PROF-10's derivations)? Computed here,
        # independently of the harness's detector.
        first_id = str((first.get("structuredContent") or {}).get("id"))
        email = "alice@example.test"
        seen["id_derivation"] = (
            hashlib.sha256(email.encode()).hexdigest()[:20] in first_id,
            base64.urlsafe_b64encode(email.encode()).decode().rstrip("=") in first_id,
        )
        again = await call("get_profile", keys.token())
        ids = [(r.get("structuredContent") or {}).get("id") for r in (first, again)]
        seen["same_id_across_tokens"] = ids[0] == ids[1] if None not in ids else None
        bob = await call("get_profile", keys.token("sub-bob"))
        seen["profile_no_nickname"] = profile_shape(bob)
        ids = [(r.get("structuredContent") or {}).get("id") for r in (first, bob)]
        seen["distinct_ids"] = ids[0] != ids[1] if None not in ids else None
        seen["insufficient_scope"] = call_shape(
            await call("cancel_order", keys.token(scope="tools.read"), {"order_id": "ord_1001"})
        )
        lacking = await call("cancel_order", keys.token(scope="tools.read"), {"order_id": "ord_1001"})
        challenges = (lacking.get("_meta") or {}).get("mcp/www_authenticate") or [""]
        seen["scope_error"] = next((p for p in challenges[0].split(", ") if p.startswith("error=")), None)
        seen["anon_mixed"] = call_shape(await call("list_products"))
        seen["mixed_aud"] = call_shape(await call("list_products", keys.token(aud="https://127.0.0.1:8443/alt")))
        seen["mixed_expired"] = call_shape(
            await call("list_products", keys.token(exp=int(time.time()) - 60, iat=int(time.time()) - 400))
        )
        seen["scope_suffix"] = call_shape(
            await call("cancel_order", keys.token(scope="tools.read tools.writex"), {"order_id": "ord_1001"})
        )
        head, _payload, signature = alice.split(".")
        seen["aud"] = await status(keys.token(aud="https://127.0.0.1:8443/alt"))
        seen["alg_none"] = await status(jwt.encode(jwt.decode(alice, options={"verify_signature": False}), "", "none"))
        forged = {**jwt.decode(alice, options={"verify_signature": False}), "sub": "sub-mallory"}
        forged_payload = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
        seen["tampered"] = await status(f"{head}.{forged_payload}.{signature}")
        seen["foreign_key"] = await status(keys.token(key=keys.foreign))
        seen["expired"] = await status(keys.token(exp=int(time.time()) - 60, iat=int(time.time()) - 400))
        expired = keys.token(exp=int(time.time()) - 60, iat=int(time.time()) - 400)
        seen["expired_profile"] = call_shape(await call("get_profile", expired))
        seen["nbf"] = await status(keys.token(nbf=int(time.time()) + 300))
        seen["wrong_iss"] = await status(keys.token(iss="https://other-issuer.test"))
        seen["bad_header"] = await status("", headers={"authorization": "Basic YTpi"})
        answer = await client.post(
            f"/mcp?access_token={alice}",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers=ACCEPT,
        )
        seen["query_token"] = answer.status_code, _challenge_shape(answer.headers.get("www-authenticate"))
        empty_query = await client.post(
            "/mcp?access_token=",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "list_orders", "arguments": {}},
            },
            headers=ACCEPT,
        )
        seen["empty_query_token"] = empty_query.status_code
        # A modern-era (2026-07-28) anonymous call of an oauth2-only tool whose Mcp-Name header names an open one.
        envelope = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        routed = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "list_orders", "arguments": {}, "_meta": envelope},
            },
            headers={
                **ACCEPT,
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "search_docs",
            },
        )
        seen["routed_name"] = routed.status_code, "structuredContent" in (routed.json().get("result") or {})
        answer = await client.post(
            f"/mcp?access_token={alice}",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={**ACCEPT, "authorization": "Bearer not-a-token"},
        )
        seen["query_over_header"] = answer.status_code, _challenge_shape(answer.headers.get("www-authenticate"))
        # the attack families, one probe per mutant-relevant case
        alice_claims = jwt.decode(alice, options={"verify_signature": False})
        seen["other_scheme"] = await status("", headers={"authorization": f"Token {alice}"})
        seen["stripped_signature"] = await status(f"{head}.{_payload}.")
        seen["alg_none_upper"] = await status(alg_none_token(alice_claims, "NONE"))
        foreign_jwk = json.loads(ECAlgorithm.to_jwk(keys.foreign.public_key()))
        seen["embedded_jwk"] = await status(
            jwt.encode(alice_claims, keys.foreign, algorithm="ES256", headers={"kid": "k1", "jwk": foreign_jwk})
        )
        seen["hs256_public_key"] = await status(
            hmac_with_public_key(alice_claims, keys.key.public_key(), {"kid": "k1"})
        )
        now = int(time.time())
        seen["exp_string"] = await status(keys.token(exp=str(now - 60)))
        seen["aud_origin"] = await status(keys.token(aud="https://127.0.0.1:8443"))
        seen["iss_upper"] = await status(keys.token(iss=ISSUER.upper()))
        seen["iss_slash"] = await status(keys.token(iss=ISSUER + "/"))
        seen["nbf_string"] = await status(keys.token(nbf=str(now + 3600)))
        # Parties the server trusts for something else: the other issuer's key signing for this issuer; a token
        # this issuer minted for itself.
        seen["key_of_other_issuer"] = await status(keys.token(key=keys.other, kid="k2"))
        seen["aud_issuer"] = await status(keys.token(aud=ISSUER))
        # A token outside the header, where careless lookups find one.
        list_orders = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_orders"}}
        outside = {
            "token_query_param": {"url": f"/mcp?token={alice}", "json": list_orders, "headers": ACCEPT},
            "token_cookie": {"url": "/mcp", "json": list_orders, "headers": {**ACCEPT, "cookie": f"token={alice}"}},
            "token_body_member": {"url": "/mcp", "json": {**list_orders, "access_token": alice}, "headers": ACCEPT},
        }
        for probe, request in outside.items():
            answer = await client.post(**request)
            shaped = {"httpStatus": answer.status_code} if answer.status_code != 200 else answer.json()["result"]
            seen[probe] = call_shape(shaped)
        # The same subject under the other trusted issuer (no display claims): another profile, another id.
        elsewhere = keys.token(key=keys.other, kid="k2", iss=OTHER_ISSUER, email=None, name=None, nickname=None)
        ids = [((await call("get_profile", t)).get("structuredContent") or {}).get("id") for t in (alice, elsewhere)]
        seen["cross_issuer_ids"] = ids[0] != ids[1] if None not in ids else None
        prm = await client.get("/.well-known/oauth-protected-resource/mcp")
        seen["prm"] = (prm.status_code, prm.json())
        blank = await client.post(
            "/_reference/blank-profile-id", json={"subject": "sub-bob"}, headers={"x-reference-admin-key": "admin-key"}
        )
        seen["blank_id"] = (blank.json()["changed"], call_shape(await call("get_profile", keys.token("sub-bob"))))
        carol = keys.token("sub-carol")
        first_id = ((await call("get_profile", carol)).get("structuredContent") or {}).get("id")
        renamed = await client.post(
            "/_reference/set-profile-display",
            json={"subject": "sub-carol", "email": "carol.new@example.test", "name": "Carol New", "nickname": "c"},
            headers={"x-reference-admin-key": "admin-key"},
        )
        after = (await call("get_profile", carol)).get("structuredContent") or {}
        seen["id_after_display_change"] = (renamed.json()["changed"], after.get("email"), after.get("id") == first_id)
    return seen


def _observe(defects: frozenset[str], directory: Path, ca_file: Path) -> dict[str, Any]:
    run: Callable[[], Awaitable[dict[str, Any]]] = lambda: observe(defects, directory, ca_file)  # noqa: E731
    return anyio.run(run)


@pytest.fixture(scope="module")
def ca_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CA the server trusts for what it fetches over TLS (a stack's own): one file, read by each app, instead
    of the default trust store loaded again for every app."""
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(path))
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, ca_file: Path) -> dict[str, Any]:
    return _observe(frozenset(), tmp_path_factory.mktemp("reference"), ca_file)


def test_reference_behaves(reference: dict[str, Any]) -> None:
    for probe in UNAUTHORIZED:
        assert reference[probe][0] == 401, probe
        assert reference[probe][1] is not None and {"resource_metadata", "scope", "error"} <= set(reference[probe][1])
    assert reference["meta_metadata_url"] == ["/.well-known/oauth-protected-resource/mcp"]
    for probe in META:
        assert reference[probe] == (None, True, False, [("error", "error_description", "resource_metadata", "scope")])
    assert reference["profile"] == (
        None,
        False,
        "str",
        False,
        {"name": "Alice", "email": "alice@example.test", "nickname": "ali"},
        True,
    )
    assert reference["same_id_across_tokens"] is True and reference["distinct_ids"] is True
    assert reference["cross_issuer_ids"] is True
    assert reference["blank_id"] == (1, (None, True, False, None))
    assert reference["prm"] == (
        200,
        {
            "resource": RESOURCE,
            "authorization_servers": [ISSUER],
            "scopes_supported": ["tools.read", "tools.write"],
            "bearer_methods_supported": ["header"],
            "resource_documentation": "https://127.0.0.1:8443/docs",
        },
    )
    assert reference["routed_name"] == (400, False)  # HEADER_MISMATCH: the SDK checks Mcp-Name against the body
    assert reference["decl:get_profile"]["_meta"]["openai/profile"] is True
    assert reference["decl:cancel_order"]["securitySchemes"] == [{"type": "oauth2", "scopes": ["tools.write"]}]
    assert reference["scope_error"] == 'error="insufficient_scope"'
    assert reference["anon_mixed"] == (None, False, True, None)
    assert reference["mixed_aud"] == reference["mixed_expired"] == (401, None, False, None)


def test_every_toolserver_mutant_has_a_footprint() -> None:
    assert {m.name for m in MUTANTS} == set(FOOTPRINT)


@pytest.mark.parametrize("name", sorted(FOOTPRINT))
def test_mutant_differs_in_exactly_its_defect(
    name: str, reference: dict[str, Any], tmp_path: Path, ca_file: Path
) -> None:
    mutant = _observe(frozenset({name}), tmp_path, ca_file)
    changed = {probe for probe in reference if reference[probe] != mutant.get(probe)}
    assert changed == FOOTPRINT[name]
