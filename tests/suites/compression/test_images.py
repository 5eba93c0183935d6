"""The suite's own instruments: generated images, the decoder it trusts, metadata detection, the subject metric."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from conformance.config import Target
from conformance.suites.compression import images
from conformance.suites.compression.client import Api


@pytest.mark.parametrize("name", ["photo.jpg", "photo.png", "flat.png", "flat.jpg", "meta.jpg", "meta.png"])
def test_generated_images_decode_as_their_type(name: str) -> None:
    decoded = images.decode(images.image(name))
    assert decoded is not None and decoded.mime == (images.PNG if name.endswith("png") else images.JPEG)


@pytest.mark.parametrize("name", ["truncated.jpg", "truncated.png", "fake.png", "text.txt"])
def test_broken_images_do_not_decode(name: str) -> None:
    assert images.decode(images.image(name)) is None


def test_metadata_detection() -> None:
    jpeg = images.find_metadata(images.image("meta.jpg"))
    assert jpeg.copyright and jpeg.created and jpeg.gps_value is not None
    png = images.find_metadata(images.image("meta.png"))
    assert png.copyright and png.created and png.gps  # XMP GPS counts as GPS
    assert not images.find_metadata(images.image("photo.jpg")).any
    assert images.metadata_fields(images.image("meta.jpg")) == {"EXIF Copyright", "EXIF DateTimeOriginal", "EXIF GPS"}
    assert images.metadata_fields(images.image("meta.png")) == {
        "XMP dc:rights",
        "XMP xmp:CreateDate",
        "XMP exif:GPSLatitude",
    }
    assert images.metadata_fields(images.image("photo.png")) == set()


def test_subject_metric_sees_crops() -> None:
    whole, pixels = images.red_fraction(images.subject_pixels())
    assert whole > 0.9 and pixels > 0
    cx = images.SUBJECT_CENTRE[0]
    half = images.subject_pixels().crop((cx, 0, 400, 200))  # the right half of the disc only
    assert images.red_fraction(half)[0] < 0.6
    assert images.red_fraction(images.subject_pixels().crop((200, 0, 400, 200))) == (0.0, 0)


def test_relative_locations_are_prefixed_like_the_tinify_client() -> None:
    api = Api(http=None, target=Target("compression", "https://example.test/v1", "k", "basic"))  # type: ignore[arg-type]
    assert api.url("/output/abc") == "https://example.test/v1/output/abc"
    assert api.url("https://cdn.example.test/o/abc") == "https://cdn.example.test/o/abc"


def test_subject_image_is_off_centre() -> None:
    data = images.image("subject.png")
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == images.SUBJECT_SIZE
    assert images.SUBJECT_CENTRE[0] + images.SUBJECT_RADIUS < images.SUBJECT_SIZE[0] // 3  # in the left third
