"""The compression suite's client: the API helper, cached uploads, the count probe, the image server that the
target fetches from (IMG-SHRINK-02), and read-back access to the object stores (IMG-STO-*). Fixtures: conftest.py."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http import server
from pathlib import Path
from typing import Any

import httpx

from conformance import Blocked, Failure, TargetError
from conformance.config import Settings, Target
from conformance.host import Redactor, parse_json
from conformance.host.http import HostHTTP, record_exchange
from conformance.suites.compression import images


@dataclass
class Upload:
    name: str
    sent: bytes
    location: str  # absolute URL of the output
    response: httpx.Response


def json_body(response: httpx.Response) -> Any:
    try:
        return parse_json(response.content)
    except ValueError:
        return None


def count_of(response: httpx.Response) -> int | None:
    value = response.headers.get("compression-count", "").strip()
    return int(value) if value.isdigit() else None


class Api:
    """The compression API as the ``tinify`` client uses it: a relative Location is prefixed with the base URL
    (not resolved against it), so a base URL with a path keeps it."""

    def __init__(self, http: HostHTTP, target: Target) -> None:
        self.http = http
        self.target = target
        self.base = target.base_url.rstrip("/")
        self._uploads: dict[str, Upload] = {}
        self._probe: Upload | None = None

    def url(self, location: str) -> str:
        if location.lower().startswith("https://") or location.lower().startswith("http://"):
            return location
        return self.base + (location if location.startswith("/") else "/" + location)

    def shrink(self, body: bytes, *, content_type: str | None = None, auth: bool = True) -> httpx.Response:
        headers = dict(self.target.auth) if auth else {}
        if content_type:
            headers["Content-Type"] = content_type
        return self.http.post(self.target.url("/shrink"), content=body, headers=headers)

    def shrink_url(self, url: str) -> httpx.Response:
        return self.http.post(self.target.url("/shrink"), json={"source": {"url": url}}, headers=self.target.auth)

    def get(self, location: str) -> httpx.Response:
        return self.http.get(self.url(location), headers=self.target.auth)

    def command(self, location: str, body: dict[str, Any]) -> httpx.Response:
        return self.http.post(self.url(location), json=body, headers=self.target.auth)

    def upload(self, name: str) -> Upload:
        """A cached upload of a test image; a failed upload blocks the checks that need it."""
        if name not in self._uploads:
            self._uploads[name] = self.fresh_upload(name)
        return self._uploads[name]

    def cached(self, name: str) -> Upload | None:
        return self._uploads.get(name)

    def remember(self, name: str, sent: bytes, response: httpx.Response) -> None:
        """Share a successful upload made by a check with the checks that need one."""
        location = response.headers.get("location")
        if response.status_code == 201 and location:
            self._uploads.setdefault(name, Upload(name, sent, self.url(location), response))

    def fresh_upload(self, name: str) -> Upload:
        sent = images.image(name)
        response = self.shrink(sent)
        location = response.headers.get("location")
        if response.status_code != 201 or not location:
            raise Blocked("IMG-SHRINK-01", f"uploading {name} answered {response.status_code} without a Location")
        return Upload(name, sent, self.url(location), response)

    def count(self) -> int:
        """The account's Compression-Count, read by downloading a probe output (a download counts nothing)."""
        if self._probe is None:
            self._probe = self.fresh_upload("flat.png")
        response = self.get(self._probe.location)
        value = count_of(response)
        if response.status_code != 200 or value is None:
            raise Blocked("IMG-OUT-01", f"a download answered {response.status_code} without an integer count")
        return value


def expect_json_error(response: httpx.Response, what: str) -> None:
    """A 4xx with a JSON object body (the fields themselves are IMG-ERR-01's business)."""
    if not 400 <= response.status_code < 500:
        raise Failure(f"{what}: expected a 4xx JSON error, got {response.status_code}")
    if not isinstance(json_body(response), dict):
        raise Failure(f"{what}: the {response.status_code} answer is not a JSON object")


def decoded_or_fail(response: httpx.Response, what: str) -> images.Decoded:
    if response.status_code != 200:
        raise Failure(f"{what}: expected 200 with an image, got {response.status_code}")
    decoded = images.decode(response.content)
    if decoded is None:
        raise Failure(f"{what}: the body ({len(response.content)} bytes) does not decode as PNG or JPEG")
    return decoded


# --- the image the target fetches (IMG-SHRINK-02) ---------------------------------------------------------------


class ImageServer:
    """Plain HTTP on 127.0.0.1 for loopback targets: serves generated images and records what was fetched."""

    def __init__(self, files: dict[str, tuple[bytes, str]], token: str = "") -> None:
        self.files = files
        self.token = token
        self.hits: list[str] = []
        owner = self

        class Handler(server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.hits.append(self.path)
                found = owner.files.get(self.path)
                if found is None:
                    self.send_error(404)
                    return
                body, content_type = found
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.httpd = server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --- object stores the harness reads back ---------------------------------------------------------------------


@dataclass
class StoredObject:
    body: bytes
    content_type: str | None
    cache_control: str | None


@dataclass
class S3Store:
    """objstore_a: an S3 API bucket read with boto3 (the harness's own credentials)."""

    endpoint: str | None
    region: str
    bucket: str
    access_key_id: str
    secret_access_key: str
    ca_bundle: Path | None
    redactor: Redactor
    written: list[str] = field(default_factory=list)
    _client: Any = None

    @classmethod
    def from_settings(cls, settings: Settings, redactor: Redactor) -> S3Store | None:
        """The configured bucket, or None when its bucket or credentials are not set."""
        get = settings.get
        if not (get("objstore_a_bucket") and get("objstore_a_access_key_id") and get("objstore_a_secret_access_key")):
            return None
        redactor.add_secret(get("objstore_a_secret_access_key"))
        return cls(
            endpoint=get("objstore_a_endpoint"),
            region=get("objstore_a_region", "us-east-1"),
            bucket=get("objstore_a_bucket"),
            access_key_id=get("objstore_a_access_key_id"),
            secret_access_key=get("objstore_a_secret_access_key"),
            ca_bundle=get("ca_bundle"),
            redactor=redactor,
        )

    def client(self) -> Any:
        import boto3
        from botocore.config import Config

        if self._client is not None:
            return self._client
        self._client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=self.region,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            verify=str(self.ca_bundle) if self.ca_bundle else True,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}, connect_timeout=5),
        )
        return self._client

    def store_options(self, key: str, **overrides: Any) -> dict[str, Any]:
        self.written.append(key)
        options = {
            "service": "objstore_a",
            "objstore_a_access_key_id": self.access_key_id,
            "objstore_a_secret_access_key": self.secret_access_key,
            "region": self.region,
            "path": f"{self.bucket}/{key}",
        }
        options.update(overrides)
        return {k: v for k, v in options.items() if v is not None}

    def get(self, key: str) -> StoredObject | None:
        from botocore.exceptions import BotoCoreError, ClientError

        client = self.client()
        url = f"{client.meta.endpoint_url.rstrip('/')}/{self.bucket}/{key}"
        started = time.monotonic()
        try:
            found = client.get_object(Bucket=self.bucket, Key=key)
            body = found["Body"].read()
        except ClientError as exc:
            self._record(url, exc.response, None, started)
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise TargetError(f"objstore_a read of {key}: {exc}") from None
        except BotoCoreError as exc:
            self._record(url, {}, None, started, error=str(exc))
            raise TargetError(f"objstore_a read of {key}: {exc}") from None
        self._record(url, found, body, started)
        return StoredObject(body, found.get("ContentType"), found.get("CacheControl"))

    def _record(
        self, url: str, answer: dict[str, Any], body: bytes | None, started: float, error: str | None = None
    ) -> None:
        """The read-back as evidence: boto3 talks to the store itself, so its exchange is recorded by hand."""
        metadata = answer.get("ResponseMetadata", {})
        record_exchange(
            self.redactor,
            method="GET",
            url=url,
            status=metadata.get("HTTPStatusCode"),
            request_headers={"Authorization": "AWS4-HMAC-SHA256 (signed by boto3)"},
            response_headers=metadata.get("HTTPHeaders", {}),
            response_body=body,
            elapsed_s=time.monotonic() - started,
            error=error,
            client="boto3",
        )

    def cleanup(self) -> None:
        client = self.client()
        for key in self.written:
            try:
                client.delete_object(Bucket=self.bucket, Key=key)
            except Exception:  # cleanup is best effort; a leftover object is named by the run prefix
                continue


@dataclass
class GcsStore:
    """objstore_b: a GCS bucket read through the JSON API with a bearer token (through the host client)."""

    endpoint: str
    bucket: str
    access_token: str
    http: HostHTTP
    written: list[str] = field(default_factory=list)

    @classmethod
    def from_settings(cls, settings: Settings, http: HostHTTP) -> GcsStore | None:
        """The configured bucket, or None when its bucket or access token is not set."""
        get = settings.get
        if not (get("objstore_b_bucket") and get("objstore_b_access_token")):
            return None
        http.redactor.add_secret(get("objstore_b_access_token"))
        return cls(get("objstore_b_endpoint"), get("objstore_b_bucket"), get("objstore_b_access_token"), http)

    def store_options(self, key: str, **overrides: Any) -> dict[str, Any]:
        self.written.append(key)
        options = {
            "service": "objstore_b",
            "objstore_b_access_token": self.access_token,
            "path": f"{self.bucket}/{key}",
        }
        options.update(overrides)
        return {k: v for k, v in options.items() if v is not None}

    def _object_url(self, key: str) -> str:
        from urllib.parse import quote

        return f"{self.endpoint.rstrip('/')}/storage/v1/b/{quote(self.bucket, safe='')}/o/{quote(key, safe='')}"

    def get(self, key: str) -> StoredObject | None:
        headers = {"Authorization": f"Bearer {self.access_token}"}
        meta = self.http.get(self._object_url(key), headers=headers)
        if meta.status_code == 404:
            return None
        if meta.status_code != 200 or not isinstance(json_body(meta), dict):
            raise TargetError(f"objstore_b metadata read of {key} answered {meta.status_code}")
        body = self.http.get(self._object_url(key), params={"alt": "media"}, headers=headers)
        if body.status_code != 200:
            raise TargetError(f"objstore_b read of {key} answered {body.status_code}")
        info = parse_json(meta.content)
        return StoredObject(body.content, info.get("contentType"), info.get("cacheControl"))

    def cleanup(self) -> None:
        for key in self.written:
            try:
                self.http.delete(self._object_url(key), headers={"Authorization": f"Bearer {self.access_token}"})
            except Exception:  # best effort, as above
                continue
