"""Metadata: kept when asked (EXIF for JPEG, XMP for PNG), gone otherwise, and what keeping costs (IMG-PRS-*)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from conformance import fail, observe, rule
from conformance.host import fanout
from conformance.judges.compression import gone_problems, kept_problems
from conformance.suites.compression import images
from conformance.suites.compression.client import Api, decoded_or_fail


def _preserved(api: Api, name: str, keep: list[str]) -> bytes:
    response = api.command(api.upload(name).location, {"preserve": keep})
    decoded_or_fail(response, f"preserve {keep} of {name}")
    return response.content


@rule("IMG-PRS-01")
def test_kept_when_asked(api: Api) -> None:
    asked = [("meta.jpg", ["copyright", "creation", "location"]), ("meta.png", ["copyright", "creation"])]
    outputs = fanout.each(asked, lambda pair: _preserved(api, *pair), limit=api.http.concurrency)
    problems = [
        f"{name}: {p}"
        for (name, keep), output in zip(asked, outputs, strict=True)
        for p in kept_problems(images.image(name), output, keep)
    ]
    if problems:
        fail("; ".join(problems))
    observe("kept: meta.jpg copyright, creation, location; meta.png copyright, creation")


@rule("IMG-PRS-02")
def test_gone_otherwise(api: Api) -> None:

    def download(name: str) -> bytes:
        response = api.get(api.upload(name).location)
        decoded_or_fail(response, f"download of {name}")
        return response.content

    # (what, the image, what preserve named, its output): each output fetched independently of the others.
    cases: list[tuple[str, str, list[str], Callable[[], bytes]]] = [
        *((name, name, [], functools.partial(download, name)) for name in ("meta.jpg", "meta.png")),
        (
            "meta.jpg with preserve [copyright]",
            "meta.jpg",
            ["copyright"],
            functools.partial(_preserved, api, "meta.jpg", ["copyright"]),
        ),
        # Metadata absent from the upload is never written.
        *(
            (f"{name} (no metadata) with preserve {keep}", name, keep, functools.partial(_preserved, api, name, keep))
            for name, keep in (
                ("photo.jpg", ["copyright", "creation", "location"]),
                ("photo.png", ["copyright", "creation"]),
            )
        ),
    ]
    outputs = fanout.each(cases, lambda case: case[3](), limit=api.http.concurrency)
    problems = [
        f"{what}: {p}"
        for (what, name, keep, _), output in zip(cases, outputs, strict=True)
        for p in gone_problems(images.image(name), output, keep)
    ]
    if problems:
        fail("; ".join(problems))
    observe(
        "gone without preserve (meta.jpg, meta.png), gone beyond what preserve named (meta.jpg with copyright), "
        "never written when absent from the upload (photo.jpg, photo.png)"
    )


@rule("IMG-PRS-03")
def test_cost_of_preserving(api: Api) -> None:
    """Measured on JPEG, where the stated sizes apply (EXIF); PNG's XMP packet has a larger fixed cost."""
    limits = {
        "copyright": 90 + len(images.COPYRIGHT),  # "up to 90 bytes plus the data length"
        "creation": 2 * 70,  # "about 70 bytes"
        "location": 2 * 130,  # "about 130 bytes"
    }
    sizes = fanout.each(
        [None, *limits],
        lambda value: len(
            api.get(api.upload("meta.jpg").location).content if value is None else _preserved(api, "meta.jpg", [value])
        ),
        limit=api.http.concurrency,
    )
    base = sizes[0]
    problems = []
    for (value, limit), size in zip(limits.items(), sizes[1:], strict=True):
        added = size - base
        observe(f"preserve {value}: +{added} bytes (allowed {limit})")
        if added > limit:
            problems.append(f"preserve {value} added {added} bytes (expected at most {limit})")
    if problems:
        fail("; ".join(problems))
