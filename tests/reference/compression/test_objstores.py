"""The GCS emulator's bearer guard (``objstores.make_gcs_server``): every request is checked before the emulator
dispatches it, the health check excepted."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from conformance.reference.compression.objstores import make_gcs_server
from tests._serving import serving


@pytest.fixture
def gcs() -> Iterator[str]:
    with serving(make_gcs_server("127.0.0.1", 0, ["good-token"], ["bucket-1"], None)) as origin:
        yield origin


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"])
def test_every_method_needs_the_bearer_token(gcs: str, method: str) -> None:
    url = f"{gcs}/storage/v1/b/bucket-1/o"
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic good-token"}):
        assert httpx.request(method, url, headers={**headers, "Connection": "close"}).status_code == 401
    with_token = httpx.request(method, url, headers={"Authorization": "Bearer good-token", "Connection": "close"})
    assert with_token.status_code != 401


def test_the_health_check_needs_no_token(gcs: str) -> None:
    assert httpx.get(f"{gcs}/healthz").json() == {"status": "ok"}
