"""Options of the compression suite: a fetchable image URL for remote targets, and the object stores to read."""

from __future__ import annotations

from conformance.config import OptionSpec

OPTIONS: list[OptionSpec] = [
    OptionSpec(
        "image_url",
        "URL of a PNG or JPEG the compression target can fetch (IMG-SHRINK-02 on non-loopback targets; "
        "loopback targets fetch an image the harness serves itself)",
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
