"""The compression suite's client: the API helper, cached uploads, the count probe, the image server that the
target fetches from (IMG-SHRINK-02), and read-back access to the object stores (IMG-STO-*). Fixtures: conftest.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from conformance import Blocked, Failure, NeedsUnmet, TargetUnreachable, UrlRefused
from conformance.config import Settings, Target
from conformance.host import parse_json
from conformance.host.http import HostHTTP
from conformance.judges.compression import count_of
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
        if name not in self._uploads:  # checks running at once may both upload it: all use the first one kept
            return self._uploads.setdefault(name, self.fresh_upload(name))
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
        from http import server  # only loopback targets get one: a remote target's run never loads it

        from conformance.host._serving import ServingThread

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
        self.thread = ServingThread(self.httpd, "image-server").start()  # stops at once, not at the next poll

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.thread.stop()  # closes the server


# --- object stores the harness reads back ---------------------------------------------------------------------


@dataclass
class StoredObject:
    body: bytes
    content_type: str | None
    cache_control: str | None


class StoreUnreadable(NeedsUnmet):
    """The harness could not read a store back (unreachable, its own credentials refused, the store failing, the
    endpoint refused by the host's URL policy): the object store is a prerequisite of the check, not the target, so
    the check is skipped with the reason, never failed. The run is INCOMPLETE: a store that was configured but
    could not be read leaves the storage rules undecided, which an ACCEPTED verdict would hide."""

    def __init__(self, store: str, key: str, reason: str) -> None:
        need, option = STORE_NEEDS[store]
        super().__init__(f"{need}: reading {key} back failed ({reason})", option, incomplete=True)
        self.reason = reason


STORE_NEEDS = {
    "objstore_a": (
        "an objstore_a (S3 API) bucket the harness can read",
        "--objstore-a-bucket with CONFORMANCE_OBJSTORE_A_ACCESS_KEY_ID and CONFORMANCE_OBJSTORE_A_SECRET_ACCESS_KEY",
    ),
    "objstore_b": (
        "an objstore_b (GCS) bucket the harness can read",
        "--objstore-b-bucket with CONFORMANCE_OBJSTORE_B_ACCESS_TOKEN",
    ),
}


def _read_as_absent(written: list[str], key: str) -> None:
    """A key the store said it does not hold needs no deleting at cleanup (a refusal case's key, most of them: one
    request less each)."""
    if key in written:
        written.remove(key)


def _s3_error_code(response: httpx.Response) -> str | None:
    """The ``<Error><Code>`` of an S3 error answer (None: no XML body, as for HEAD or some 404s)."""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(response.content)
    except ElementTree.ParseError:
        return None
    code = root.findtext("Code") if root.tag.rpartition("}")[2] == "Error" else None
    return code.strip() if code else None


@dataclass
class S3Store:
    """objstore_a: an S3 API bucket read back with the harness's own credentials: requests signed with botocore's
    SigV4 signer, sent by the host's client (its TLS trust, timeouts, URL guard, evidence and redaction)."""

    endpoint: str | None
    region: str
    bucket: str
    access_key_id: str
    secret_access_key: str
    http: HostHTTP
    written: list[str] = field(default_factory=list)

    @classmethod
    def from_settings(cls, settings: Settings, http: HostHTTP) -> S3Store | None:
        """The configured bucket, or None when its bucket or credentials are not set."""
        get = settings.get
        if not (get("objstore_a_bucket") and get("objstore_a_access_key_id") and get("objstore_a_secret_access_key")):
            return None
        http.redactor.add_secret(get("objstore_a_secret_access_key"))
        return cls(
            endpoint=get("objstore_a_endpoint"),
            region=get("objstore_a_region", "us-east-1"),
            bucket=get("objstore_a_bucket"),
            access_key_id=get("objstore_a_access_key_id"),
            secret_access_key=get("objstore_a_secret_access_key"),
            http=http,
        )

    def store_options(self, key: str, *, record: bool = True, **overrides: Any) -> dict[str, Any]:
        """Valid store options writing ``key``, with ``overrides``; ``record``: delete it at cleanup (False when the
        overrides send the target elsewhere, so that it cannot have been written)."""
        if record:
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

    def object_url(self, key: str) -> str:
        """Path-style, as the sandbox's Location: ``{endpoint}/{bucket}/{key}`` (AWS's regional endpoint when none
        is configured); the key quoted as boto3 quotes it."""
        endpoint = (self.endpoint or f"https://s3.{self.region}.amazonaws.com").rstrip("/")
        return f"{endpoint}/{self.bucket}/{quote(key, safe='/~')}"

    def _signed(self, method: str, key: str) -> tuple[str, dict[str, str]]:
        """The URL and the SigV4 headers of a bodiless request. The signature is registered as a secret before the
        request leaves: a store that echoes it (S3's SignatureDoesNotMatch answer does) never shows it in a report.
        """
        try:
            from botocore.auth import S3SigV4Auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
        except ImportError:
            raise StoreUnreadable("objstore_a", key, "botocore is not installed: pip install botocore") from None
        url = self.object_url(key)
        request = AWSRequest(method=method, url=url, headers={})
        S3SigV4Auth(Credentials(self.access_key_id, self.secret_access_key), "s3", self.region).add_auth(request)
        headers = {name: str(value) for name, value in request.headers.items()}
        self.http.redactor.add_secret(headers["Authorization"].rpartition("Signature=")[2])
        return url, headers

    def get(self, key: str) -> StoredObject | None:
        """The object, or None when the store says it does not exist (NoSuchKey). Anything else that keeps the
        harness from reading it raises :class:`StoreUnreadable`."""
        url, headers = self._signed("GET", key)
        try:
            response = self.http.get(url, headers=headers)
        except (TargetUnreachable, UrlRefused) as exc:
            raise StoreUnreadable("objstore_a", key, str(exc)) from None
        if response.status_code == 200:
            headers_in = response.headers
            return StoredObject(response.content, headers_in.get("content-type"), headers_in.get("cache-control"))
        code = _s3_error_code(response)
        if response.status_code == 404 and code in (None, "NoSuchKey"):
            _read_as_absent(self.written, key)
            return None
        raise StoreUnreadable("objstore_a", key, f"{response.status_code}" + (f" {code}" if code else ""))

    def cleanup(self) -> None:
        for key in self.written:
            try:
                url, headers = self._signed("DELETE", key)
                self.http.delete(url, headers=headers)
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

    def store_options(self, key: str, *, record: bool = True, **overrides: Any) -> dict[str, Any]:
        """As :meth:`S3Store.store_options`."""
        if record:
            self.written.append(key)
        options = {
            "service": "objstore_b",
            "objstore_b_access_token": self.access_token,
            "path": f"{self.bucket}/{key}",
        }
        options.update(overrides)
        return {k: v for k, v in options.items() if v is not None}

    def _object_url(self, key: str) -> str:
        return f"{self.endpoint.rstrip('/')}/storage/v1/b/{quote(self.bucket, safe='')}/o/{quote(key, safe='')}"

    def get(self, key: str) -> StoredObject | None:
        """The object, or None when the store answers 404. Anything else that keeps the harness from reading it
        raises :class:`StoreUnreadable`."""
        headers = {"Authorization": f"Bearer {self.access_token}"}
        try:
            meta = self.http.get(self._object_url(key), headers=headers)
            if meta.status_code == 404:
                _read_as_absent(self.written, key)
                return None
            info = json_body(meta)
            if meta.status_code != 200 or not isinstance(info, dict):
                raise StoreUnreadable("objstore_b", key, f"its metadata answered {meta.status_code}")
            body = self.http.get(self._object_url(key), params={"alt": "media"}, headers=headers)
        except (TargetUnreachable, UrlRefused) as exc:
            raise StoreUnreadable("objstore_b", key, str(exc)) from None
        if body.status_code != 200:
            raise StoreUnreadable("objstore_b", key, f"its download answered {body.status_code}")
        return StoredObject(body.content, info.get("contentType"), info.get("cacheControl"))

    def cleanup(self) -> None:
        for key in self.written:
            try:
                self.http.delete(self._object_url(key), headers={"Authorization": f"Bearer {self.access_token}"})
            except Exception:  # best effort, as above
                continue
