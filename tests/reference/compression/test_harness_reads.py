"""The harness's read-back of objstore_a (conformance/suites/compression/client.py S3Store: botocore's SigV4 signer,
the host's client) against the reference's S3 store, which verifies every signature (moto with IAM auth on): what
the unit tests in tests/suites/compression/test_store_client.py cannot show with a mock."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest

from conformance.config import Settings
from conformance.host import HostHTTP
from conformance.suites.compression.client import S3Store, StoreUnreadable
from tests.reference.compression.conftest import s3_client
from tests.reference.compression.stack import Stores


def harness_store(stores: Stores) -> S3Store:
    values = {k.removeprefix("CONFORMANCE_").lower(): v for k, v in stores.settings.items()}
    http = HostHTTP(ca_bundle=Path(values["ca_bundle"]), retry=None)
    store = S3Store.from_settings(Settings(values), http)
    assert store is not None
    return store


def test_the_harness_reads_back_deletes_and_misses_objects_with_verified_signatures(stores: Stores) -> None:
    store = harness_store(stores)
    key = f"harness-reads/{uuid.uuid4().hex}/a stored image+1.jpg"  # quoted in the path and in the signed request alike
    s3_client(stores).put_object(
        Bucket=store.bucket, Key=key, Body=b"\xff\xd8\xffbytes", ContentType="image/jpeg", CacheControl="no-store"
    )
    found = store.get(key)
    assert found is not None
    assert (found.body, found.content_type, found.cache_control) == (b"\xff\xd8\xffbytes", "image/jpeg", "no-store")
    store.written.append(key)
    store.cleanup()
    assert store.get(key) is None  # deleted; and a missing key is None, not an error


@pytest.mark.parametrize(
    ("change", "code"),
    [({"secret_access_key": "wrong" * 8}, "SignatureDoesNotMatch"), ({"access_key_id": "AKIAUNKNOWN0000"}, "")],
    ids=["wrong secret", "unknown key id"],
)
def test_credentials_the_store_refuses_keep_the_harness_from_reading(
    stores: Stores, change: dict[str, str], code: str
) -> None:
    store = dataclasses.replace(harness_store(stores), **change)
    with pytest.raises(StoreUnreadable) as raised:
        store.get("any.jpg")
    assert raised.value.reason.startswith("403") and code in raised.value.reason
