"""Storing outputs in object stores, read back by the harness (IMG-STO-*)."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import unquote, urlsplit

from conformance import expect, fail, needs, observe, rule
from conformance.suites.compression import images
from conformance.suites.compression.client import Api, GcsStore, S3Store, count_of, expect_json_error

CACHE_CONTROL = "public, max-age=31536000"
_NEED_A = (
    "an objstore_a (S3 API) bucket the harness can read",
    "--objstore-a-bucket with CONFORMANCE_OBJSTORE_A_ACCESS_KEY_ID and CONFORMANCE_OBJSTORE_A_SECRET_ACCESS_KEY",
)
_NEED_B = (
    "an objstore_b (GCS) bucket the harness can read",
    "--objstore-b-bucket with CONFORMANCE_OBJSTORE_B_ACCESS_TOKEN",
)


def _store_and_read_back(api: Api, store: S3Store | GcsStore, run_prefix: str) -> None:
    upload = api.upload("photo.jpg")
    download = api.get(upload.location)
    expected = images.decode(download.content)
    expect(expected is not None, "the output to store does not download as an image")
    assert expected is not None
    key = f"{run_prefix}/stored-{uuid.uuid4().hex[:10]}.jpg"
    options = store.store_options(key, headers={"Cache-Control": CACHE_CONTROL})
    response = api.command(upload.location, {"store": options})
    expect(response.status_code == 200, f"store answered {response.status_code}, not 200")
    location = response.headers.get("location", "")
    parts = urlsplit(location)
    expect(parts.scheme in ("https", "http") and parts.netloc, f"Location {location!r} is not an absolute URL")
    expect(
        unquote(parts.path).endswith("/" + key) and store.bucket in parts.netloc + parts.path,
        f"Location {location!r} is not the URL of {store.bucket}/{key}",
    )
    shown = (response.headers.get("image-width"), response.headers.get("image-height"))
    expect(
        shown == (str(expected.width), str(expected.height)),
        f"Image-Width/Height {shown} but the stored image is {expected.width}x{expected.height}",
    )
    expect(count_of(response) is not None, "Compression-Count is missing or not an integer")
    stored = store.get(key)
    if stored is None:
        fail(f"the store answered 200 but {store.bucket}/{key} does not exist")
    expect(stored.body == download.content, f"the stored object ({len(stored.body)} bytes) is not the output")
    expect(stored.content_type == expected.mime, f"stored Content-Type is {stored.content_type!r}")
    expect(stored.cache_control == CACHE_CONTROL, f"stored Cache-Control is {stored.cache_control!r}")
    observe(
        f"read back {store.bucket}/{key}: {len(stored.body)} bytes (same as the output), "
        f"{stored.content_type}, Cache-Control {stored.cache_control!r}"
    )


@rule("IMG-STO-01")
def test_store_objstore_a(api: Api, objstore_a: S3Store | None, run_prefix: str) -> None:
    if objstore_a is None:
        needs(*_NEED_A)
    _store_and_read_back(api, objstore_a, run_prefix)


@rule("IMG-STO-02")
def test_store_objstore_b(api: Api, objstore_b: GcsStore | None, run_prefix: str) -> None:
    if objstore_b is None:
        needs(*_NEED_B)
    _store_and_read_back(api, objstore_b, run_prefix)


@rule("IMG-STO-03")
def test_store_refusals(api: Api, objstore_a: S3Store | None, objstore_b: GcsStore | None, run_prefix: str) -> None:
    if objstore_a is None:
        needs(*_NEED_A)
    location = api.upload("photo.jpg").location
    bucket = objstore_a.bucket
    base = f"{run_prefix}/refused-{uuid.uuid4().hex[:8]}"
    cases: list[tuple[str, S3Store | GcsStore, str | None, dict[str, Any]]] = [
        ("no secret key", objstore_a, f"{base}/a.jpg", {"objstore_a_secret_access_key": None}),
        ("no region", objstore_a, f"{base}/b.jpg", {"region": None}),
        ("no path", objstore_a, None, {"path": None}),
        ("a path without object name", objstore_a, None, {"path": bucket}),
        ("a path ending in a slash", objstore_a, f"{base}/dir/", {"path": f"{bucket}/{base}/dir/"}),
        ("a path with an empty segment", objstore_a, f"{base}//c.jpg", {"path": f"{bucket}/{base}//c.jpg"}),
        ("a wrong secret key", objstore_a, f"{base}/d.jpg", {"objstore_a_secret_access_key": "wrong" * 8}),
    ]
    if objstore_b is not None:
        cases.append(("a wrong access token", objstore_b, f"{base}/e.jpg", {"objstore_b_access_token": "ya29.wrong"}))
    problems = []
    for what, store, key, overrides in cases:
        options = store.store_options(key or f"{base}/unused.jpg", **overrides)
        response = api.command(location, {"store": options})
        try:
            expect_json_error(response, f"store with {what}")
        except AssertionError as exc:
            problems.append(str(exc))
        if key is not None and store.get(key) is not None:
            problems.append(f"store with {what} left an object at {store.bucket}/{key}")
    if problems:
        fail("; ".join(problems))
