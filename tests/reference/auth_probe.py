"""What an IdP or proxy mutant changes in the authorization server's behaviour, observed from outside.

``observe(stack)`` runs scripted OAuth flows (fresh ScriptedClients, each registering its own client, its own codes,
assertions and CIMD documents on a loopback origin of its own) against a running stack and returns one value per
probe. ``REFERENCE`` is what the reference IdP shows (tests/reference/test_auth_mutants.py::
test_reference_idp_behaves observes the reference stack and asserts it); ``FOOTPRINT`` says, per mutant, which probes
differ from it (asserted by tests/matrix/test_matrix.py::test_mutant_differs_in_exactly_its_defect, on the stack the
mutant matrix starts for the mutant's harness run).

The probes talk to fixed endpoint paths of the reference IdP (not to what discovery says), so that a mutant of
the metadata does not change what the flows observe; origins are normalized so stacks on other ports compare.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import ssl
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from conformance.host._serving import https_server
from conformance.reference.idp.layout import load_layout
from conformance.reference.idp.scripted import REDIRECT_URI, FlowError, ScriptedClient, pkce_pair
from conformance.reference.stack import Stack
from tests._serving import running

if TYPE_CHECKING:
    from tests.matrix.plan import Case

METADATA_KEYS = (
    "issuer",
    "code_challenge_methods_supported",
    "authorization_response_iss_parameter_supported",
    "token_endpoint",
    "registration_endpoint",
    "client_id_metadata_document_supported",
    "token_endpoint_auth_methods_supported",
    "scopes_supported",
)
CIMD_NEG = ("cimd_alg_none", "cimd_no_exp", "cimd_wrong_aud")  # negative assertion probes: refused by the reference
FOOTPRINT: dict[str, set[str]] = {
    "idp-pkce-optional": {"no_pkce", "no_pkce_confidential"},
    "idp-pkce-confidential-exempt": {"no_pkce_confidential"},
    "idp-code-reuse": {"code_reuse", "code_race"},
    "idp-code-consume-race": {"code_race"},
    "idp-jti-replay": {"jti_replay"},
    "idp-redirect-prefix": {"redirect_prefix", "redirect_prefix_confidential"},
    "idp-redirect-prefix-confidential": {"redirect_prefix_confidential"},
    "idp-redirect-case-insensitive": {"redirect_case"},
    "idp-pkce-downgrade": {"no_verifier"},
    "idp-dcr-client-forgotten": {"client_reuse", "id_token_hint", "later_iss", "code_race"},
    "idp-cimd-refused": {
        *("cimd_none", "cimd_pkjwt", "cimd_both_none", "cimd_secret", "cimd_any_key", "cimd_basic"),
        *CIMD_NEG,
    },
    "idp-dcr-instead-of-cimd": {
        "metadata",
        *("cimd_none", "cimd_pkjwt", "cimd_both_none", "cimd_secret", "cimd_any_key", "cimd_basic"),
        *CIMD_NEG,
    },
    "idp-cimd-no-private-key-jwt": {"cimd_pkjwt", "cimd_both_none", "cimd_any_key", *CIMD_NEG},
    "idp-cimd-stable-only": {"cimd_none", "cimd_secret", "cimd_basic"},
    "idp-pkce-unchecked": {"wrong_verifier"},
    "idp-pkce-public-exempt": {"wrong_verifier"},  # the probe's DCR client is public (none)
    "idp-cimd-secret-accepted": {"cimd_secret"},
    "idp-cimd-basic-accepted": {"cimd_basic"},
    "idp-cimd-any-key": {"cimd_any_key", "cimd_alg_none"},  # an unsigned assertion does not verify either
    "idp-cimd-alg-none": {"cimd_alg_none"},
    "idp-assertion-exp-optional": {"cimd_no_exp"},
    "idp-assertion-aud-unchecked": {"cimd_wrong_aud"},
    "proxy-drop-state": {"flow_state", "id_token_hint", "admin_scope", "no_pkce", "no_pkce_confidential"},
    "proxy-token-type-not-bearer": {"token_type"},
    "proxy-dcr-broken": {"dcr"},
    "proxy-reject-id-token-hint": {"id_token_hint"},
    "idp-email-unverified": {"userinfo_verified"},
    # The reference refuses tools.admin too since it does not know it (invalid_scope): only the metadata differs.
    "idp-advertised-scope-refused": {"metadata"},
    "proxy-strip-iss": {"flow_iss", "deny_iss", "no_pkce_iss", "later_iss", "admin_scope_error"},
    "proxy-strip-iss-on-request-errors": {"no_pkce_iss", "admin_scope_error"},
    "proxy-strip-iss-after-first": {"later_iss"},
    "proxy-alter-iss": {"flow_iss", "deny_iss", "no_pkce_iss", "later_iss", "admin_scope_error"},
    "proxy-issuer-trailing-slash": {
        "metadata",
        "flow_iss",
        "deny_iss",
        "no_pkce_iss",
        "later_iss",
        "admin_scope_error",
    },
    "proxy-drop-s256": {"metadata"},
    "proxy-iss-unadvertised": {"metadata"},
    "proxy-drop-resource": {"token_aud"},
    "proxy-http-token-endpoint": {"metadata"},
    "proxy-no-client-identification": {"metadata"},
    "proxy-secret-methods-only": {"metadata"},
    "proxy-no-metadata": {"metadata"},
    "proxy-openid-copy-other-issuer": {"copies_differ"},
    "proxy-openid-copy-other-token-endpoint": {"copies_differ"},
}


# The services whose mutants this module observes (each such mutant is a case of the mutant matrix).
AUTH_SERVICES = ("idp", "proxy")
# What observe() returns for the reference IdP (services toolserver and idp, no proxy); test_reference_idp_behaves
# proves it on a reference stack in every run, so a mutant's footprint is its difference from the reference IdP.
REFERENCE: dict[str, Any] = {
    "metadata": (
        [200, 200],
        {
            "issuer": "ORIGIN",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "token_endpoint": "ORIGIN/token",
            "registration_endpoint": "ORIGIN/reg",
            "client_id_metadata_document_supported": True,
            "token_endpoint_auth_methods_supported": [
                "none",
                "private_key_jwt",
                "client_secret_basic",
                "client_secret_post",
            ],
            "scopes_supported": ["openid", "offline_access", "email", "profile", "tools.read", "tools.write"],
        },
    ),
    "copies_differ": [],
    "dcr": (201, True),
    "flow_iss": "ORIGIN",
    "flow_state": "state-123",
    "token_type": "Bearer",
    "token_aud": True,
    "code_reuse": False,
    "client_reuse": 200,
    "later_iss": "ORIGIN",
    "code_race": 1,
    "id_token_hint": ["code", "state"],
    "deny_iss": ["access_denied", "ORIGIN"],
    "no_pkce": ["error", "error_description", "state"],
    "no_pkce_iss": "ORIGIN",
    "admin_scope": ["error", "error_description", "scope", "state"],
    "admin_scope_error": ["invalid_scope", "ORIGIN"],
    "redirect_prefix": "refused",
    "redirect_case": "refused",
    "wrong_verifier": 400,
    "no_verifier": 400,
    "userinfo_verified": True,
    "no_pkce_confidential": ["error", "error_description", "state"],
    "redirect_prefix_confidential": "refused",
    "jti_replay": False,
    "cimd_none": 200,
    "cimd_pkjwt": 200,
    "cimd_both_none": 200,
    "cimd_secret": 401,
    "cimd_basic": 401,
    "cimd_any_key": 401,
    "cimd_alg_none": 401,
    "cimd_no_exp": 401,
    "cimd_wrong_aud": 401,
}
# Mutants whose defect is state shared by every client of the stack: proxy-strip-iss-after-first strips iss from
# every successful authorization response after the proxy's first. Whichever of observe() and the matrix's harness
# run came second would meet a different mutant (no response with iss left), so this one is observed on a stack of
# its own; every other mutant keeps state per client, code or assertion only (see tests/matrix/conftest.py).
OWN_STACK = frozenset({"proxy-strip-iss-after-first"})


def observes(case: Case) -> bool:
    """Whether the mutant matrix observes ``case``'s stack with observe() (tests/matrix/conftest.py)."""
    return case.mutant is not None and case.mutant.service in AUTH_SERVICES


def changed_probes(observed: dict[str, Any]) -> set[str]:
    """The probes whose value differs from the reference IdP's."""
    return {probe for probe in REFERENCE.keys() | observed.keys() if REFERENCE.get(probe) != observed.get(probe)}


def _normalize(value: Any, origin: str) -> Any:
    return json.loads(json.dumps(value).replace(origin, "ORIGIN"))


def _assertion(
    key: ec.EllipticCurvePrivateKey, client_id: str, audience: str, *, drop: str | None = None, unsigned: bool = False
) -> str:
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 60,
        "jti": secrets.token_hex(8),
    }
    claims.pop(drop or "", None)
    if unsigned:
        return jwt.encode(claims, None, algorithm="none")
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return jwt.encode(claims, pem, algorithm="ES256", headers={"kid": "c1"})


def observe(stack: Stack) -> dict[str, Any]:
    layout = load_layout(stack.data_dir)
    origin, issuer, resource = layout.issuer, layout.issuer, layout.resource
    alice = layout.accounts[0]
    ca = str(stack.ca_file)
    endpoints = {
        "issuer": issuer,
        "authorization_endpoint": origin + "/auth",
        "token_endpoint": origin + "/token",
        "registration_endpoint": origin + "/reg",
        "userinfo_endpoint": origin + "/me",
    }
    scope = "openid email profile tools.read tools.write"
    seen: dict[str, Any] = {}

    def client(**metadata: Any) -> ScriptedClient:
        # Registered at the IdP itself, so that a broken registration endpoint (a proxy mutant) shows only in
        # the "dcr" probe; the client is then used through the issuer's origin like any other.
        c = ScriptedClient(issuer, ca, metadata={**endpoints, "registration_endpoint": layout.idp_url + "/reg"})
        c.register(**metadata)
        c.metadata = endpoints
        return c

    def authorize(c: ScriptedClient, **kw: Any) -> dict[str, str] | str:
        args: dict[str, Any] = {"login": alice.login, "password": alice.password, "resource": resource, "scope": scope}
        args.update(kw)
        try:
            return c.authorize(**args).params
        except FlowError:
            return "refused"

    with httpx.Client(verify=ssl.create_default_context(cafile=ca), timeout=10) as http:
        statuses, copies = [], []
        for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
            answer = http.get(origin + path)
            statuses.append(answer.status_code)
            if answer.status_code == 200:
                seen["metadata"] = _normalize({k: answer.json().get(k) for k in METADATA_KEYS}, origin)
                copies.append(seen["metadata"])
        seen["metadata"] = (statuses, seen.get("metadata"))
        # The members on which the two well-known copies disagree (the first entry is the OpenID copy).
        seen["copies_differ"] = sorted(k for k in METADATA_KEYS if len(copies) == 2 and copies[0][k] != copies[1][k])

    with httpx.Client(verify=ssl.create_default_context(cafile=ca), timeout=10) as http:
        registration = http.post(endpoints["registration_endpoint"], json={"redirect_uris": [REDIRECT_URI]})
        seen["dcr"] = registration.status_code, "client_id" in registration.json()

    main = client()
    verifier, challenge = pkce_pair()
    params = authorize(main, challenge=challenge, extra={"state": "state-123"})
    assert isinstance(params, dict) and "code" in params, params
    seen["flow_iss"] = _normalize(params.get("iss"), origin)
    seen["flow_state"] = params.get("state")
    tokens = main.exchange(params["code"], verifier, resource)
    seen["token_type"] = tokens["token_type"]
    try:
        seen["token_aud"] = jwt.decode(tokens["access_token"], options={"verify_signature": False})["aud"] == resource
    except jwt.PyJWTError:
        seen["token_aud"] = "opaque"
    again = main.token(
        grant_type="authorization_code",
        code=params["code"],
        code_verifier=verifier,
        redirect_uri=REDIRECT_URI,
        resource=resource,
    )
    seen["code_reuse"] = again.status_code == 200
    verifier2, challenge2 = pkce_pair()
    second = authorize(main, challenge=challenge2)
    reused = (
        main.token(
            grant_type="authorization_code",
            code=second["code"],
            code_verifier=verifier2,
            redirect_uri=REDIRECT_URI,
            resource=resource,
        ).status_code
        if isinstance(second, dict) and "code" in second
        else second
    )
    seen["client_reuse"] = reused
    seen["later_iss"] = _normalize(second.get("iss"), origin) if isinstance(second, dict) else second
    # Two exchanges of one code in flight at once: how many return tokens (idp-code-consume-race).
    verifier3, challenge3 = pkce_pair()
    third = authorize(main, challenge=challenge3)
    if isinstance(third, dict) and "code" in third:
        form = {"grant_type": "authorization_code", "code": third["code"], "code_verifier": verifier3}
        with ThreadPoolExecutor(max_workers=2) as pool:
            raced = list(pool.map(lambda _: main.token(**form, redirect_uri=REDIRECT_URI, resource=resource), range(2)))
        seen["code_race"] = [a.status_code for a in raced].count(200)
    else:
        seen["code_race"] = third
    hinted = authorize(main, challenge=pkce_pair()[1], extra={"id_token_hint": tokens["id_token"]})
    seen["id_token_hint"] = sorted(set(hinted) - {"iss"}) if isinstance(hinted, dict) else hinted
    main.close()

    denier = client()
    denied = authorize(denier, challenge=pkce_pair()[1], decision="deny")
    seen["deny_iss"] = _normalize(
        denied if isinstance(denied, str) else (denied.get("error"), denied.get("iss")), origin
    )
    # Parameter names only (iss aside: flow_iss and deny_iss observe it).
    no_pkce = authorize(denier, challenge=None)
    seen["no_pkce"] = sorted(set(no_pkce) - {"iss"})
    seen["no_pkce_iss"] = _normalize(no_pkce.get("iss") if isinstance(no_pkce, dict) else no_pkce, origin)
    admin = authorize(denier, challenge=pkce_pair()[1], scope="openid tools.read tools.admin")
    seen["admin_scope"] = sorted(set(admin) - {"iss"})
    seen["admin_scope_error"] = (
        _normalize([admin.get("error"), admin.get("iss")], origin) if admin != "refused" else admin
    )
    seen["redirect_prefix"] = authorize(denier, challenge=pkce_pair()[1], redirect_uri=REDIRECT_URI + "/elsewhere")
    seen["redirect_prefix"] = "refused" if seen["redirect_prefix"] == "refused" else "redirected"
    case_changed = authorize(
        denier, challenge=pkce_pair()[1], redirect_uri=REDIRECT_URI.replace("/callback", "/CALLBACK")
    )
    seen["redirect_case"] = "refused" if case_changed == "refused" else "redirected"
    # A wrong verifier, before this client gets a token (idp-dcr-client-forgotten deletes it afterwards).
    _, challenge_w = pkce_pair()
    got_w = authorize(denier, challenge=challenge_w)
    assert isinstance(got_w, dict) and "code" in got_w, got_w
    wrong = denier.token(
        grant_type="authorization_code",
        code=got_w["code"],
        code_verifier=pkce_pair()[0],
        redirect_uri=REDIRECT_URI,
        resource=resource,
    )
    seen["wrong_verifier"] = wrong.status_code
    # No verifier at all for a code issued with a challenge (the PKCE downgrade of RFC 9700 §4.8.2).
    got_n = authorize(denier, challenge=pkce_pair()[1])
    assert isinstance(got_n, dict) and "code" in got_n, got_n
    missing = denier.token(
        grant_type="authorization_code", code=got_n["code"], redirect_uri=REDIRECT_URI, resource=resource
    )
    seen["no_verifier"] = missing.status_code
    # UserInfo: a token without resource is for the UserInfo endpoint.
    verifier3, challenge3 = pkce_pair()
    got = authorize(denier, challenge=challenge3, resource=None, scope="openid email")
    assert isinstance(got, dict), got
    userinfo_token = denier.exchange(got["code"], verifier3, None)["access_token"]
    info = denier.http.get(endpoints["userinfo_endpoint"], headers={"authorization": f"Bearer {userinfo_token}"})
    seen["userinfo_verified"] = info.json().get("email_verified")
    denier.close()

    # private_key_jwt: an assertion used twice is a replay.
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid="c1", use="sig", alg="ES256")
    signer = client(
        token_endpoint_auth_method="private_key_jwt",
        token_endpoint_auth_signing_alg="ES256",
        jwks={"keys": [jwk]},
    )
    assert signer.client_id is not None
    verifier4, challenge4 = pkce_pair()
    got = authorize(signer, challenge=challenge4)
    assert isinstance(got, dict), got
    # PKCE for a confidential client too (RFC 9700 §2.1.1): parameter names only.
    no_pkce_confidential = authorize(signer, challenge=None)
    seen["no_pkce_confidential"] = sorted(set(no_pkce_confidential) - {"iss"})
    prefixed = authorize(signer, challenge=pkce_pair()[1], redirect_uri=REDIRECT_URI + "/elsewhere")
    seen["redirect_prefix_confidential"] = "refused" if prefixed == "refused" else "redirected"
    assertion = _assertion(key, signer.client_id, endpoints["token_endpoint"])
    kind = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    first = signer.exchange(got["code"], verifier4, resource, client_assertion_type=kind, client_assertion=assertion)
    replay = signer.token(
        grant_type="refresh_token",
        refresh_token=first["refresh_token"],
        resource=resource,
        client_assertion_type=kind,
        client_assertion=assertion,
    )
    seen["jti_replay"] = replay.status_code == 200
    signer.close()

    # CIMD: documents published on loopback with the stack's certificate.
    with publish_cimd(stack, jwk) as (stable, callback):
        cimd = ScriptedClient(issuer, ca, metadata=endpoints)

        def cimd_code(client_id: str) -> tuple[str, str] | str:
            cimd.client_id = client_id
            verifier_c, challenge_c = pkce_pair()
            got_c = authorize(cimd, challenge=challenge_c)
            return (got_c["code"], verifier_c) if isinstance(got_c, dict) and "code" in got_c else "refused"

        def cimd_token(client_id: str, **auth: str) -> int | str:
            code = cimd_code(client_id)
            if isinstance(code, str):
                return code
            form = {"code": code[0], "code_verifier": code[1], "redirect_uri": REDIRECT_URI, "resource": resource}
            return cimd.token(grant_type="authorization_code", **form, **auth).status_code

        seen["cimd_none"] = cimd_token(callback)  # token_endpoint_auth_method none
        # private_key_jwt with the JWKS next to the document
        seen["cimd_pkjwt"] = cimd_token(
            stable,
            client_assertion_type=kind,
            client_assertion=_assertion(key, stable, endpoints["token_endpoint"]),
        )
        # The stable document lists none as well: the AS accepts every method in the intersection.
        seen["cimd_both_none"] = cimd_token(stable)
        seen["cimd_secret"] = cimd_token(callback, client_secret="not-a-secret")
        basic_code = cimd_code(callback)  # the same secret in an HTTP Basic header (client_secret_basic)
        if isinstance(basic_code, str):
            seen["cimd_basic"] = basic_code
        else:
            pair = base64.b64encode(f"{quote(callback, safe='')}:not-a-secret".encode()).decode()
            form = {"code": basic_code[0], "code_verifier": basic_code[1], "redirect_uri": REDIRECT_URI}
            seen["cimd_basic"] = cimd.http.post(
                endpoints["token_endpoint"],
                data={"grant_type": "authorization_code", **form, "resource": resource},
                headers={"Authorization": f"Basic {pair}"},
            ).status_code
        foreign = ec.generate_private_key(ec.SECP256R1())
        seen["cimd_any_key"] = cimd_token(
            stable,
            client_assertion_type=kind,
            client_assertion=_assertion(foreign, stable, endpoints["token_endpoint"]),
        )
        seen["cimd_alg_none"] = cimd_token(
            stable,
            client_assertion_type=kind,
            client_assertion=_assertion(key, stable, endpoints["token_endpoint"], unsigned=True),
        )
        seen["cimd_no_exp"] = cimd_token(
            stable,
            client_assertion_type=kind,
            client_assertion=_assertion(key, stable, endpoints["token_endpoint"], drop="exp"),
        )
        seen["cimd_wrong_aud"] = cimd_token(
            stable,
            client_assertion_type=kind,
            client_assertion=_assertion(key, stable, "https://other-as.conformance.invalid/token"),
        )
        cimd.close()
    return seen


@contextmanager
def publish_cimd(stack: Stack, jwk: dict[str, Any], *, delay_s: float = 0.0) -> Iterator[tuple[str, str]]:
    """An HTTPS server on loopback with the stack's certificate: a stable client document using private_key_jwt
    (JWKS at /oauth/jwks.json) and a callback-specific one using none. Yields the two client ids. ``delay_s``: how
    long each client document takes to come (a publisher slowed down by a busy machine).

    A stdlib server on the harness's own ServingThread (as the harness publishes its documents): it starts and
    stops at once, where a uvicorn server polls its stop flag and would keep every observe() waiting for it."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(stack.data_dir / "server.pem"), str(stack.data_dir / "server-key.pem"))
    server = https_server(("127.0.0.1", 0), _CimdHandler, context)
    origin = f"https://127.0.0.1:{server.server_address[1]}"
    stable, callback = f"{origin}/oauth/client.json", f"{origin}/oauth/cb1/client.json"
    base = {
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "client_name": "conformance test host",
    }
    documents: dict[str, dict[str, Any]] = {
        "/oauth/client.json": {
            **base,
            "client_id": stable,
            "token_endpoint_auth_method": "private_key_jwt",
            "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
            "token_endpoint_auth_signing_alg": "ES256",
            "jwks_uri": f"{origin}/oauth/jwks.json",
        },
        "/oauth/cb1/client.json": {**base, "client_id": callback, "token_endpoint_auth_method": "none"},
        "/oauth/jwks.json": {"keys": [jwk]},
    }
    server.documents = documents  # type: ignore[attr-defined]  # read by _CimdHandler
    server.delay_s = delay_s  # type: ignore[attr-defined]
    with running(server, f"cimd-documents-{server.server_address[1]}"):
        yield stable, callback


class _CimdHandler(BaseHTTPRequestHandler):
    """Serves ``server.documents`` by path (compact JSON), a client document after ``server.delay_s``; 404 for
    anything else."""

    protocol_version = "HTTP/1.1"
    timeout = 10
    # An answer's head and body are two writes: with Nagle's algorithm on, the body waited for the delayed ACK.
    disable_nagle_algorithm = True

    def handle(self) -> None:
        # The TLS handshake in this handler thread (not in accept()); a peer that goes away needs no answer.
        with contextlib.suppress(ssl.SSLError, ConnectionError, TimeoutError):
            self.request.do_handshake()
            super().handle()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path.endswith("/client.json"):
            time.sleep(self.server.delay_s)  # type: ignore[attr-defined]
        document = self.server.documents.get(path)  # type: ignore[attr-defined]
        body = b"Not Found" if document is None else json.dumps(document, separators=(",", ":")).encode()
        self.send_response(404 if document is None else 200)
        self.send_header("Content-Type", "text/plain" if document is None else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass
