"""Fixtures of the compression suite; its client (API calls, the image server, the object stores) is ``client.py``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from conformance.config import Settings, Target
from conformance.host._guard import host_of, is_loopback_host
from conformance.host.http import HostHTTP
from conformance.suites.compression import images
from conformance.suites.compression.client import Api, GcsStore, ImageServer, S3Store


@pytest.fixture(scope="session")
def api(host_http: HostHTTP, compression_target: Target) -> Api:
    return Api(host_http, compression_target)


@pytest.fixture(scope="session")
def image_server(compression_target: Target) -> Iterator[ImageServer | None]:
    """Only for loopback targets (a remote target cannot reach our 127.0.0.1): else None."""
    if not is_loopback_host(host_of(compression_target.base_url)):
        yield None
        return
    token = uuid.uuid4().hex
    served = ImageServer(
        {
            f"/{token}/photo.jpg": (images.image("photo.jpg"), images.JPEG),
            f"/{token}/notes.txt": (images.image("text.txt"), "text/plain"),
        },
        token,
    )
    try:
        yield served
    finally:
        served.close()


@pytest.fixture(scope="session")
def objstore_a(conformance_settings: Settings, host_http: HostHTTP) -> Iterator[S3Store | None]:
    get = conformance_settings.get
    if not (get("objstore_a_bucket") and get("objstore_a_access_key_id") and get("objstore_a_secret_access_key")):
        yield None
        return
    host_http.redactor.add_secret(get("objstore_a_secret_access_key"))
    store = S3Store(
        endpoint=get("objstore_a_endpoint"),
        region=get("objstore_a_region", "us-east-1"),
        bucket=get("objstore_a_bucket"),
        access_key_id=get("objstore_a_access_key_id"),
        secret_access_key=get("objstore_a_secret_access_key"),
        ca_bundle=get("ca_bundle"),
        redactor=host_http.redactor,
    )
    try:
        yield store
    finally:
        store.cleanup()


@pytest.fixture(scope="session")
def objstore_b(conformance_settings: Settings, host_http: HostHTTP) -> Iterator[GcsStore | None]:
    get = conformance_settings.get
    if not (get("objstore_b_bucket") and get("objstore_b_access_token")):
        yield None
        return
    host_http.redactor.add_secret(get("objstore_b_access_token"))
    store = GcsStore(get("objstore_b_endpoint"), get("objstore_b_bucket"), get("objstore_b_access_token"), host_http)
    try:
        yield store
    finally:
        store.cleanup()


@pytest.fixture(scope="session")
def run_prefix(conformance_settings: Settings) -> str:
    return f"{conformance_settings.run_id}/compression"
