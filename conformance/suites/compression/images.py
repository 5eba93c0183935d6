"""Test images, generated (nothing is downloaded); the decoders the checks trust instead of headers are the
judges' (:mod:`conformance.judges.images`, re-exported here).

Every image is deterministic. Metadata values are distinctive strings so that "gone" can be checked by searching
the output bytes as well as by parsing EXIF/XMP.
"""

from __future__ import annotations

import io
import math
import random
from functools import cache

from PIL import Image, ImageChops, ImageDraw, PngImagePlugin
from PIL.TiffImagePlugin import IFDRational

from conformance.judges.images import COPYRIGHT as COPYRIGHT
from conformance.judges.images import CREATED_EXIF as CREATED_EXIF
from conformance.judges.images import CREATED_ISO as CREATED_ISO
from conformance.judges.images import EXIF_COPYRIGHT as EXIF_COPYRIGHT
from conformance.judges.images import EXIF_DATETIME_ORIGINAL as EXIF_DATETIME_ORIGINAL
from conformance.judges.images import EXIF_IFD as EXIF_IFD
from conformance.judges.images import GPS_IFD as GPS_IFD
from conformance.judges.images import JPEG as JPEG
from conformance.judges.images import PNG as PNG
from conformance.judges.images import Decoded as Decoded
from conformance.judges.images import FoundMetadata as FoundMetadata
from conformance.judges.images import decode as decode
from conformance.judges.images import find_metadata as find_metadata
from conformance.judges.images import metadata_fields as metadata_fields
from conformance.judges.images import sniff as sniff
from conformance.judges.images import truncated as truncated
from conformance.judges.images import xmp_text as xmp_text

# The PNGs are smaller than the JPEGs: no check of theirs needs more pixels (uploads, downloads, metadata, a 40x30
# cover), and a sandbox's palette quantization costs it CPU by the pixel, on every upload of them.
PHOTO_PNG_SIZE = (96, 64)
META_PNG_SIZE = (80, 50)

GPS_LAT = (52.0, 22.0, 12.34)
GPS_LON = (4.0, 53.0, 5.0)


# Salient subject for cover/thumb: a saturated red disc, off-centre on a flat white background.
SUBJECT_SIZE = (400, 200)
SUBJECT_CENTRE = (70, 100)
SUBJECT_RADIUS = 45


def _save(image: Image.Image, mime: str, **kwargs: object) -> bytes:
    out = io.BytesIO()
    if mime == JPEG:
        image.convert("RGB").save(out, "JPEG", quality=95, **kwargs)
    else:
        image.save(out, "PNG", **kwargs)
    return out.getvalue()


@cache
def photo_pixels(width: int = 192, height: int = 128) -> Image.Image:
    """Photo-like content: smooth gradients, soft shapes and sensor-like noise. Each pixel is
    ``(120 + 80 sin(x/23) cos(y/31), 90 + 100 y/h + 20 sin((x+y)/17), 140 + 60 cos(x/41))`` plus one noise draw in
    [-9, 9] (seeded; row by row), modulo 256: the per-row and per-column terms are computed once, and the pixels are
    written in one go (the same bytes as a per-pixel loop, at a third of its CPU: it runs on every run)."""
    rnd = random.Random(7)
    sin_x = [math.sin(x / 23.0) for x in range(width)]
    sin_xy = [math.sin(s / 17.0) for s in range(width + height)]
    blue = [140 + 60 * math.cos(x / 41.0) for x in range(width)]
    noise = rnd.randrange  # randint(-9, 9) is randrange(-9, 10): the same draws
    data = bytearray()
    for y in range(height):
        cos_y = math.cos(y / 31.0)
        green = 90 + 100 * y / height
        for x in range(width):
            n = noise(-9, 10)
            r = 120 + 80 * sin_x[x] * cos_y
            g = green + 20 * sin_xy[x + y]
            data += bytes((int(r + n) % 256, int(g + n) % 256, int(blue[x] + n) % 256))
    image = Image.frombytes("RGB", (width, height), bytes(data))
    draw = ImageDraw.Draw(image)
    draw.ellipse((30, 20, 110, 100), fill=(200, 170, 60))
    draw.rectangle((140, 60, 220, 140), fill=(40, 90, 160))
    return image


@cache
def flat_pixels(width: int = 200, height: int = 120) -> Image.Image:
    """Screenshot-like content: flat colour areas and thin lines."""
    image = Image.new("RGB", (width, height), (245, 245, 245))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 18), fill=(30, 60, 120))
    for i, y in enumerate(range(30, height - 10, 12)):
        draw.rectangle((12, y, 12 + 40 + (i * 37) % 120, y + 5), fill=(90, 90, 90))
    draw.rectangle((150, 40, 190, 100), fill=(220, 120, 40))
    return image


@cache
def subject_pixels() -> Image.Image:
    rnd = random.Random(11)
    image = Image.new("RGB", SUBJECT_SIZE, (255, 255, 255))
    pixels = image.load()
    assert pixels is not None
    cx, cy = SUBJECT_CENTRE
    for y in range(cy - SUBJECT_RADIUS, cy + SUBJECT_RADIUS + 1):
        for x in range(cx - SUBJECT_RADIUS, cx + SUBJECT_RADIUS + 1):
            if (x - cx) ** 2 + (y - cy) ** 2 <= SUBJECT_RADIUS**2:
                # textured but always clearly red: salient for any attention model
                pixels[x, y] = (rnd.randint(190, 255), rnd.randint(0, 40), rnd.randint(0, 40))
    return image


def _exif(copyright_: bool = True, created: bool = True, gps: bool = True) -> bytes:
    exif = Image.Exif()
    if copyright_:
        exif[EXIF_COPYRIGHT] = COPYRIGHT
    if created:
        exif.get_ifd(EXIF_IFD)[EXIF_DATETIME_ORIGINAL] = CREATED_EXIF
    if gps:
        ifd = exif.get_ifd(GPS_IFD)
        ifd[1] = "N"
        ifd[2] = tuple(IFDRational(int(v * 100), 100) for v in GPS_LAT)
        ifd[3] = "E"
        ifd[4] = tuple(IFDRational(int(v * 100), 100) for v in GPS_LON)
    return bytes(exif.tobytes())


def _xmp() -> str:
    return (
        "<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>"
        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
        "<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/'"
        " xmlns:xmp='http://ns.adobe.com/xap/1.0/' xmlns:exif='http://ns.adobe.com/exif/1.0/'>"
        f"<dc:rights><rdf:Alt><rdf:li xml:lang='x-default'>{COPYRIGHT}</rdf:li></rdf:Alt></dc:rights>"
        f"<xmp:CreateDate>{CREATED_ISO}</xmp:CreateDate>"
        "<exif:GPSLatitude>52,22.2057N</exif:GPSLatitude><exif:GPSLongitude>4,53.0833E</exif:GPSLongitude>"
        "</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end='w'?>"
    )


@cache
def image(name: str) -> bytes:
    """The named test image. Names: photo.jpg, photo.png, flat.png, flat.jpg, meta.jpg, meta.png, subject.png,
    truncated.jpg, truncated.png, fake.png, text.txt, photo.gif."""
    if name == "photo.jpg":
        return _save(photo_pixels(), JPEG)
    if name == "photo.png":
        return _save(photo_pixels(*PHOTO_PNG_SIZE), PNG)
    if name == "flat.png":
        return _save(flat_pixels(), PNG)
    if name == "flat.jpg":
        return _save(flat_pixels(), JPEG)
    if name == "meta.jpg":
        return _save(photo_pixels(160, 100), JPEG, exif=_exif())
    if name == "meta.png":
        info = PngImagePlugin.PngInfo()
        info.add_itxt("XML:com.adobe.xmp", _xmp())
        return _save(photo_pixels(*META_PNG_SIZE), PNG, pnginfo=info)
    if name == "subject.png":
        return _save(subject_pixels(), PNG)
    if name == "truncated.jpg":
        data = image("photo.jpg")
        return data[: len(data) // 2]
    if name == "truncated.png":
        data = image("photo.png")
        return data[: len(data) // 2]
    if name == "photo.gif":  # an image, but neither JPEG nor PNG
        out = io.BytesIO()
        photo_pixels().convert("P").save(out, "GIF")
        return out.getvalue()
    if name == "fake.png":  # a PNG signature in front of bytes that are no image
        return b"\x89PNG\r\n\x1a\n" + b"this is not an image, only a signature " * 20
    if name == "text.txt":
        return b"Hello, I am plain text pretending to be an upload.\n" * 10
    raise KeyError(name)


def red_fraction(img: Image.Image) -> tuple[float, int]:
    """How much of the red disc survives in ``img``: red pixels (R > 140, G < 110, B < 110) over the area of a disc
    whose diameter is the larger side of their bounding box (a crop shortens one side, not the other). Returns
    (fraction, red pixels). Pillow's point and multiply make the mask, its histogram and bounding box do the rest."""
    red, green, blue = img.convert("RGB").split()
    mask = ImageChops.multiply(
        ImageChops.multiply(red.point(lambda v: 255 if v > 140 else 0), green.point(lambda v: 255 if v < 110 else 0)),
        blue.point(lambda v: 255 if v < 110 else 0),
    )
    count = mask.histogram()[255]
    box = mask.getbbox()
    if not count or box is None:
        return 0.0, 0
    diameter = max(box[2] - box[0], box[3] - box[1])
    return count / (math.pi / 4 * diameter * diameter), count
