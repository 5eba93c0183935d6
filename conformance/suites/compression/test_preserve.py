"""Metadata: kept when asked (EXIF for JPEG, XMP for PNG), gone otherwise, and what keeping costs (IMG-PRS-*)."""

from __future__ import annotations

from conformance import fail, observe, rule
from conformance.judges.compression import gone_problems, kept_problems
from conformance.suites.compression import images
from conformance.suites.compression.client import Api, decoded_or_fail


def _preserved(api: Api, name: str, keep: list[str]) -> bytes:
    response = api.command(api.upload(name).location, {"preserve": keep})
    decoded_or_fail(response, f"preserve {keep} of {name}")
    return response.content


@rule("IMG-PRS-01")
def test_kept_when_asked(api: Api) -> None:
    problems = []
    for name, keep in (("meta.jpg", ["copyright", "creation", "location"]), ("meta.png", ["copyright", "creation"])):
        output = _preserved(api, name, keep)
        problems += [f"{name}: {p}" for p in kept_problems(images.image(name), output, keep)]
    if problems:
        fail("; ".join(problems))
    observe("kept: meta.jpg copyright, creation, location; meta.png copyright, creation")


@rule("IMG-PRS-02")
def test_gone_otherwise(api: Api) -> None:
    problems = []
    for name in ("meta.jpg", "meta.png"):
        response = api.get(api.upload(name).location)
        decoded_or_fail(response, f"download of {name}")
        problems += [f"{name}: {p}" for p in gone_problems(images.image(name), response.content, [])]
    output = _preserved(api, "meta.jpg", ["copyright"])
    problems += [
        f"meta.jpg with preserve [copyright]: {p}"
        for p in gone_problems(images.image("meta.jpg"), output, ["copyright"])
    ]
    # Metadata absent from the upload is never written.
    for name, keep in (("photo.jpg", ["copyright", "creation", "location"]), ("photo.png", ["copyright", "creation"])):
        output = _preserved(api, name, keep)
        problems += [
            f"{name} (no metadata) with preserve {keep}: {p}" for p in gone_problems(images.image(name), output, keep)
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
    base = len(api.get(api.upload("meta.jpg").location).content)
    limits = {
        "copyright": 90 + len(images.COPYRIGHT),  # "up to 90 bytes plus the data length"
        "creation": 2 * 70,  # "about 70 bytes"
        "location": 2 * 130,  # "about 130 bytes"
    }
    problems = []
    for value, limit in limits.items():
        added = len(_preserved(api, "meta.jpg", [value])) - base
        observe(f"preserve {value}: +{added} bytes (allowed {limit})")
        if added > limit:
            problems.append(f"preserve {value} added {added} bytes (expected at most {limit})")
    if problems:
        fail("; ".join(problems))
