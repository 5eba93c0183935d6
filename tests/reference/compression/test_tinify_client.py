"""The official ``tinify`` Python client, pointed at the sandbox: shrink, resize, preserve, store, errors."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator

import pytest
import tinify
from PIL import Image

from conformance.suites.compression import images
from tests.reference.compression.conftest import FileServer, s3_client
from tests.reference.compression.stack import Sandbox, Stores


@pytest.fixture
def tinify_client(sandbox: Sandbox) -> Iterator[None]:
    tinify.key = sandbox.api_key
    client = tinify.get_client()
    client.API_ENDPOINT = sandbox.base_url  # the client prefixes it to the relative Locations we send
    client.session.verify = str(sandbox.ca_file)
    client.session.trust_env = False  # else REQUESTS_CA_BUNDLE from the environment overrides verify
    try:
        yield
    finally:
        tinify.get_client().close()
        tinify.key = None


def test_shrink_resize_preserve(tinify_client: None) -> None:
    source = tinify.from_buffer(images.image("meta.jpg"))
    first = tinify.compression_count
    assert isinstance(first, int)
    plain = source.to_buffer()
    assert images.decode(plain) is not None and not images.find_metadata(plain).any
    resized = source.resize(method="fit", width=50, height=50).result()
    assert (resized.width, resized.height) == Image.open(io.BytesIO(resized.data)).size
    assert max(resized.width or 0, resized.height or 0) == 50
    assert tinify.compression_count == first + 1
    kept = source.preserve("copyright", "location").to_buffer()
    found = images.find_metadata(kept)
    assert found.copyright and found.gps_value is not None and not found.created
    assert tinify.compression_count == first + 1  # preserving is free


def test_store_and_from_url(tinify_client: None, stores: Stores, file_server: FileServer) -> None:
    bucket = stores.settings["CONFORMANCE_OBJSTORE_A_BUCKET"]
    key = f"tinify/{uuid.uuid4().hex}.png"
    meta = (
        tinify.from_url(file_server.url("/photo.png"))
        .resize(method="cover", width=20, height=20)
        .store(  # type: ignore[call-overload]  # the contract's field names, not the real service's "s3" ones
            service="objstore_a",
            objstore_a_access_key_id=stores.creds.access_key_id,
            objstore_a_secret_access_key=stores.creds.secret_access_key,
            region="us-east-1",
            path=f"{bucket}/{key}",
            headers={"Cache-Control": "public, max-age=10"},
        )
    )
    assert meta.location and meta.location.endswith(key)
    assert (meta.width, meta.height) == (20, 20)
    stored = s3_client(stores).get_object(Bucket=bucket, Key=key)
    assert Image.open(io.BytesIO(stored["Body"].read())).size == (20, 20)


def test_errors_map_to_the_client_exceptions(tinify_client: None, sandbox: Sandbox) -> None:
    with pytest.raises(tinify.ClientError) as bad_input:
        tinify.from_buffer(b"definitely not an image").to_buffer()
    assert bad_input.value.status == 415
    tinify.get_client().close()
    tinify.key = "wrong-key"
    client = tinify.get_client()
    client.API_ENDPOINT = sandbox.base_url
    client.session.verify = str(sandbox.ca_file)
    client.session.trust_env = False
    with pytest.raises(tinify.AccountError, match="Credentials are invalid"):
        tinify.from_buffer(images.image("flat.png"))
