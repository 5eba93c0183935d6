"""The libvips engine and the metadata handling, without HTTP."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image, ImageDraw

from conformance.reference.compression import engine, metadata
from conformance.suites.compression import images
from tests.reference.compression.conftest import image_bytes


def _size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as im:
        return im.size


@pytest.mark.parametrize("name", ["photo.jpg", "photo.png", "flat.png", "flat.jpg", "meta.jpg", "subject.png"])
def test_output_keeps_type_and_size_and_is_never_larger(name: str) -> None:
    data = images.image(name)
    out = engine.optimize(data)
    assert engine.sniff(out.data) == engine.sniff(data)
    assert _size(out.data) == _size(data) == (out.width, out.height)
    assert len(out.data) <= len(data)


def test_already_optimal_input_falls_back_to_the_stripped_input() -> None:
    # A tiny, low-quality JPEG with GPS: re-encoding at the engine's quality cannot beat it.
    exif = Image.Exif()
    exif.get_ifd(0x8825).update({1: "N", 2: (52.0, 1.0, 2.0), 3: "E", 4: (4.0, 5.0, 6.0)})
    data = image_bytes("JPEG", (32, 32), quality=5, exif=exif.tobytes())
    out = engine.optimize(data)
    assert len(out.data) <= len(data)
    assert not images.find_metadata(out.data).gps  # the fallback is stripped too


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (engine.Resize("scale", 100, None), (100, 67)),
        (engine.Resize("scale", None, 50), (75, 50)),
        (engine.Resize("fit", 100, 100), (100, 67)),
        (engine.Resize("cover", 100, 100), (100, 100)),
        (engine.Resize("thumb", 90, 30), (90, 30)),
        # never enlarging: capped at the original (thumb keeps the requested aspect)
        (engine.Resize("scale", 600, None), (150, 100)),
        (engine.Resize("fit", 600, 600), (150, 100)),
        (engine.Resize("cover", 600, 50), (150, 50)),
        (engine.Resize("thumb", 600, 600), (100, 100)),
    ],
)
def test_resize_dimensions(spec: engine.Resize, expected: tuple[int, int]) -> None:
    data = image_bytes("JPEG", (150, 100), quality=90)
    out = engine.optimize(data, resize=spec)
    assert (out.width, out.height) == _size(out.data) == expected


def test_thumb_adds_background_around_a_tall_subject() -> None:
    image = Image.new("RGB", (200, 200), (255, 255, 255))
    ImageDraw.Draw(image).rectangle((90, 10, 110, 190), fill=(220, 20, 20))  # tall, thin subject
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    out = engine.optimize(buffer.getvalue(), resize=engine.Resize("thumb", 150, 50))
    assert (out.width, out.height) == (150, 50)
    thumb = Image.open(io.BytesIO(out.data)).convert("RGB")
    fraction, _ = images.red_fraction(thumb)
    pixels = thumb.tobytes()
    red_rows = [y for y in range(50) if any(pixels[(y * 150 + x) * 3 + 1] < 100 for x in range(150))]
    assert red_rows and min(red_rows) > 0 and max(red_rows) < 49  # the whole subject, with background around it
    assert fraction > 0


def test_metadata_is_kept_selectively() -> None:
    data = images.image("meta.jpg")
    everything = images.find_metadata(engine.optimize(data, preserve=frozenset(metadata.PRESERVE_VALUES)).data)
    assert everything.copyright and everything.created and everything.gps_value is not None
    only_copyright = images.find_metadata(engine.optimize(data, preserve=frozenset({"copyright"})).data)
    assert only_copyright.copyright and not only_copyright.created and not only_copyright.gps
    png = images.find_metadata(engine.optimize(images.image("meta.png"), preserve=frozenset({"creation"})).data)
    assert png.created and not png.copyright and not png.gps


@pytest.mark.parametrize(
    ("data", "status", "error"),
    [
        (b"", 400, "InputMissing"),
        (b"GIF89a" + b"\0" * 64, 415, "UnsupportedMediaType"),
        # Named, and made when the test runs: making them draws the photo (costly), which collection need not pay.
        ("truncated.jpg", 400, "DecodeError"),
        ("truncated.png", 400, "DecodeError"),
        ("fake.png", 400, "DecodeError"),
    ],
)
def test_bad_input_is_a_client_error(data: bytes | str, status: int, error: str) -> None:
    if isinstance(data, str):
        data = images.image(data)
    with pytest.raises(engine.ImageError) as caught:
        engine.optimize(data)
    assert (caught.value.status, caught.value.error) == (status, error)


def test_a_decompression_bomb_is_refused_from_its_header() -> None:
    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
    bomb = metadata.PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 1000))
    bomb += chunk(b"IEND", b"")
    with pytest.raises(engine.ImageError) as caught:
        engine.optimize(bomb)
    assert caught.value.status == 400


@pytest.mark.parametrize(
    "data",
    [
        image_bytes("PNG", mode="RGBA"),
        image_bytes("PNG", mode="L"),
        image_bytes("PNG", mode="I;16"),
        image_bytes("JPEG", mode="CMYK"),
        image_bytes("JPEG", mode="L"),
    ],
    ids=["rgba", "grey-png", "16-bit", "cmyk-jpeg", "grey-jpeg"],
)
def test_unusual_pixel_formats_compress(data: bytes) -> None:
    out = engine.optimize(data)
    assert engine.sniff(out.data) == engine.sniff(data)
    assert _size(out.data) == _size(data)


def test_strip_removes_metadata_without_reencoding() -> None:
    data = images.image("meta.jpg")
    stripped = metadata.strip(data, engine.JPEG)
    assert not images.find_metadata(stripped).any
    assert Image.open(io.BytesIO(stripped)).tobytes() == Image.open(io.BytesIO(data)).tobytes()
    png = metadata.strip(images.image("meta.png"), engine.PNG)
    assert not images.find_metadata(png).any


def test_hostile_xmp_is_ignored() -> None:
    meta = metadata.Metadata()
    metadata._parse_xmp('<!DOCTYPE x [<!ENTITY a "aaaa">]><x:xmpmeta xmlns:x="adobe:ns:meta/">&a;</x:xmpmeta>', meta)
    assert meta.empty()
