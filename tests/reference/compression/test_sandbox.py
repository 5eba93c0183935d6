"""The sandbox over HTTP: the child process started like the stack starts it, and in-process variants."""

from __future__ import annotations

import base64
import ssl
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from conformance.reference._service import StackContext
from conformance.reference.compression import create_app, services
from conformance.reference.compression.fetch import SourcePolicy
from conformance.suites.compression import images
from tests.reference.compression.conftest import FileServer, image_bytes, s3_client, s3_store_options
from tests.reference.compression.stack import Sandbox, Stores


def _count(client: httpx.Client, location: str) -> int:
    return int(client.get(location).headers["compression-count"])


def _error(response: Any, status: int) -> dict[str, Any]:
    """Status and error body; ``response`` is httpx's (or the TestClient's equivalent)."""
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["error"], str) and isinstance(body["message"], str)
    return dict(body)


def test_services_describe_the_sandbox_and_its_stores(tmp_path: Path) -> None:
    ctx = StackContext(tmp_path, tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem")
    specs = services(ctx)
    assert [s.name for s in specs] == ["compression-objstore-a", "compression-objstore-b", "compression"]
    assert all(s.health_url.startswith("https://127.0.0.1:") for s in specs)
    settings = specs[-1].settings
    assert settings["CONFORMANCE_COMPRESSION_URL"] + "/healthz" == specs[-1].health_url
    assert settings["CONFORMANCE_COMPRESSION_PLAIN_URL"].startswith("http://127.0.0.1:")
    assert settings["CONFORMANCE_OBJSTORE_A_ENDPOINT"] + "/healthz" == specs[0].health_url
    assert specs[-1].env["COMPRESSION_API_KEYS"] == settings["CONFORMANCE_COMPRESSION_API_KEY"]


def test_authentication(sandbox: Sandbox) -> None:
    verify = ssl.create_default_context(cafile=str(sandbox.ca_file))
    with httpx.Client(base_url=sandbox.base_url, verify=verify, timeout=30) as anonymous:
        assert anonymous.get("/healthz").status_code == 200
        garbled = "Basic !!!" + base64.b64encode(b"x").decode()
        for headers in (
            {},
            {"Authorization": _basic("api", "wrong")},
            {"Authorization": _basic("user", sandbox.api_key)},
            {"Authorization": garbled},
            {"Authorization": f"Bearer {sandbox.api_key}"},
        ):
            body = _error(anonymous.post("/shrink", content=image_bytes(), headers=headers), 401)
            assert body == {"error": "Unauthorized", "message": "Credentials are invalid"}


def test_plain_http_is_redirected_unprocessed(sandbox: Sandbox, client: httpx.Client) -> None:
    """The sandbox's plain-HTTP listener (the run setting CONFORMANCE_COMPRESSION_PLAIN_URL) answers every request
    with a redirect to the same path over HTTPS, and processes nothing."""
    plain = sandbox.settings["CONFORMANCE_COMPRESSION_PLAIN_URL"]
    assert plain.startswith("http://127.0.0.1:")
    location = client.post("/shrink", content=image_bytes()).headers["location"]
    before = _count(client, location)
    auth = {"Authorization": _basic("api", sandbox.api_key)}
    with httpx.Client(base_url=plain, timeout=30) as insecure:
        answer = insecure.post("/shrink?x=1", content=image_bytes(), headers=auth)
        assert answer.status_code == 308
        assert answer.headers["location"] == sandbox.base_url + "/shrink?x=1"
        assert insecure.get(location, headers=auth).status_code == 308
    assert _count(client, location) == before


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_upload_then_download(client: httpx.Client) -> None:
    sent = images.image("photo.png")
    response = client.post("/shrink", content=sent, headers={"Content-Type": "image/jpeg"})
    assert response.status_code == 201
    location = response.headers["location"]
    assert location.startswith("/output/")  # relative, so the tinify client prefixes its endpoint
    record = response.json()
    assert record["input"] == {"size": len(sent), "type": "image/png"}  # type from the bytes, not the header
    download = client.get(location)
    assert download.headers["content-type"] == "image/png"
    assert int(download.headers["content-length"]) == len(download.content) == record["output"]["size"]
    assert (download.headers["image-width"], download.headers["image-height"]) == tuple(map(str, images.PHOTO_PNG_SIZE))
    assert download.headers["compression-count"] == response.headers["compression-count"]


def test_counts_are_atomic_under_concurrency(client: httpx.Client) -> None:
    first = client.post("/shrink", content=image_bytes(size=(32, 32)))
    start = int(first.headers["compression-count"])
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: client.post("/shrink", content=image_bytes(size=(32, 32))), range(12)))
    counts = sorted(int(a.headers["compression-count"]) for a in answers)
    assert counts == list(range(start + 1, start + 13))  # every upload got its own increment
    assert _count(client, first.headers["location"]) == start + 12


def test_combined_resize_preserve_store(client: httpx.Client, stores: Stores) -> None:
    location = client.post("/shrink", content=images.image("meta.jpg")).headers["location"]
    before = _count(client, location)
    key = f"combined/{uuid.uuid4().hex}.jpg"
    body = {
        "resize": {"method": "cover", "width": 40, "height": 30},
        "preserve": ["copyright"],
        "store": s3_store_options(stores, key, headers={"Cache-Control": "max-age=60"}),
    }
    response = client.post(location, json=body)
    assert response.status_code == 200, response.text
    assert response.headers["location"].endswith(f"/{key}")
    assert (response.headers["image-width"], response.headers["image-height"]) == ("40", "30")
    assert int(response.headers["compression-count"]) == before + 1  # the resize counts, storing does not
    stored = s3_client(stores).get_object(Bucket=stores.settings["CONFORMANCE_OBJSTORE_A_BUCKET"], Key=key)
    data = stored["Body"].read()
    assert stored["CacheControl"] == "max-age=60" and stored["ContentType"] == "image/jpeg"
    found = images.find_metadata(data)
    assert found.copyright and not found.gps and images.decode(data) is not None


@pytest.mark.parametrize(
    ("overrides", "status"),
    [
        ({"objstore_a_secret_access_key": None}, 400),
        ({"path": "no-slash"}, 400),
        ({"path": "Bad_Bucket!/x.jpg"}, 400),
        ({"unexpected": "field"}, 400),
        ({"headers": {"X-Other": "1"}}, 400),
        ({"objstore_a_secret_access_key": "wrong-secret-0123456789"}, 403),
        ({"objstore_a_access_key_id": "AKIAUNKNOWNUNKNOWN00"}, 403),
        ({"path": "missing-bucket-xyz/a/b.jpg"}, 400),
    ],
)
def test_store_errors_write_nothing(
    client: httpx.Client, stores: Stores, overrides: dict[str, Any], status: int
) -> None:
    location = client.post("/shrink", content=image_bytes()).headers["location"]
    key = f"refused/{uuid.uuid4().hex}.png"
    before = _count(client, location)
    response = client.post(
        location,
        json={"resize": {"method": "scale", "width": 10}, **{"store": s3_store_options(stores, key, **overrides)}},
    )
    _error(response, status)
    listing = s3_client(stores).list_objects_v2(
        Bucket=stores.settings["CONFORMANCE_OBJSTORE_A_BUCKET"], Prefix="refused/"
    )
    assert not [o["Key"] for o in listing.get("Contents", []) if o["Key"] == key]
    assert _count(client, location) == before  # a failed store does not count its resize


def test_gcs_store_checks_the_token(client: httpx.Client, stores: Stores) -> None:
    location = client.post("/shrink", content=image_bytes()).headers["location"]
    bucket = stores.settings["CONFORMANCE_OBJSTORE_B_BUCKET"]
    options = {"service": "objstore_b", "objstore_b_access_token": "ya29.wrong", "path": f"{bucket}/t/x.png"}
    _error(client.post(location, json={"store": options}), 403)
    options["objstore_b_access_token"] = stores.creds.access_token
    assert client.post(location, json={"store": options}).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b"{not json",
        b'{"convert": {"type": "image/webp"}}',
        b'{"preserve": ["everything"]}',
        b'{"preserve": "copyright"}',
        b'{"resize": {"method": "fit", "width": 10, "height": 10, "extra": 1}}',
        b'{"resize": {"method": "scale", "width": true}}',
        b'{"resize": {"method": "scale", "width": 100000}}',
        b'{"store": "objstore_a"}',
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b'{"resize": {"method": "fit", "width": ' + b"[" * 900 + b"]" * 900 + b"}}",
        b'{"resize": {"method": "fit", "width": ' + b"[" * 5000 + b"]" * 5000 + b"}}",
    ],
)
def test_bad_commands_are_400_json(client: httpx.Client, body: bytes) -> None:
    location = client.post("/shrink", content=image_bytes()).headers["location"]
    _error(client.post(location, content=body, headers={"Content-Type": "application/json"}), 400)


def test_unknown_routes_and_methods_answer_json(client: httpx.Client) -> None:
    _error(client.get("/nowhere"), 404)
    _error(client.delete("/shrink"), 405)
    _error(client.get("/output/unknown"), 404)


def _app(tmp_path: Path, **kwargs: Any) -> TestClient:
    return TestClient(create_app(tmp_path / "data", ["key-1", "key-2"], **kwargs), base_url="https://testserver")


def test_outputs_belong_to_their_key(tmp_path: Path) -> None:
    with _app(tmp_path) as app:
        location = app.post("/shrink", content=image_bytes(), auth=("api", "key-1")).headers["location"]
        assert app.get(location, auth=("api", "key-1")).status_code == 200
        _error(app.get(location, auth=("api", "key-2")), 404)
        assert app.get(location, auth=("api", "key-2")).headers.get("compression-count") is None


def test_monthly_limit(tmp_path: Path) -> None:
    with _app(tmp_path, monthly_limit=2) as app:
        for _ in range(2):
            assert app.post("/shrink", content=image_bytes(), auth=("api", "key-1")).status_code == 201
        body = _error(app.post("/shrink", content=image_bytes(), auth=("api", "key-1")), 429)
        assert body["error"] == "TooManyRequests"
        assert app.post("/shrink", content=image_bytes(), auth=("api", "key-2")).status_code == 201


def test_source_urls(tmp_path: Path, file_server: FileServer) -> None:
    relaxed = SourcePolicy(allow_loopback=True, max_bytes=2000)
    with _app(tmp_path, source_policy=relaxed) as app:
        auth = ("api", "key-1")
        ok = app.post("/shrink", json={"source": {"url": file_server.url("/photo.png")}}, auth=auth)
        assert ok.status_code == 201 and ok.json()["input"]["type"] == "image/png"
        assert app.post("/shrink", json={"source": {"url": file_server.url("/redirect")}}, auth=auth).status_code == 201
        for path in ("/text", "/missing", "/big.png"):
            body = _error(app.post("/shrink", json={"source": {"url": file_server.url(path)}}, auth=auth), 400)
            assert body["error"] == "SourceNotFound"
        for url in (
            "file:///etc/passwd",
            "http://169.254.169.254/latest/meta-data",
            42,
            "http://[::1",
            "http://a:99999/",
        ):
            _error(app.post("/shrink", json={"source": {"url": url}}, auth=auth), 400)
    with _app(tmp_path / "strict") as app:  # the default guard refuses loopback
        _error(app.post("/shrink", json={"source": {"url": file_server.url("/photo.png")}}, auth=("api", "key-1")), 400)


def test_unknown_mutant_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown compression mutant"):
        create_app(tmp_path, ["k"], ["no_such_defect"])
