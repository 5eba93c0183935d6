"""The reference IdP waits for a client's document served slowly: a CIMD document that takes longer to arrive than
oidc-provider's own bound on a fetch still identifies the client (its JWKS, fetched the same way, then signs for it).

The harness publishes those documents from its own process; on a busy machine an answer can come late, and a
reference IdP that gave up on it would refuse a valid client (``invalid_client``), which the harness reports as a
blocked or failed CIMD rule: a verdict that depends on the machine's load, not on the target."""

from __future__ import annotations

import json

from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from conformance.reference.idp.layout import load_layout
from conformance.reference.idp.scripted import REDIRECT_URI, ScriptedClient, pkce_pair
from conformance.reference.stack import Stack
from tests.reference.auth_probe import _assertion, publish_cimd

# Beyond the bound oidc-provider puts on its fetches (AbortSignal.timeout(2500) in lib/helpers/fetch_request.js),
# within the scripted client's own read timeout.
SLOW_S = 3.0
ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def test_slow_client_documents_still_identify_the_client(auth_stack: Stack) -> None:
    layout = load_layout(auth_stack.data_dir)
    alice = layout.accounts[0]
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = {**json.loads(ECAlgorithm.to_jwk(key.public_key())), "kid": "c1", "use": "sig", "alg": "ES256"}
    with publish_cimd(auth_stack, jwk, delay_s=SLOW_S) as (stable, _callback):
        client = ScriptedClient(layout.issuer, str(auth_stack.ca_file))
        try:
            client.client_id = stable  # private_key_jwt: the document fetched at /auth, its JWKS at /token
            verifier, challenge = pkce_pair()
            granted = client.authorize(
                login=alice.login,
                password=alice.password,
                resource=layout.resource,
                scope="openid tools.read",
                challenge=challenge,
            ).params
            assert "code" in granted, granted
            token = client.token(
                grant_type="authorization_code",
                code=granted["code"],
                code_verifier=verifier,
                redirect_uri=REDIRECT_URI,
                resource=layout.resource,
                client_assertion_type=ASSERTION,
                client_assertion=_assertion(key, stable, client.metadata["token_endpoint"]),
            )
        finally:
            client.close()
    assert token.status_code == 200, token.text
    assert token.json()["token_type"].lower() == "bearer"
