"""The reference MCP tool server (``mcp`` SDK, streamable HTTP, uvicorn over TLS).

Tools: ``search_docs`` (noauth), ``list_orders`` (tools.read), ``cancel_order`` (tools.write, destructive) and the
profile tool ``get_profile`` (``_meta["<vendor>/profile"]: true``). Tokens are JWTs from the IdP of the stack (and
from an optional extra test issuer whose key the harness holds).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

# Before any module of the service imports httpx: httpx without its command-line client.
from conformance.core import _httpx_cli  # noqa: F401
from conformance.reference._service import ServiceSpec, StackContext, service_argv
from conformance.reference.idp.layout import TEST_ISSUER, auth_layout, write_private

MTLS_DNS_NAME = "connector.host.conformance.test"  # the SAN dnsName of the host's client certificate

__all__ = ["ToolServerConfig", "create_app", "services", "test_issuer_key"]


def __getattr__(name: str) -> Any:
    # The app pulls in the mcp SDK (about a second to import); the stack only needs services() from here.
    if name in ("ToolServerConfig", "create_app"):
        from conformance.reference.toolserver import app

        return getattr(app, name)
    raise AttributeError(name)


def test_issuer_key(ctx: StackContext) -> tuple[str, str]:
    """(key file, JWKS file) of the stack's test issuer: an EC P-256 key the harness signs test tokens with."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt.algorithms import ECAlgorithm

    key_file = ctx.data_dir / "test-issuer-key.pem"
    jwks_file = ctx.data_dir / "test-issuer-jwks.json"
    if not key_file.is_file():
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        write_private(key_file, pem.decode())
        jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
        jwk.update({"kid": "test-issuer-1", "use": "sig", "alg": "ES256"})
        jwks_file.write_text(json.dumps({"keys": [jwk]}))
    return str(key_file), str(jwks_file)


def services(ctx: StackContext) -> list[ServiceSpec]:
    from conformance.host.mtls import make_mtls_material

    layout = auth_layout(ctx)
    from conformance.reference.toolserver.mutants import MUTANTS

    key_file, jwks_file = test_issuer_key(ctx)
    argv = [
        *service_argv("conformance.reference.toolserver", ctx, layout.toolserver_port, data_dir=ctx.data_dir),
        "--ca-file",
        str(ctx.ca_file),
        "--resource",
        layout.resource,
        "--issuer",
        layout.issuer,
        "--trusted-issuer",
        f"{TEST_ISSUER}=file:{jwks_file}",
    ]
    argv += ctx.mutant_args(MUTANTS)
    if ctx.mcp_era != "both":
        argv += ["--mcp-era", ctx.mcp_era]
    mtls_dir, mtls_port = ctx.data_dir / "mtls", ctx.port()
    material = make_mtls_material(mtls_dir, MTLS_DNS_NAME)
    argv += ["--mtls-port", str(mtls_port), "--mtls-trust", str(material.intermediate_file)]
    argv += ["--mtls-dns-name", MTLS_DNS_NAME]
    return [
        ServiceSpec(
            name="toolserver",
            argv=argv,
            health_url=f"{layout.toolserver_url}/healthz",
            # The admin key reaches the server through the environment, never the command line.
            env={"CONFORMANCE_REFERENCE_ADMIN_KEY": layout.admin_key},
            settings={
                "CONFORMANCE_TARGET_URL": layout.resource,
                "CONFORMANCE_ALT_RESOURCE": layout.alt_resource,
                "CONFORMANCE_TEST_ISSUER": TEST_ISSUER,
                "CONFORMANCE_TEST_ISSUER_KEY_FILE": key_file,
                "CONFORMANCE_TEST_ISSUER_KID": "test-issuer-1",
                "CONFORMANCE_REFERENCE_ADMIN_URL": f"{layout.toolserver_url}/_reference",
                "CONFORMANCE_REFERENCE_ADMIN_KEY": layout.admin_key,
                # The mTLS front (AUTH-MTLS-01) and the test PKI whose intermediate it trusts.
                "CONFORMANCE_MTLS": "true",
                "CONFORMANCE_MTLS_URL": f"https://{ctx.host}:{mtls_port}{urlsplit(layout.resource).path}",
                "CONFORMANCE_MTLS_DNS_NAME": MTLS_DNS_NAME,
                "CONFORMANCE_MTLS_MATERIAL": str(mtls_dir),
            },
        )
    ]
