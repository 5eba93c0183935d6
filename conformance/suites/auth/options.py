"""Options of the auth suite: the host's client identity, how the user logs in, and what extra probes need."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.config import (
    OptionSpec,
    existing_dir,
    existing_file,
    in_range,
    non_negative,
    one_of,
    pem_certificates,
    pem_private_key,
    positive,
)


def login_steps_file(value: Any) -> None:
    """A TOML file of login steps the form and browser drivers can follow."""
    existing_file(value)
    from conformance.host.login import LoginSteps

    LoginSteps.load(Path(value))  # raises ConfigError naming what is wrong


def client_key_file(value: Any) -> None:
    """A PEM private key the host can sign private_key_jwt assertions with (EC P-256 or RSA >= 2048)."""
    pem_private_key(value)
    from conformance.host.identity import HostKey

    HostKey.load(value)


OPTIONS: list[OptionSpec] = [
    OptionSpec(
        "client_metadata_url",
        "public https origin where the host's CIMD documents and JWKS are reachable by the authorization server "
        "(default: the harness serves them itself on 127.0.0.1; see `conformance cimd export`)",
        kind="url",
    ),
    OptionSpec(
        "client_key",
        "PEM private key (EC P-256 or RSA) the host signs private_key_jwt assertions with (default: a new key per run)",
        kind="path",
        check=client_key_file,
    ),
    OptionSpec(
        "publisher_host",
        "address the harness's CIMD publisher listens on",
        default="127.0.0.1",
    ),
    OptionSpec(
        "publisher_port", "port of the CIMD publisher (0: a free port)", kind="int", default=0, check=in_range(0, 65535)
    ),
    OptionSpec(
        "publisher_certfile", "TLS certificate (PEM chain) of the CIMD publisher", kind="path", check=pem_certificates
    ),
    OptionSpec("publisher_keyfile", "TLS private key of the CIMD publisher", kind="path", check=pem_private_key),
    OptionSpec(
        "redirect_base",
        "base of the host's redirect URIs: stable = this URL, callback-specific = this URL/{callback_id} "
        "(default: {client_metadata_url}/oauth/callback; without a publisher, for DCR or a predefined client, "
        "http://127.0.0.1/oauth/callback; a predefined client's callback id is always 'conformance')",
    ),
    OptionSpec(
        "client_registration",
        "how the host identifies itself: auto (CIMD when advertised, else DCR, else the predefined client), "
        "cimd, dcr or predefined",
        default="auto",
        check=one_of("auto", "cimd", "dcr", "predefined"),
    ),
    OptionSpec("client_id", "predefined OAuth client id registered at the authorization server"),
    OptionSpec("client_secret", "secret of the predefined client", secret=True),
    OptionSpec(
        "client_auth_method",
        "token endpoint auth method of the predefined or the DCR-registered client: none, private_key_jwt, "
        "client_secret_basic or client_secret_post (default: predefined: negotiated with the metadata; DCR: the "
        "first the authorization server lists that the host supports)",
    ),
    OptionSpec(
        "login_driver",
        "how the user logs in: form, browser or manual",
        default="form",
        check=one_of("form", "browser", "manual"),
    ),
    OptionSpec(
        "login_steps",
        "TOML file of login and consent steps (default: the bundled reference steps)",
        kind="path",
        check=login_steps_file,
    ),
    OptionSpec(
        "login_timeout",
        "seconds the manual login driver waits for the callback",
        kind="float",
        default=300.0,
        check=positive,
    ),
    OptionSpec("test_user", "login of the test account (environment or config file only)", secret=True),
    OptionSpec("test_password", "password of the test account", secret=True),
    OptionSpec("test_user_2", "login of a second test account (PROF-09)", secret=True),
    OptionSpec("test_password_2", "password of the second test account", secret=True),
    OptionSpec(
        "alt_resource",
        "a second resource the authorization server issues tokens for and the target must refuse (AUTH-TOK-06)",
        kind="url",
    ),
    OptionSpec(
        "max_expiry_wait",
        "longest access-token lifetime (seconds) the harness waits out to test expiry (AUTH-TOK-05)",
        kind="float",
        default=120.0,
        check=non_negative,
    ),
    OptionSpec(
        "workspace_domain",
        "email domain of a workspace that restricts linking to it (AUTH-WS-01)",
    ),
    OptionSpec(
        "legacy_stable_redirect",
        "the tool server was published before callback-specific redirects: keep the stable redirect URI",
        kind="bool",
        default=False,
    ),
    # --- token checks, tool declarations, mTLS (test_tokens/test_tools/test_mtls)
    OptionSpec(
        "vendor_prefix",
        'vendor prefix of the profile marker _meta["<vendor>/profile"] (AUTH-TOOL-06, PROF-*)',
        default="openai",
    ),
    OptionSpec(
        "test_issuer",
        "issuer of harness-issued test tokens the target trusts (AUTH-TOK-05/06/07); needs --test-issuer-key-file",
    ),
    OptionSpec(
        "test_issuer_key_file", "PEM private key (EC P-256) of the test issuer", kind="path", check=pem_private_key
    ),
    OptionSpec("test_issuer_kid", "kid of the test issuer's key, as published in the JWKS the target trusts"),
    OptionSpec(
        "mtls",
        "present a client certificate and check the mTLS host identity (AUTH-MTLS-01)",
        kind="bool",
        default=False,
    ),
    OptionSpec("mtls_url", "MCP URL of the target's mTLS listener (default: --target-url)", kind="url"),
    OptionSpec("mtls_dns_name", "SAN dnsName the target expects in the host's client certificate"),
    OptionSpec(
        "mtls_material",
        "directory with the harness's test PKI (conformance.host.mtls.make_mtls_material): client certificates "
        "chained to the intermediate the target trusts, and the negatives",
        kind="path",
        check=existing_dir,
    ),
]
