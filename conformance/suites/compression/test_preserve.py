"""Metadata: kept when asked (EXIF for JPEG, XMP for PNG), gone otherwise, and what keeping costs (IMG-PRS-*)."""

from __future__ import annotations

from conformance import fail, observe, rule
from conformance.suites.compression import images
from conformance.suites.compression.client import Api, decoded_or_fail


def _preserved(api: Api, name: str, keep: list[str]) -> bytes:
    response = api.command(api.upload(name).location, {"preserve": keep})
    decoded_or_fail(response, f"preserve {keep} of {name}")
    return response.content


def _same_gps(got: tuple[tuple[float, ...], ...], want: tuple[tuple[float, ...], ...]) -> bool:
    if len(got) != len(want) or any(len(g) != len(w) for g, w in zip(got, want, strict=True)):
        return False
    pairs = [(a, b) for g, w in zip(got, want, strict=True) for a, b in zip(g, w, strict=True)]
    return all(abs(a - b) <= 0.01 for a, b in pairs)


@rule("IMG-PRS-01")
def test_kept_when_asked(api: Api) -> None:
    problems = []
    found = images.find_metadata(_preserved(api, "meta.jpg", ["copyright", "creation", "location"]))
    if not found.copyright:
        problems.append("JPEG: EXIF Copyright not kept with preserve copyright")
    if not found.created:
        problems.append("JPEG: EXIF DateTimeOriginal not kept with preserve creation")
    expected_gps = (images.GPS_LAT, images.GPS_LON)
    if found.gps_value is None:
        problems.append("JPEG: GPS latitude/longitude not kept with preserve location")
    elif not _same_gps(found.gps_value, expected_gps):
        problems.append(f"JPEG: GPS changed to {found.gps_value}")
    found = images.find_metadata(_preserved(api, "meta.png", ["copyright", "creation"]))
    if not found.copyright:
        problems.append("PNG: XMP rights not kept with preserve copyright")
    if not found.created:
        problems.append("PNG: XMP create date not kept with preserve creation")
    if problems:
        fail("; ".join(problems))


@rule("IMG-PRS-02")
def test_gone_otherwise(api: Api) -> None:
    problems = []
    for name in ("meta.jpg", "meta.png"):
        response = api.get(api.upload(name).location)
        decoded_or_fail(response, f"download of {name}")
        found = images.find_metadata(response.content)
        for field, present in (("GPS", found.gps), ("copyright", found.copyright), ("creation time", found.created)):
            if present:
                problems.append(f"{name}: {field} kept without preserve")
    found = images.find_metadata(_preserved(api, "meta.jpg", ["copyright"]))
    if found.gps or found.created:
        problems.append("meta.jpg with preserve [copyright] also kept GPS or the creation time")
    # Metadata absent from the upload is never written.
    for name, keep in (("photo.jpg", ["copyright", "creation", "location"]), ("photo.png", ["copyright", "creation"])):
        written = images.metadata_fields(_preserved(api, name, keep))
        if written:
            problems.append(f"{name} (no metadata) with preserve {keep} gained {', '.join(sorted(written))}")
    if problems:
        fail("; ".join(problems))


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
