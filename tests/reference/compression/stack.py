"""Starting the compression sandbox and its object stores for tests: shared stores, one sandbox per mutant set."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.reference._service import StackContext, free_port
from conformance.reference.compression import StoreCredentials, create_app, sandbox_service, store_services
from conformance.reference.stack import make_certificates, run_services
from tests._serving import serving_on_thread


@dataclass
class Stores:
    ctx: StackContext
    creds: StoreCredentials
    settings: dict[str, str]  # CONFORMANCE_OBJSTORE_* and CONFORMANCE_CA_BUNDLE


@dataclass
class Sandbox:
    base_url: str
    api_key: str
    settings: dict[str, str]  # everything a conformance run needs (target, key, stores, CA)
    ca_file: Path


def make_context(directory: Path, mutants: frozenset[str] = frozenset()) -> StackContext:
    directory.mkdir(parents=True, exist_ok=True)
    ca_file, cert_file, key_file = make_certificates(directory)
    return StackContext(data_dir=directory, ca_file=ca_file, cert_file=cert_file, key_file=key_file, mutants=mutants)


@contextlib.contextmanager
def running_stores(directory: Path) -> Iterator[Stores]:
    ctx = make_context(directory)
    creds = StoreCredentials.generate()
    specs, settings = store_services(ctx, creds)
    with run_services(specs, ctx.ca_file, directory / "logs"):
        yield Stores(ctx, creds, settings)


@contextlib.contextmanager
def running_sandbox(stores: Stores, name: str, mutants: frozenset[str] = frozenset()) -> Iterator[Sandbox]:
    """A sandbox process (with ``mutants``) wired to the shared stores; stopped on exit."""
    base = stores.ctx
    ctx = StackContext(
        data_dir=base.data_dir / name,
        ca_file=base.ca_file,
        cert_file=base.cert_file,
        key_file=base.key_file,
        mutants=mutants,
    )
    api_key = secrets.token_urlsafe(18)
    spec = sandbox_service(ctx, api_key, stores.settings, name="compression")
    with run_services([spec], base.ca_file, ctx.data_dir / "logs"):
        yield Sandbox(spec.settings["CONFORMANCE_COMPRESSION_URL"], api_key, dict(spec.settings), base.ca_file)


@contextlib.contextmanager
def serving_sandbox(stores: Stores, name: str, mutants: frozenset[str] = frozenset()) -> Iterator[Sandbox]:
    """The same sandbox, served by uvicorn in a thread of this process (no interpreter start-up per mutant)."""
    # The sandbox's libraries (boto3, libvips, uvicorn) load here, not when a module using this one is collected.
    from conformance.reference.compression.fetch import SourcePolicy
    from conformance.reference.compression.serve import SandboxServer
    from conformance.reference.compression.store import StoreConfig

    base = stores.ctx
    api_key = secrets.token_urlsafe(18)
    app = create_app(
        base.data_dir / name,
        [api_key],
        mutants,
        source_policy=SourcePolicy(allow_loopback=True, ca_file=str(base.ca_file)),
        stores=StoreConfig(
            stores.settings["CONFORMANCE_OBJSTORE_A_ENDPOINT"],
            stores.settings["CONFORMANCE_OBJSTORE_B_ENDPOINT"],
            str(base.ca_file),
        ),
    )
    port, plain_port = free_port(), free_port()
    server = SandboxServer(
        app,
        "127.0.0.1",
        port,
        str(base.cert_file),
        str(base.key_file),
        plain_http="plain_http" in mutants,
        plain_output_only="plain_http_output" in mutants,
        plain_port=plain_port,
    )
    # generous: the box may be shared and loaded
    with serving_on_thread(server, f"sandbox {name}", timeout=60, stop=server.stop):
        base_url = f"https://127.0.0.1:{port}"
        settings = {
            **stores.settings,
            "CONFORMANCE_COMPRESSION_URL": base_url,
            "CONFORMANCE_COMPRESSION_API_KEY": api_key,
            "CONFORMANCE_COMPRESSION_PLAIN_URL": f"http://127.0.0.1:{plain_port}",
        }
        yield Sandbox(base_url, api_key, settings, base.ca_file)
