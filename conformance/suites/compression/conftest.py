"""Fixtures of the compression suite; its client (API calls, the image server, the object stores) is ``client.py``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.config import Settings, Target
from conformance.host import host_of, is_loopback_host
from conformance.host.http import HostHTTP
from conformance.suites._order import alone_after_the_rest
from conformance.suites.compression import images
from conformance.suites.compression.client import Api, GcsStore, ImageServer, S3Store


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The checks that run alone after the others (``conformance.suites._order``)."""
    alone_after_the_rest(items)


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
            f"/{token}/truncated.jpg": (images.image("truncated.jpg"), images.JPEG),
        },
        token,
    )
    try:
        yield served
    finally:
        served.close()


def _cleaned_up(store: S3Store | GcsStore | None) -> Iterator[Any]:
    """Yield the store (or None) and delete what the run wrote into it afterwards."""
    try:
        yield store
    finally:
        if store is not None:
            store.cleanup()


@pytest.fixture(scope="session")
def objstore_a(conformance_settings: Settings, host_http: HostHTTP) -> Iterator[S3Store | None]:
    yield from _cleaned_up(S3Store.from_settings(conformance_settings, host_http))


@pytest.fixture(scope="session")
def objstore_b(conformance_settings: Settings, host_http: HostHTTP) -> Iterator[GcsStore | None]:
    yield from _cleaned_up(GcsStore.from_settings(conformance_settings, host_http))


@pytest.fixture(scope="session")
def run_prefix(conformance_settings: Settings) -> str:
    return f"{conformance_settings.run_id}/compression"
