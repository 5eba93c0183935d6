"""Reference image-compression sandbox: libvips engine, SQLite counts, S3 (moto) and GCS (emulator) stores.

``create_app(data_dir, api_keys, mutants)`` builds the Starlette app; ``python -m conformance.reference.compression``
serves it over TLS, with a plain-HTTP listener that only redirects to HTTPS (see ``__main__``); ``services(ctx)``
returns the sandbox and its two object stores, each a child process with a health URL, plus the settings a
conformance run needs to reach and read them.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.reference._service import ServiceSpec, StackContext

__all__ = ["MUTANTS", "StoreCredentials", "create_app", "services", "store_services"]


def __getattr__(name: str) -> Any:
    # The catalogue is read on first use, not with the package: the engine's processes (a fresh interpreter each,
    # outside the sandbox's own process) and the object stores import the package and need none of it.
    if name == "MUTANTS":
        from conformance.reference.compression.mutants import MUTANTS

        return MUTANTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_app(*args: Any, **kwargs: Any) -> Any:
    """See :func:`conformance.reference.compression.app.create_app` (imported lazily: libvips loads on use)."""
    from conformance.reference.compression.app import create_app as build

    return build(*args, **kwargs)


BUCKET_A = "conformance-objstore-a"
BUCKET_B = "conformance-objstore-b"
REGION_A = "us-east-1"


@dataclass(frozen=True)
class StoreCredentials:
    """Test credentials of the stack's object stores (fresh for every stack)."""

    access_key_id: str
    secret_access_key: str
    access_token: str

    @classmethod
    def generate(cls) -> StoreCredentials:
        alphabet = string.ascii_uppercase + string.digits
        return cls(
            access_key_id="AKIA" + "".join(secrets.choice(alphabet) for _ in range(16)),
            secret_access_key=secrets.token_urlsafe(30)[:40],
            access_token="ya29.conformance-" + secrets.token_urlsafe(24),
        )


def store_services(ctx: StackContext, creds: StoreCredentials) -> tuple[list[ServiceSpec], dict[str, str]]:
    """The moto S3 server and the GCS emulator, and the run settings that let the harness read them back."""
    from conformance.reference._service import ServiceSpec, service_argv

    port_a, port_b = ctx.port(), ctx.port()
    url_a, url_b = f"https://{ctx.host}:{port_a}", f"https://{ctx.host}:{port_b}"
    module = "conformance.reference.compression.objstores"
    specs = [
        ServiceSpec(
            name="compression-objstore-a",
            argv=service_argv(module, ctx, port_a, "s3"),
            health_url=f"{url_a}/healthz",
            env={
                "OBJSTORE_A_ACCESS_KEY_ID": creds.access_key_id,
                "OBJSTORE_A_SECRET_ACCESS_KEY": creds.secret_access_key,
                "OBJSTORE_A_BUCKETS": BUCKET_A,
            },
        ),
        ServiceSpec(
            name="compression-objstore-b",
            argv=service_argv(module, ctx, port_b, "gcs"),
            health_url=f"{url_b}/healthz",
            env={"OBJSTORE_B_TOKENS": creds.access_token, "OBJSTORE_B_BUCKETS": BUCKET_B},
        ),
    ]
    settings = {
        "CONFORMANCE_OBJSTORE_A_ENDPOINT": url_a,
        "CONFORMANCE_OBJSTORE_A_REGION": REGION_A,
        "CONFORMANCE_OBJSTORE_A_BUCKET": BUCKET_A,
        "CONFORMANCE_OBJSTORE_A_ACCESS_KEY_ID": creds.access_key_id,
        "CONFORMANCE_OBJSTORE_A_SECRET_ACCESS_KEY": creds.secret_access_key,
        "CONFORMANCE_OBJSTORE_B_ENDPOINT": url_b,
        "CONFORMANCE_OBJSTORE_B_BUCKET": BUCKET_B,
        "CONFORMANCE_OBJSTORE_B_ACCESS_TOKEN": creds.access_token,
        "CONFORMANCE_CA_BUNDLE": str(ctx.ca_file),
    }
    return specs, settings


def sandbox_service(
    ctx: StackContext, api_key: str, store_settings: dict[str, str], *, name: str = "compression"
) -> ServiceSpec:
    """The sandbox process (with the stack's mutants that belong to it), wired to the given stores."""
    from conformance.reference._service import ServiceSpec, service_argv
    from conformance.reference.compression.mutants import MUTANTS

    port, plain_port = ctx.port(), ctx.port()
    base_url = f"https://{ctx.host}:{port}"
    argv = service_argv("conformance.reference.compression", ctx, port)
    argv += ["--data-dir", str(ctx.data_dir / name), "--ca-file", str(ctx.ca_file), "--allow-loopback-sources"]
    argv += ["--plain-port", str(plain_port)]
    if "CONFORMANCE_OBJSTORE_A_ENDPOINT" in store_settings:
        argv += ["--objstore-a-endpoint", store_settings["CONFORMANCE_OBJSTORE_A_ENDPOINT"]]
    if "CONFORMANCE_OBJSTORE_B_ENDPOINT" in store_settings:
        argv += ["--objstore-b-endpoint", store_settings["CONFORMANCE_OBJSTORE_B_ENDPOINT"]]
    argv += ctx.mutant_args(MUTANTS)
    return ServiceSpec(
        name=name,
        argv=argv,
        health_url=f"{base_url}/healthz",
        env={"COMPRESSION_API_KEYS": api_key},
        settings={
            "CONFORMANCE_COMPRESSION_URL": base_url,
            "CONFORMANCE_COMPRESSION_API_KEY": api_key,
            "CONFORMANCE_COMPRESSION_PLAIN_URL": f"http://{ctx.host}:{plain_port}",
            **store_settings,
        },
    )


def services(ctx: StackContext) -> list[ServiceSpec]:
    """The sandbox (API key fresh per stack) and the two object stores it writes to."""
    creds = StoreCredentials.generate()
    stores, store_settings = store_services(ctx, creds)
    return [*stores, sandbox_service(ctx, secrets.token_urlsafe(24), store_settings)]
