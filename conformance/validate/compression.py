"""Offline judging of compression outputs: an output image against its upload and the ``preserve`` asked
(IMG-SHRINK-04, IMG-PRS-01, IMG-PRS-02), with the decoders and metadata readers the live checks trust."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.suites.compression import images
from conformance.validate._core import Verdict, judged, skipped

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
    """What makes bytes an upload a server must refuse (IMG-SHRINK-03): empty, not PNG/JPEG, or not decodable."""
    if not data:
        return ["the body is empty"]
    if images.sniff(data) is None:
        return ["not a PNG or JPEG (no signature)"]
    if images.decode(data) is None:
        return [f"a {images.sniff(data)} signature, but the image does not decode (truncated or fake)"]
    return []


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
    if not preserve and len(output) > len(upload):
        shrink.append(f"the output ({len(output)} bytes) is larger than the upload ({len(upload)} bytes)")
    kept: list[str] = []
    for name in preserve:
        if name in source.metadata and name not in result.metadata:
            if name == "location" and source.mime != images.JPEG:
                continue  # location is kept for JPEG only
            kept.append(f"{name} not kept with preserve {name}")
    gone = [
        f"{name} kept without preserve {name}"
        for name in source.metadata
        if name in result.metadata and name not in preserve
    ]
    gone += [f"{name} written although the upload had none" for name in result.metadata if name not in source.metadata]
    if result.mime == images.PNG and "location" in result.metadata and "location" in preserve:
        gone.append("location kept in a PNG (GPS is kept for JPEG only)")
    return {"IMG-SHRINK-04": shrink, "IMG-PRS-01": kept, "IMG-PRS-02": sorted(set(gone))}


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
    found = output_problems(files[document["input"]], files[document["output"]], preserve)
    return [judged(rule, problems) for rule, problems in found.items()]


def image(data: Any) -> list[Verdict]:
    """One file as an upload: IMG-SHRINK-03 says which bytes a server must refuse. ``failed`` here means the
    file is one a conforming server refuses, not that the file breaks a rule by itself."""
    if not isinstance(data, bytes):
        return [judged("IMG-SHRINK-03", ["an image is bytes"])]
    return [judged("IMG-SHRINK-03", upload_problems(data))]
