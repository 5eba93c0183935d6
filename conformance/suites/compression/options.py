"""Options of the compression suite: a fetchable image URL for remote targets, the deployment's plain-HTTP URL,
and the object stores to read."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from conformance.config import OptionSpec


def plain_http_url(value: Any) -> None:
    """An ``http://`` URL with a host."""
    parts = urlsplit(str(value))
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"expected a plain-HTTP URL (http://host[:port][/path]), got {value!r}")


OPTIONS: list[OptionSpec] = [
    OptionSpec(
        "image_url",
        "URL of a PNG or JPEG the compression target can fetch (IMG-SHRINK-02 on non-loopback targets; "
        "loopback targets fetch an image the harness serves itself)",
    ),
    OptionSpec(
        "compression_plain_url",
        "plain-HTTP URL where the compression deployment's host listens (IMG-TLS-01: its answers must refuse "
        "plain HTTP; without it the target URL's http:// twin is probed)",
        check=plain_http_url,
    ),
    OptionSpec(
        "objstore_a_endpoint",
        "S3 API endpoint the harness reads stored objects from (default: AWS for the region)",
    ),
    OptionSpec("objstore_a_region", "region of the objstore_a bucket", default="us-east-1"),
    OptionSpec("objstore_a_bucket", "objstore_a bucket the run may write to (IMG-STO-01, IMG-STO-03)"),
    OptionSpec("objstore_a_access_key_id", "objstore_a access key id (put, ACL, get, delete)", secret=True),
    OptionSpec("objstore_a_secret_access_key", "objstore_a secret access key", secret=True),
    OptionSpec(
        "objstore_b_endpoint",
        "GCS JSON API endpoint the harness reads stored objects from",
        default="https://storage.googleapis.com",
    ),
    OptionSpec("objstore_b_bucket", "objstore_b bucket the run may write to (IMG-STO-02, IMG-STO-03)"),
    OptionSpec("objstore_b_access_token", "objstore_b bearer access token (write, read, delete)", secret=True),
]
