"""How the harness reads the object stores back (IMG-STO-*): S3 requests signed with botocore's SigV4 signer and sent
by the host's client, the GCS JSON API with a bearer token; what a store's answer means for the check (the object,
no object, or a store the harness cannot read: the check is skipped, never failed); no signature in the evidence.
The signing itself is proven against a store that verifies it in tests/reference/compression/test_objstores.py."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

import httpx
import pytest

from conformance import NeedsUnmet
from conformance.config import Settings
from conformance.core import _context
from conformance.host import HostHTTP, Redactor, UrlGuard
from conformance.suites.compression.client import GcsStore, S3Store, StoreUnreadable

SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
KEY = "run/compression/stored 1.jpg"

Handler = Callable[[httpx.Request], httpx.Response]


def host(handler: Handler) -> HostHTTP:
    return HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(), retry=None, redactor=Redactor())


def s3(handler: Handler, endpoint: str | None = "https://s3.test.example") -> S3Store:
    settings = Settings(
        {
            "objstore_a_endpoint": endpoint,
            "objstore_a_region": "eu-west-3",
            "objstore_a_bucket": "bucket-a",
            "objstore_a_access_key_id": "AKIDEXAMPLE",
            "objstore_a_secret_access_key": SECRET_KEY,
        }
    )
    store = S3Store.from_settings(settings, host(handler))
    assert store is not None
    return store


def gcs(handler: Handler) -> GcsStore:
    settings = Settings(
        {
            "objstore_b_endpoint": "https://gcs.test.example",
            "objstore_b_bucket": "bucket-b",
            "objstore_b_access_token": "ya29.harness-token",
        }
    )
    store = GcsStore.from_settings(settings, host(handler))
    assert store is not None
    return store


def s3_error(status: int, code: str, **fields: str) -> httpx.Response:
    extra = "".join(f"<{k}>{v}</{k}>" for k, v in fields.items())
    body = f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>m</Message>{extra}</Error>'
    return httpx.Response(status, content=body.encode(), headers={"Content-Type": "application/xml"})


@pytest.fixture
def check() -> Iterator[_context.CheckRecord]:
    record = _context.begin(["IMG-STO-01"])
    yield record
    _context.end()


def test_s3_reads_are_sigv4_signed_path_style_requests_through_the_host_client(check: _context.CheckRecord) -> None:
    seen: list[httpx.Request] = []

    def store(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        headers = {"Content-Type": "image/jpeg", "Cache-Control": "public, max-age=60"}
        return httpx.Response(200, content=b"\xff\xd8\xffjpeg", headers=headers)

    found = s3(store).get(KEY)
    assert found is not None
    assert (found.body, found.content_type, found.cache_control) == (
        b"\xff\xd8\xffjpeg",
        "image/jpeg",
        "public, max-age=60",
    )
    (request,) = seen
    assert request.method == "GET" and request.url.raw_path == b"/bucket-a/run/compression/stored%201.jpg"
    authorization = request.headers["authorization"]
    assert re.fullmatch(
        r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/eu-west-3/s3/aws4_request, "
        r"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}",
        authorization,
    ), authorization
    assert request.headers["x-amz-content-sha256"] and request.headers["x-amz-date"]
    (exchange,) = check.exchanges  # the read-back is evidence, as every exchange of the host's client
    assert "client" not in exchange and exchange["status"] == 200
    assert {k.lower(): v for k, v in exchange["request_headers"].items()}["authorization"] == "[REDACTED]"


def test_without_an_endpoint_s3_is_aws_regional_endpoint() -> None:
    seen: list[str] = []
    s3(lambda r: seen.append(str(r.url)) or httpx.Response(404), endpoint=None).get("k.jpg")
    assert seen == ["https://s3.eu-west-3.amazonaws.com/bucket-a/k.jpg"]


@pytest.mark.parametrize("answer", [s3_error(404, "NoSuchKey"), httpx.Response(404)], ids=["NoSuchKey", "bare 404"])
def test_an_s3_object_that_does_not_exist_is_none(answer: httpx.Response) -> None:
    assert s3(lambda r: answer).get(KEY) is None


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        (s3_error(403, "InvalidAccessKeyId"), "403 InvalidAccessKeyId"),
        (s3_error(403, "AccessDenied"), "403 AccessDenied"),
        (s3_error(404, "NoSuchBucket"), "404 NoSuchBucket"),
        (s3_error(503, "SlowDown"), "503 SlowDown"),
        (httpx.Response(500, content=b"<html>oops"), "500"),
    ],
    ids=["unknown key id", "access denied", "no bucket", "slow down", "not XML"],
)
def test_an_s3_store_the_harness_cannot_read_skips_the_check(answer: httpx.Response, shown: str) -> None:
    """The harness's own credentials, bucket or the store failing: a need of the check, not the target's failure
    (never a TargetError, which would fail the rule)."""
    with pytest.raises(StoreUnreadable) as raised:
        s3(lambda r: answer).get(KEY)
    assert isinstance(raised.value, NeedsUnmet) and raised.value.reason == shown
    assert raised.value.incomplete  # configured, yet unreadable: the run says INCOMPLETE, not ACCEPTED
    assert "objstore_a" in raised.value.need and raised.value.option


def test_an_unreachable_or_refused_s3_endpoint_skips_the_check() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(StoreUnreadable, match="could not connect"):
        s3(refused).get(KEY)
    with pytest.raises(StoreUnreadable, match="plain HTTP is not allowed"):  # the host's URL policy, as for GCS
        s3(lambda r: httpx.Response(200), endpoint="http://minio.test.example:9000").get(KEY)


def test_the_signature_never_reaches_the_evidence(check: _context.CheckRecord) -> None:
    """S3's SignatureDoesNotMatch answer echoes the signature it was given: redacted like the secret key."""
    signatures: list[str] = []

    def store(request: httpx.Request) -> httpx.Response:
        signatures.append(request.headers["authorization"].rpartition("Signature=")[2])
        return s3_error(403, "SignatureDoesNotMatch", SignatureProvided=signatures[-1], AWSAccessKeyId="AKIDEXAMPLE")

    with pytest.raises(StoreUnreadable):
        s3(store).get(KEY)
    recorded = json.dumps(check.exchanges)
    assert len(signatures) == 1 and "SignatureDoesNotMatch" in recorded  # the answer is evidence...
    assert signatures[0] not in recorded and SECRET_KEY not in recorded  # ...but not the signature it echoed


def test_cleanup_deletes_what_the_run_wrote_with_signed_requests() -> None:
    seen: list[tuple[str, str]] = []

    def store(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path))
        assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
        return httpx.Response(204)

    store_a = s3(store)
    store_a.store_options("a.jpg")
    store_a.store_options("b.jpg")
    store_a.cleanup()
    assert seen == [("DELETE", "/bucket-a/a.jpg"), ("DELETE", "/bucket-a/b.jpg")]


def test_gcs_reads_metadata_then_media() -> None:
    def store(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == "Bearer ya29.harness-token"
        if request.url.params.get("alt") == "media":
            return httpx.Response(200, content=b"\x89PNG\r\n\x1a\n")
        return httpx.Response(200, json={"contentType": "image/png", "cacheControl": "no-cache"})

    found = gcs(store).get(KEY)
    assert found is not None and (found.body, found.content_type, found.cache_control) == (
        b"\x89PNG\r\n\x1a\n",
        "image/png",
        "no-cache",
    )
    assert gcs(lambda r: httpx.Response(404, json={"error": {"code": 404}})).get(KEY) is None


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        (lambda r: httpx.Response(401, json={"error": {}}), "its metadata answered 401"),
        (lambda r: httpx.Response(503, text="busy"), "its metadata answered 503"),
        (
            lambda r: httpx.Response(403) if r.url.params.get("alt") else httpx.Response(200, json={}),
            "its download answered 403",
        ),
    ],
    ids=["token refused", "store failing", "download refused"],
)
def test_a_gcs_store_the_harness_cannot_read_skips_the_check(answer: Handler, shown: str) -> None:
    with pytest.raises(StoreUnreadable) as raised:
        gcs(answer).get(KEY)
    assert raised.value.reason == shown and "objstore_b" in raised.value.need


def test_an_unreachable_gcs_store_skips_the_check() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(StoreUnreadable, match="could not connect"):
        gcs(refused).get(KEY)


@pytest.mark.parametrize("make", [s3, gcs], ids=["objstore_a", "objstore_b"])
def test_cleanup_skips_keys_read_back_as_absent_or_never_sent(make: Callable[[Handler], S3Store | GcsStore]) -> None:
    """A refusal case's key that the store said it does not hold, or options whose path sends the target elsewhere,
    need no delete at the end of the run: only what may exist is deleted."""
    seen: list[tuple[str, str]] = []

    def store(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path))
        return httpx.Response(404 if request.method == "GET" else 204)

    one = make(store)
    one.store_options("kept.jpg")
    one.store_options("refused.jpg")
    one.store_options("unused.jpg", record=False, path=12345)
    assert one.get("refused.jpg") is None
    seen.clear()
    one.cleanup()
    assert [(method, path.rsplit("/", 1)[-1]) for method, path in seen] == [("DELETE", "kept.jpg")]


class _Api:
    def __init__(self, answer: httpx.Response) -> None:
        self.answer = answer

    def command(self, location: str, body: dict[str, object]) -> httpx.Response:
        return self.answer


def _unreadable_store() -> S3Store:
    def store(request: httpx.Request) -> httpx.Response:
        return s3_error(403, "AccessDenied")

    return s3(store)


def test_a_refusal_case_the_harness_cannot_read_back_is_not_tried_but_a_wrong_answer_still_fails() -> None:
    """IMG-STO-03: when the store cannot be read back, a right answer (4xx JSON) leaves the case undecided (the check
    marks it not tried), while a wrong answer is the target's failure whatever the store says."""
    from conformance.suites.compression.test_store import _refusal_problems

    refused = httpx.Response(400, json={"error": "BadRequest", "message": "no"})
    with pytest.raises(StoreUnreadable):
        _refusal_problems(_Api(refused), "https://t/o/1", "no region", _unreadable_store(), "k.jpg", {}, "base")  # type: ignore[arg-type]
    accepted = httpx.Response(200, json={})
    problems = _refusal_problems(_Api(accepted), "https://t/o/1", "no region", _unreadable_store(), "k.jpg", {}, "base")  # type: ignore[arg-type]
    assert problems[0].startswith("store with no region: expected a 4xx JSON error, got 200")
    assert problems[1] == "(whether it stored bucket-a/k.jpg is unknown: 403 AccessDenied)"
