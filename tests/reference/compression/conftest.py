"""Fixtures of the compression sandbox tests: the object stores (moto S3 and the GCS emulator, as child processes)
shared by the session, a sandbox child process wired to them, and in-process apps for option variants."""

from __future__ import annotations

import io
import ssl
from collections.abc import Iterator
from http import server
from typing import Any

import httpx
import pytest
from PIL import Image

from conformance.host._serving import ServingThread
from tests.reference.compression.stack import Sandbox, Stores, running_sandbox, running_stores


@pytest.fixture(scope="session")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    with running_stores(tmp_path_factory.mktemp("compression-stores")) as running:
        yield running


@pytest.fixture(scope="session")
def sandbox(stores: Stores) -> Iterator[Sandbox]:
    with running_sandbox(stores, "sandbox-under-test") as running:
        yield running


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[httpx.Client]:
    verify = ssl.create_default_context(cafile=str(sandbox.ca_file))
    with httpx.Client(base_url=sandbox.base_url, auth=("api", sandbox.api_key), verify=verify, timeout=30) as c:
        yield c


def s3_client(stores: Stores) -> Any:
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=stores.settings["CONFORMANCE_OBJSTORE_A_ENDPOINT"],
        region_name="us-east-1",
        aws_access_key_id=stores.creds.access_key_id,
        aws_secret_access_key=stores.creds.secret_access_key,
        verify=str(stores.ctx.ca_file),
    )


def s3_store_options(stores: Stores, key: str, **overrides: Any) -> dict[str, Any]:
    options = {
        "service": "objstore_a",
        "objstore_a_access_key_id": stores.creds.access_key_id,
        "objstore_a_secret_access_key": stores.creds.secret_access_key,
        "region": "us-east-1",
        "path": f"{stores.settings['CONFORMANCE_OBJSTORE_A_BUCKET']}/{key}",
    }
    options.update(overrides)
    return {k: v for k, v in options.items() if v is not None}


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (64, 48), mode: str = "RGB", **save: Any) -> bytes:
    image = Image.linear_gradient("L").resize(size).convert(mode)
    out = io.BytesIO()
    image.save(out, fmt, **save)
    return out.getvalue()


class FileServer:
    """Plain HTTP on 127.0.0.1 serving fixed paths (sources for {source: {url}})."""

    def __init__(self, routes: dict[str, tuple[int, dict[str, str], bytes]]) -> None:
        routes_ = routes

        class Handler(server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, headers, body = routes_.get(self.path, (404, {}, b"missing"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.httpd = server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = ServingThread(self.httpd, "origin-server").start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self) -> None:
        self._thread.stop()  # closes the server


@pytest.fixture
def file_server() -> Iterator[FileServer]:
    png = image_bytes()
    served = FileServer(
        {
            "/photo.png": (200, {"Content-Type": "image/png"}, png),
            "/text": (200, {"Content-Type": "text/plain"}, b"not an image at all"),
            "/redirect": (302, {"Location": "/photo.png"}, b""),
            "/big.png": (200, {"Content-Type": "image/png"}, png + b"\0" * 4096),
        }
    )
    try:
        yield served
    finally:
        served.close()
