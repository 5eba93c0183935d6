"""Reading images as the compression checks trust them instead of headers: the format by signature, a full decode
with Pillow, and the metadata (copyright, creation, location) an image carries, in EXIF, XMP or anywhere in its bytes.

The metadata values are the distinctive strings the generated test images carry
(:mod:`conformance.suites.compression.images`), so that "gone" can be checked by searching the output bytes as well
as by parsing EXIF/XMP.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from PIL import Image

JPEG = "image/jpeg"
PNG = "image/png"

COPYRIGHT = "(c) Conformance Photographer 7f3a91"
CREATED_EXIF = "2019:07:14 09:26:53"
CREATED_ISO = "2019-07-14T09:26:53"

EXIF_COPYRIGHT = 0x8298
EXIF_IFD = 0x8769
EXIF_DATETIME_ORIGINAL = 0x9003
GPS_IFD = 0x8825


def sniff(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    return None


@dataclass(frozen=True)
class Decoded:
    mime: str
    width: int
    height: int
    image: Image.Image


def decode(data: bytes) -> Decoded | None:
    """Fully decode with Pillow; None when the bytes are not a complete PNG or JPEG."""
    mime = sniff(data)
    if mime is None:
        return None
    try:
        with Image.open(io.BytesIO(data)) as probe:
            probe.verify()
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception:
        return None
    if (image.format, mime) not in (("PNG", PNG), ("JPEG", JPEG)):
        return None
    return Decoded(mime, image.width, image.height, image)


def truncated(data: bytes) -> bool:
    """A PNG or JPEG whose header Pillow reads (format and size) but whose pixels do not all decode: an image cut
    short, as opposed to bytes that only start with a signature."""
    mime = sniff(data)
    if mime is None or decode(data) is not None:
        return False
    try:
        with Image.open(io.BytesIO(data)) as probe:
            return (probe.format, mime) in (("PNG", PNG), ("JPEG", JPEG)) and probe.width > 0 and probe.height > 0
    except Exception:
        return False


# --- metadata as the checks see it ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FoundMetadata:
    copyright: bool
    created: bool
    gps: bool
    gps_value: tuple[tuple[float, ...], tuple[float, ...]] | None
    xmp: str

    @property
    def any(self) -> bool:
        return self.copyright or self.created or self.gps


def xmp_text(image: Image.Image) -> str:
    raw = image.info.get("xmp") or image.info.get("XML:com.adobe.xmp") or ""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def find_metadata(data: bytes) -> FoundMetadata:
    """Copyright / creation / GPS present in EXIF, XMP, or anywhere in the bytes (for "gone" checks)."""
    decoded = decode(data)
    exif_copyright = exif_created = False
    gps_value = None
    xmp = ""
    if decoded is not None:
        exif = decoded.image.getexif()
        exif_copyright = COPYRIGHT in str(exif.get(EXIF_COPYRIGHT, ""))
        exif_created = CREATED_EXIF in str(exif.get_ifd(EXIF_IFD).get(EXIF_DATETIME_ORIGINAL, ""))
        gps = exif.get_ifd(GPS_IFD)
        if 2 in gps and 4 in gps:
            gps_value = (tuple(float(v) for v in gps[2]), tuple(float(v) for v in gps[4]))
        xmp = xmp_text(decoded.image)
    text = data.decode("latin-1")
    copyright_ = exif_copyright or COPYRIGHT in xmp or COPYRIGHT in text
    created = exif_created or CREATED_ISO in xmp or CREATED_EXIF in text or CREATED_ISO in text
    gps_found = gps_value is not None or bool(re.search(r"GPSLatitude|GPSLongitude", xmp + text))
    return FoundMetadata(copyright_, created, gps_found, gps_value, xmp)


def metadata_fields(data: bytes) -> set[str]:
    """Which copyright / creation / GPS fields the image carries, whatever their values."""
    decoded = decode(data)
    if decoded is None:
        return set()
    exif = decoded.image.getexif()
    fields = set()
    if EXIF_COPYRIGHT in exif:
        fields.add("EXIF Copyright")
    if EXIF_DATETIME_ORIGINAL in exif.get_ifd(EXIF_IFD):
        fields.add("EXIF DateTimeOriginal")
    if {2, 4} & set(exif.get_ifd(GPS_IFD)):
        fields.add("EXIF GPS")
    xmp = xmp_text(decoded.image)
    for name in ("dc:rights", "xmpRights:", "xmp:CreateDate", "photoshop:DateCreated", "exif:GPSLatitude"):
        if name in xmp:
            fields.add(f"XMP {name.rstrip(':')}")
    return fields
