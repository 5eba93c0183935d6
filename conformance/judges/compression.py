"""Judging compression outputs: an upload (IMG-SHRINK-03), an output image against its upload and the ``preserve``
asked (IMG-SHRINK-04, IMG-PRS-01, IMG-PRS-02), and the headers of an answer carrying an image, with the decoders and
metadata readers the live checks trust (:mod:`conformance.judges.images`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from conformance.judges._core import Verdict, judged, noted, skipped

if TYPE_CHECKING:
    from conformance.judges import images

PRESERVABLE = ("copyright", "creation", "location")


@dataclass(frozen=True)
class ImageFacts:
    """What a file is, as the checks see it."""

    mime: str | None
    decodes: bool
    width: int | None
    height: int | None
    metadata: tuple[str, ...]  # copyright, creation, location found (EXIF, XMP or in the bytes)

    def to_json(self) -> dict[str, Any]:
        return {
            "mime": self.mime,
            "decodes": self.decodes,
            "width": self.width,
            "height": self.height,
            "metadata": list(self.metadata),
        }


def facts(data: bytes) -> ImageFacts:
    from conformance.judges import images  # Pillow: loaded when an image is judged

    decoded = images.decode(data)
    found = images.find_metadata(data)
    present = tuple(
        name for name, yes in zip(PRESERVABLE, (found.copyright, found.created, found.gps), strict=True) if yes
    )
    return ImageFacts(
        images.sniff(data),
        decoded is not None,
        decoded.width if decoded else None,
        decoded.height if decoded else None,
        present,
    )


def upload_problems(data: bytes) -> list[str]:
    """What makes bytes an upload a server must refuse (IMG-SHRINK-03): empty, not PNG/JPEG, or not an image behind
    its signature. A truncated image is none of these: a server may refuse it or return a valid output."""
    from conformance.judges import images  # Pillow: loaded when an image is judged

    if not data:
        return ["the body is empty"]
    if images.sniff(data) is None:
        return ["not a PNG or JPEG (no signature)"]
    if images.decode(data) is None and not images.truncated(data):
        return [f"a {images.sniff(data)} signature, but no image behind it"]
    return []


TRUNCATED_NOTE = "a truncated image: a server may refuse it (4xx JSON error) or return a valid output (reported)"
LARGER_NOTE = "warning: the output ({output} bytes) is larger than the upload ({upload} bytes)"


# metadata_fields() names, by what ``preserve`` calls them
FIELD_KINDS = {
    "EXIF Copyright": "copyright",
    "XMP dc:rights": "copyright",
    "XMP xmpRights": "copyright",
    "EXIF DateTimeOriginal": "creation",
    "XMP xmp:CreateDate": "creation",
    "XMP photoshop:DateCreated": "creation",
    "EXIF GPS": "location",
    "XMP exif:GPSLatitude": "location",
}


def same_gps(got: tuple[tuple[float, ...], ...], want: tuple[tuple[float, ...], ...]) -> bool:
    """GPS degrees/minutes/seconds equal within 0.01 (rationals are re-encoded)."""
    if len(got) != len(want) or any(len(g) != len(w) for g, w in zip(got, want, strict=True)):
        return False
    pairs = [(a, b) for g, w in zip(got, want, strict=True) for a, b in zip(g, w, strict=True)]
    return all(abs(a - b) <= 0.01 for a, b in pairs)


def kept_problems(upload: bytes, output: bytes, preserve: Sequence[str]) -> list[str]:
    """IMG-PRS-01: each asked-for item the upload has is in the output (location: EXIF GPS, JPEG only, same
    coordinates)."""
    from conformance.judges import images  # Pillow: loaded when an image is judged

    source, result = facts(upload), facts(output)
    problems = []
    for name in preserve:
        if name not in source.metadata:
            continue
        if name == "location":
            if source.mime != images.JPEG:
                continue  # location is kept for JPEG only
            want, got = images.find_metadata(upload).gps_value, images.find_metadata(output).gps_value
            if got is None:
                problems.append("GPS latitude/longitude not kept with preserve location")
            elif want is not None and not same_gps(got, want):
                problems.append(f"GPS changed to {got}")
        elif name not in result.metadata:
            problems.append(f"{name} not kept with preserve {name}")
    return problems


def gone_problems(upload: bytes, output: bytes, preserve: Sequence[str]) -> list[str]:
    """IMG-PRS-02: what was not asked for is gone from the output, and metadata absent from the upload is never
    written (any such field, whatever its value)."""
    from conformance.judges import images  # Pillow: loaded when an image is judged

    source, result = facts(upload), facts(output)
    problems = [
        f"{name} kept without preserve" for name in source.metadata if name in result.metadata and name not in preserve
    ]
    fields = images.metadata_fields(output)
    written = {FIELD_KINDS.get(f, f) for f in fields} | set(result.metadata)
    for name in sorted(written - set(source.metadata)):
        shown = ", ".join(sorted(f for f in fields if FIELD_KINDS.get(f, f) == name)) or name
        problems.append(f"{name} written although the upload had none ({shown})")
    return problems


def output_problems(upload: bytes, output: bytes, preserve: Sequence[str]) -> dict[str, list[str]]:
    """IMG-SHRINK-04 (plain output), IMG-PRS-01 (kept when asked), IMG-PRS-02 (gone otherwise, never invented)."""
    source, result = facts(upload), facts(output)
    shrink: list[str] = []
    if not result.decodes:
        shrink.append("the output does not decode")
    elif (result.mime, result.width, result.height) != (source.mime, source.width, source.height):
        shrink.append(
            f"the output is {result.mime} {result.width}x{result.height}, "
            f"the upload {source.mime} {source.width}x{source.height}"
        )
    return {
        "IMG-SHRINK-04": shrink,
        "IMG-PRS-01": kept_problems(upload, output, preserve),
        "IMG-PRS-02": gone_problems(upload, output, preserve),
    }


def image_output(document: Any, *, files: dict[str, bytes] | None = None) -> list[Verdict]:
    """A manifest ``{"input": FILE, "output": FILE, "preserve": [...]}``; ``files`` maps its names to bytes (the
    CLI reads them beside the manifest)."""
    files = files or {}
    if not isinstance(document, dict) or not {"input", "output"} <= document.keys():
        bad = ['an image-output manifest is {"input": FILE, "output": FILE, "preserve": [...]}']
        return [judged(r, bad) for r in ("IMG-SHRINK-04", "IMG-PRS-01", "IMG-PRS-02")]
    preserve = [str(p) for p in document.get("preserve") or []]
    missing = [str(document[k]) for k in ("input", "output") if document[k] not in files]
    if missing:
        return [skipped(r, f"needs the files {missing}") for r in ("IMG-SHRINK-04", "IMG-PRS-01", "IMG-PRS-02")]
    upload, output = files[document["input"]], files[document["output"]]
    found = output_problems(upload, output, preserve)
    # An output larger than its upload passes IMG-SHRINK-04 and is reported as a warning.
    larger = LARGER_NOTE.format(output=len(output), upload=len(upload)) if len(output) > len(upload) else ""
    return [
        noted(judged(rule, problems), larger if rule == "IMG-SHRINK-04" and not preserve else "")
        for rule, problems in found.items()
    ]


def image(data: Any) -> list[Verdict]:
    """One file as an upload: IMG-SHRINK-03 says which bytes a server must refuse. ``failed`` here means the
    file is one a conforming server refuses, not that the file breaks a rule by itself."""
    if not isinstance(data, bytes):
        return [judged("IMG-SHRINK-03", ["an image is bytes"])]
    from conformance.judges import images  # Pillow: loaded when an image is judged

    verdict = judged("IMG-SHRINK-03", upload_problems(data))
    return [noted(verdict, TRUNCATED_NOTE if images.truncated(data) else "")]


# ---------------------------------------------------------------------------------------- image answers


def count_of(response: httpx.Response) -> int | None:
    """The ``Compression-Count`` header as an integer, or None when it is absent or not one."""
    value = response.headers.get("compression-count", "").strip()
    return int(value) if value.isdigit() else None


IMAGE_HEADERS = ("Content-Type", "Content-Length", "Image-Width", "Image-Height", "Compression-Count")


def image_header_problems(response: httpx.Response, decoded: images.Decoded, *, required: bool = True) -> list[str]:
    """What the headers of an answer carrying an image get wrong about it: Content-Type (against the magic bytes),
    Content-Length (against the body), Image-Width/Image-Height (against the decoded size), Compression-Count (an
    integer). ``required=False``: an absent header is no problem (the caller reports it), a present one must agree.
    """
    headers = response.headers
    checks = {
        "Content-Type": (
            headers.get("content-type", "").split(";")[0].strip().lower() == decoded.mime,
            f"the bytes are {decoded.mime}",
        ),
        "Content-Length": (
            headers.get("content-length") == str(len(response.content)),
            f"the body has {len(response.content)} bytes",
        ),
        "Image-Width": (headers.get("image-width") == str(decoded.width), f"the image is {decoded.width} wide"),
        "Image-Height": (headers.get("image-height") == str(decoded.height), f"the image is {decoded.height} high"),
        "Compression-Count": (count_of(response) is not None, "an integer is expected"),
    }
    problems = []
    for name, (agrees, truth) in checks.items():
        if agrees or (not required and name not in headers):
            continue
        shown = repr(headers[name]) if name in headers else "missing"
        problems.append(f"{name} {shown} ({truth})")
    return problems
