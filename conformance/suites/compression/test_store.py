"""Storing outputs in object stores, read back by the harness (IMG-STO-*)."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import unquote, urlsplit

from conformance import expect, fail, needs, observe, rule
from conformance.judges.compression import count_of
from conformance.suites._cases import Attack, AttackRun, Untried, attack_table
from conformance.suites.compression import images
from conformance.suites.compression.client import (
    STORE_NEEDS,
    Api,
    GcsStore,
    S3Store,
    StoreUnreadable,
    expect_json_error,
)

CACHE_CONTROL = "public, max-age=31536000"
_NEED_A = STORE_NEEDS["objstore_a"]
_NEED_B = STORE_NEEDS["objstore_b"]


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
    observe(f"read back {store.bucket}/{key}: {len(stored.body)} bytes (same as the output)")
    # Reported, not judged: the contract states no stored type, and calls the headers option experimental.
    type_note = "as the image" if stored.content_type == expected.mime else f"the image is {expected.mime}"
    observe(f"stored Content-Type {stored.content_type!r} ({type_note})")
    cache_note = "as asked" if stored.cache_control == CACHE_CONTROL else f"asked {CACHE_CONTROL!r}"
    observe(f"stored Cache-Control {stored.cache_control!r} ({cache_note}; the headers option is experimental)")


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


STO03 = "IMG-STO-03"
STORE_A = "contract C, Store options (objstore_a)"
STORE_B = "contract C, Store options (objstore_b)"
PATH_FORMAT = f"{STO03} (malformed path); {STORE_A} (path: <bucket>/<path>/<filename>)"
# case -> (source, named by the rule's own text)
STO03_CASES: dict[str, tuple[str, bool]] = {
    "no service": (f"{STO03} (missing required field); {STORE_A} (service: required)", False),
    "an unknown service": (f"{STORE_A} (service: objstore_a); {STORE_B} (service: objstore_b)", False),
    "no access key id": (f"{STO03} (missing required field); {STORE_A} (objstore_a_access_key_id: required)", False),
    "no secret key": (f"{STO03} (missing required field); {STORE_A} (objstore_a_secret_access_key)", True),
    "no region": (f"{STO03} (missing required field); {STORE_A} (region: required)", False),
    "no path": (f"{STO03} (missing required field); {STORE_A} (path: required)", True),
    "the access key id as a number": (f"{STORE_A} (objstore_a_access_key_id: string)", False),
    "the path as a number": (f"{STORE_A} (path: string)", False),
    "store as a string": (f"{STO03}; contract C, Store options (a JSON object)", False),
    "a path without object name": (PATH_FORMAT, True),
    "a path ending in a slash": (PATH_FORMAT, False),
    "a path with an empty segment": (PATH_FORMAT, False),
    "a path starting with a slash (no bucket)": (PATH_FORMAT, False),
    "a wrong secret key": (f"{STO03} (rejected credentials)", True),
    "an unknown access key id": (f"{STO03} (rejected credentials)", False),
    "a wrong objstore_b access token": (f"{STO03} (rejected credentials); {STORE_B}", False),
    "objstore_b without access token": (
        f"{STO03} (missing required field); {STORE_B} (objstore_b_access_token)",
        False,
    ),
    "objstore_b without path": (f"{STO03} (missing required field); {STORE_B} (path: required)", False),
}
STO03_TABLE = attack_table("IMG-STO-03", *(Attack(c, src, named=n) for c, (src, n) in STO03_CASES.items()))


def _store_cases(
    objstore_a: S3Store, objstore_b: GcsStore | None, base: str
) -> dict[str, tuple[S3Store | GcsStore, str | None, dict[str, Any]]]:
    """case -> (the store, the key an accepted request would write, or None; overrides of valid options)."""
    bucket = objstore_a.bucket
    a: dict[str, tuple[S3Store | GcsStore, str | None, dict[str, Any]]] = {
        "no service": (objstore_a, f"{base}/s.jpg", {"service": None}),
        "an unknown service": (objstore_a, f"{base}/u.jpg", {"service": "objstore_c"}),
        "no access key id": (objstore_a, f"{base}/k.jpg", {"objstore_a_access_key_id": None}),
        "no secret key": (objstore_a, f"{base}/a.jpg", {"objstore_a_secret_access_key": None}),
        "no region": (objstore_a, f"{base}/b.jpg", {"region": None}),
        "no path": (objstore_a, None, {"path": None}),
        "the access key id as a number": (objstore_a, f"{base}/n.jpg", {"objstore_a_access_key_id": 12345}),
        "the path as a number": (objstore_a, None, {"path": 12345}),
        "a path without object name": (objstore_a, None, {"path": bucket}),
        "a path ending in a slash": (objstore_a, f"{base}/dir/", {"path": f"{bucket}/{base}/dir/"}),
        "a path with an empty segment": (objstore_a, f"{base}//c.jpg", {"path": f"{bucket}/{base}//c.jpg"}),
        "a path starting with a slash (no bucket)": (objstore_a, f"{base}/l.jpg", {"path": f"/{bucket}/{base}/l.jpg"}),
        "a wrong secret key": (objstore_a, f"{base}/d.jpg", {"objstore_a_secret_access_key": "wrong" * 8}),
        "an unknown access key id": (objstore_a, f"{base}/i.jpg", {"objstore_a_access_key_id": "AKIACONFORMANCE0000"}),
    }
    if objstore_b is not None:
        a["a wrong objstore_b access token"] = (objstore_b, f"{base}/e.jpg", {"objstore_b_access_token": "ya29.wrong"})
        a["objstore_b without access token"] = (objstore_b, f"{base}/f.jpg", {"objstore_b_access_token": None})
        a["objstore_b without path"] = (objstore_b, None, {"path": None})
    return a


def _refusal_problems(
    api: Api, location: str, case: str, store: S3Store | GcsStore, key: str | None, overrides: dict[str, Any], base: str
) -> list[str]:
    """What the target got wrong in one refusal case: not a 4xx JSON error, or an object left in the store. A store
    the harness cannot read back raises StoreUnreadable only when the answer itself was right (a wrong answer is
    the target's failure whatever the store says)."""
    options = store.store_options(key or f"{base}/unused.jpg", record=key is not None, **overrides)
    response = api.command(location, {"store": options})
    problems = []
    try:
        expect_json_error(response, f"store with {case}")
    except AssertionError as exc:
        problems.append(str(exc))
    if key is not None:
        try:
            if store.get(key) is not None:
                problems.append(f"store with {case} left an object at {store.bucket}/{key}")
        except StoreUnreadable as exc:
            if not problems:
                raise
            problems.append(f"(whether it stored {store.bucket}/{key} is unknown: {exc.reason})")
    return problems


@rule("IMG-STO-03")
def test_store_refusals(api: Api, objstore_a: S3Store | None, objstore_b: GcsStore | None, run_prefix: str) -> None:
    if objstore_a is None:
        needs(*_NEED_A)
    location = api.upload("photo.jpg").location
    base = f"{run_prefix}/refused-{uuid.uuid4().hex[:8]}"
    run = AttackRun.of("IMG-STO-03")
    if objstore_b is None:
        for case in ("a wrong objstore_b access token", "objstore_b without access token", "objstore_b without path"):
            run.not_tried(case, f"no objstore_b bucket the harness can read ({_NEED_B[1]})")
    with run.attempt("store as a string"):
        expect_json_error(api.command(location, {"store": "objstore_a"}), "store given as a string")
    cases = _store_cases(objstore_a, objstore_b, base)

    def refused(case: str) -> str | None:
        """The case's problems; each case writes (if wrongly accepted) under a key of its own: they go at once."""
        store, key, overrides = cases[case]
        try:
            problems = _refusal_problems(api, location, case, store, key, overrides, base)
        except StoreUnreadable as exc:  # the target's answer was right; whether it stored nothing is unknown
            return Untried(
                f"the harness could not read {store.bucket} back to see that nothing was stored ({exc.reason})"
            )
        return "; ".join(problems) or None

    run.each(cases, refused, limit=api.http.concurrency)
    run.conclude()
