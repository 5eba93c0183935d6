"""``store``: validation of the request, then one atomic write to the object store.

``objstore_a`` speaks the S3 API through boto3 (PUT with ACL and ``Cache-Control`` in one request);
``objstore_b`` speaks the GCS JSON API (one multipart upload carrying metadata and bytes) with a bearer token.
Each write is a single request, so an error never leaves a half-written object behind.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import boto3
import httpx
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from ._tls import client_context
from .errors import ServiceError

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")
_CACHE_CONTROL = re.compile(r"^[\x20-\x7e]{1,256}$")
_FIELDS = {
    "objstore_a": {"service", "objstore_a_access_key_id", "objstore_a_secret_access_key", "region", "path", "headers"},
    "objstore_b": {"service", "objstore_b_access_token", "path", "headers"},
}
_REQUIRED = {
    "objstore_a": ("objstore_a_access_key_id", "objstore_a_secret_access_key", "region", "path"),
    "objstore_b": ("objstore_b_access_token", "path"),
}
_CREDENTIAL_ERRORS = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "AccessDenied",
    "InvalidToken",
    "ExpiredToken",
    "AuthorizationHeaderMalformed",
}


class StoreError(ServiceError):
    """An object store refused or failed a write or a read."""


@dataclass(frozen=True)
class StoreRequest:
    service: str
    bucket: str
    key: str
    cache_control: str | None
    credentials: dict[str, str]


@dataclass(frozen=True)
class StoreConfig:
    objstore_a_endpoint: str | None = None
    objstore_b_endpoint: str | None = None
    ca_file: str | None = None  # trust for the stores' TLS (the stack's CA)


def _bad(message: str) -> StoreError:
    return StoreError(400, "BadRequest", f"JSON validation error: {message}")


def parse_path(path: object, *, lenient: bool = False) -> tuple[str, str]:
    """``<bucket>/<path>/<filename>`` → (bucket, key). ``lenient`` is the bad-path mutant."""
    if not isinstance(path, str) or not path:
        raise _bad("store.path must be a non-empty string")
    bucket, _, key = path.partition("/")
    if lenient and bucket and key:
        return bucket, key
    if not _BUCKET.match(bucket):
        raise _bad("store.path must start with a valid bucket name")
    segments = key.split("/")
    if not key or any(s in ("", ".", "..") for s in segments):
        raise _bad("store.path must be <bucket>/<path>/<filename> without empty, '.' or '..' segments")
    if len(key.encode()) > 1024 or any(ord(c) < 0x20 or ord(c) == 0x7F for c in key):
        raise _bad("store.path has an invalid object name")
    return bucket, key


def parse_store(options: object, *, lenient_path: bool = False) -> StoreRequest:
    if not isinstance(options, dict):
        raise _bad("store must be an object")
    service = options.get("service")
    if service not in _FIELDS:
        raise _bad("store.service must be objstore_a or objstore_b")
    unknown = set(options) - _FIELDS[service]
    if unknown:
        raise _bad(f"unknown store field(s): {', '.join(sorted(unknown))}")
    for name in _REQUIRED[service]:
        value = options.get(name)
        if not isinstance(value, str) or not value.strip():
            raise _bad(f"store.{name} is required")
    headers = options.get("headers", {})
    if not isinstance(headers, dict):
        raise _bad("store.headers must be an object")
    cache_control: str | None = None
    for name, value in headers.items():
        if name.lower() != "cache-control":
            raise _bad(f"store.headers may only hold Cache-Control, not {name!r}")
        if not isinstance(value, str) or not _CACHE_CONTROL.match(value):
            raise _bad("store.headers.Cache-Control must be printable ASCII text")
        cache_control = value
    bucket, key = parse_path(options["path"], lenient=lenient_path)
    credentials = {k: v for k, v in options.items() if k not in ("service", "path", "headers")}
    return StoreRequest(service, bucket, key, cache_control, credentials)


def stored_url(request: StoreRequest, config: StoreConfig) -> str:
    endpoint = config.objstore_a_endpoint if request.service == "objstore_a" else config.objstore_b_endpoint
    return f"{(endpoint or '').rstrip('/')}/{request.bucket}/{quote(request.key)}"


def write(request: StoreRequest, data: bytes, mime: str, config: StoreConfig) -> str:
    """Write the object; returns its URL (the ``Location`` of the answer)."""
    if request.service == "objstore_a":
        return _write_a(request, data, mime, config)
    return _write_b(request, data, mime, config)


@functools.lru_cache(maxsize=16)
def _s3_client(endpoint: str, region: str, key_id: str, secret: str, ca_file: str | None) -> Any:
    """boto3 clients are thread-safe and costly to build: one per credential set, a few kept."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        verify=ca_file or True,
        config=Config(
            s3={"addressing_style": "path"},
            retries={"max_attempts": 2},
            connect_timeout=5,
            read_timeout=20,
        ),
    )


def _write_a(request: StoreRequest, data: bytes, mime: str, config: StoreConfig) -> str:
    endpoint = config.objstore_a_endpoint
    if not endpoint:
        raise StoreError(400, "BadRequest", "objstore_a is not available on this service")
    creds = request.credentials
    client = _s3_client(
        endpoint,
        creds["region"],
        creds["objstore_a_access_key_id"],
        creds["objstore_a_secret_access_key"],
        config.ca_file,
    )
    extra: dict[str, Any] = {"ACL": "public-read", "ContentType": mime}
    if request.cache_control:
        extra["CacheControl"] = request.cache_control
    try:
        client.put_object(Bucket=request.bucket, Key=request.key, Body=data, **extra)
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in _CREDENTIAL_ERRORS or exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 403:
            raise StoreError(403, "Forbidden", f"The object store rejected the credentials ({code})") from exc
        if code == "NoSuchBucket":
            raise StoreError(400, "BadRequest", "The bucket does not exist") from exc
        raise StoreError(502, "BadGateway", f"The object store refused the write ({code})") from exc
    except BotoCoreError as exc:
        raise StoreError(502, "BadGateway", "The object store is unreachable") from exc
    return stored_url(request, config)


def _write_b(request: StoreRequest, data: bytes, mime: str, config: StoreConfig) -> str:
    endpoint = config.objstore_b_endpoint
    if not endpoint:
        raise StoreError(400, "BadRequest", "objstore_b is not available on this service")
    base = endpoint.rstrip("/")
    meta: dict[str, str] = {"name": request.key, "contentType": mime}
    if request.cache_control:
        meta["cacheControl"] = request.cache_control
    boundary = secrets.token_hex(16)
    body = (
        (
            f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{json.dumps(meta)}\r\n"
            f"--{boundary}\r\nContent-Type: {mime}\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    url = f"{base}/upload/storage/v1/b/{quote(request.bucket, safe='')}/o?uploadType=multipart"
    headers = {
        "Authorization": f"Bearer {request.credentials['objstore_b_access_token']}",
        "Content-Type": f"multipart/related; boundary={boundary}",
    }
    try:
        with httpx.Client(timeout=20, verify=client_context(config.ca_file)) as client:
            response = client.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise StoreError(502, "BadGateway", "The object store is unreachable") from exc
    if response.status_code in (401, 403):
        raise StoreError(403, "Forbidden", "The object store rejected the access token")
    if response.status_code == 404:
        raise StoreError(400, "BadRequest", "The bucket does not exist")
    if response.status_code != 200:
        raise StoreError(502, "BadGateway", f"The object store refused the write ({response.status_code})")
    return stored_url(request, config)
