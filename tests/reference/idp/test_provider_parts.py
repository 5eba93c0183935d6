"""Parts of idp.js that replace a library's way of doing the same thing, checked against it in Node: the cookie keys
against keygrip (what the cookies package would use), and the CIMD client schema kept per document against a Client
built from the document each time."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from conformance.reference.idp import HERE, ensure_installed, node_executable


def run_node(script: str) -> dict[str, object]:
    """The JSON that ``script`` (an ES module run in the IdP's directory, so that its packages resolve) prints."""
    ensure_installed()
    completed = subprocess.run(
        [node_executable(), "--input-type=module", "-e", textwrap.dedent(script)],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


PROVIDER = """
    import { createProvider } from './idp.js';
    const config = {
      issuer: 'https://127.0.0.1:9', resources: ['https://127.0.0.1:8/mcp'], scopes: ['openid', 'offline_access'],
      resource_scopes: ['tools.read'], access_token_ttl: 600, accounts: [], mutants: [],
    };
    const provider = createProvider(config);
    const document = (id) => ({
      client_id: `https://127.0.0.1:7/oauth/${id}.json`, client_name: 'host', redirect_uris: ['https://127.0.0.1:7/cb'],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_methods_supported: ['private_key_jwt', 'none'], token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256', jwks_uri: 'https://127.0.0.1:7/oauth/jwks.json',
    });
"""


@pytest.mark.parametrize("keys", [["one"], ["new", "old"]])
def test_cookie_keys_sign_and_verify_as_keygrip_does(keys: list[str]) -> None:
    result = run_node(
        f"""
        import Keygrip from 'keygrip';
        import {{ CookieKeys }} from './idp.js';
        const keys = {json.dumps(keys)};
        const ours = new CookieKeys(keys);
        const theirs = new Keygrip(keys);
        const data = ['_session=abc', '_interaction=' + 'x'.repeat(300), 'é=ü'];
        const digests = data.flatMap((d) => keys.map((k) => new Keygrip([k]).sign(d)));
        const forged = data.map((d) => theirs.sign(d).slice(0, -1) + 'A');
        console.log(JSON.stringify({{
          signed: data.map((d) => [ours.sign(d), theirs.sign(d)]),
          indexes: data.flatMap((d) => [...digests, ...forged, '', 'short'].map((g) => [ours.index(d, g),
            theirs.index(d, g)])),
          verified: data.map((d) => [ours.verify(d, theirs.sign(d)), ours.verify(d + 'x', theirs.sign(d))]),
        }}));
        """
    )
    assert all(ours == theirs for ours, theirs in result["signed"])  # type: ignore[union-attr]
    assert all(ours == theirs for ours, theirs in result["indexes"])  # type: ignore[union-attr]
    assert {i for _, i in result["indexes"]} >= {-1, 0}  # type: ignore[union-attr]
    assert result["verified"] == [[True, False]] * 3


def test_a_cimd_document_is_validated_once_and_each_request_still_gets_a_client_of_its_own() -> None:
    result = run_node(
        PROVIDER
        + """
        const doc = document('client');
        const first = new provider.Client(doc, undefined, { cimd: true });
        const second = new provider.Client(doc, undefined, { cimd: true });
        first.tokenEndpointAuthMethod = 'none'; // what negotiateCimdMethod does to one request's client
        const refetched = new provider.Client({ ...doc, client_name: 'renamed' }, undefined, { cimd: true });
        const fresh = createProvider(config); // nothing kept: every instance validates afresh
        const alone = new fresh.Client(doc, undefined, { cimd: true });
        let refused = 0;
        const bad = { ...document('bad'), redirect_uris: ['not a url'] };
        for (let i = 0; i < 2; i += 1) {
          try { new provider.Client(bad, undefined, { cimd: true }); } catch { refused += 1; }
        }
        console.log(JSON.stringify({
          distinct: first !== second && first instanceof provider.Client && second instanceof provider.Client,
          secondMethod: second.tokenEndpointAuthMethod,
          same: JSON.stringify(second.metadata()) === JSON.stringify(alone.metadata()),
          renamed: refetched.clientName,
          refused,
        }));
        """
    )
    assert result == {
        "distinct": True,
        "secondMethod": "private_key_jwt",
        "same": True,
        "renamed": "renamed",
        "refused": 2,
    }
