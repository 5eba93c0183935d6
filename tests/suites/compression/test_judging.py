"""How the compression checks judge answers the contract leaves open: an upload record with `output` only, headers
a preserve answer does not carry, truncated images (refused or compressed), and what a plain-HTTP answer means."""

from __future__ import annotations

import json

import httpx
import pytest

from conformance import Failure
from conformance.judges.compression import image_header_problems
from conformance.suites.compression import images
from conformance.suites.compression.test_upload import PlainAnswer, _check_upload, _plain_refused

PHOTO = images.image("photo.jpg")


def _created(record: object) -> httpx.Response:
    headers = {"Location": "/output/abc", "Compression-Count": "3", "Content-Type": "application/json"}
    return httpx.Response(201, headers=headers, content=json.dumps(record).encode())


def test_a_record_with_output_only_is_an_upload_record() -> None:
    _check_upload(_created({"output": {"size": 10, "type": images.JPEG}}), PHOTO, images.JPEG, "upload")


def test_input_when_present_describes_the_bytes_sent() -> None:
    _check_upload(_created({"input": {"size": len(PHOTO), "type": images.JPEG}}), PHOTO, images.JPEG, "upload")
    with pytest.raises(Failure, match=r"input\.size"):
        _check_upload(_created({"input": {"size": 1, "type": images.JPEG}}), PHOTO, images.JPEG, "upload")
    with pytest.raises(Failure, match="`input` or `output`"):
        _check_upload(_created({"id": "abc"}), PHOTO, images.JPEG, "upload")


def _image_answer(headers: dict[str, str]) -> tuple[httpx.Response, images.Decoded]:
    response = httpx.Response(200, headers=headers, content=PHOTO)
    decoded = images.decode(PHOTO)
    assert decoded is not None
    return response, decoded


def test_image_headers_must_agree_with_the_image() -> None:
    decoded = images.decode(PHOTO)
    assert decoded is not None
    right = {
        "Content-Type": images.JPEG,
        "Image-Width": str(decoded.width),
        "Image-Height": str(decoded.height),
        "Compression-Count": "2",
    }
    response, decoded = _image_answer(right)
    assert image_header_problems(response, decoded) == []
    response, decoded = _image_answer({**right, "Image-Width": str(decoded.width + 1)})
    assert [p.split()[0] for p in image_header_problems(response, decoded)] == ["Image-Width"]


def test_absent_headers_are_problems_only_where_required() -> None:
    response, decoded = _image_answer({"Content-Type": images.JPEG})
    missing = {p.split()[0] for p in image_header_problems(response, decoded)}
    assert missing == {"Image-Width", "Image-Height", "Compression-Count"}
    assert image_header_problems(response, decoded, required=False) == []
    response, decoded = _image_answer({"Content-Type": images.PNG})
    assert image_header_problems(response, decoded, required=False) == [
        f"Content-Type {images.PNG!r} (the bytes are {images.JPEG})"
    ]


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        (None, True),
        (PlainAnswer("HTTP/1.1 400 Bad Request", 400, {}), True),
        (PlainAnswer("HTTP/1.1 308 Permanent Redirect", 308, {"Location": "https://img.example/shrink"}), True),
        (PlainAnswer("HTTP/1.1 301 Moved", 301, {"Location": "http://img.example/shrink"}), False),
        (PlainAnswer("HTTP/1.1 200 OK", 200, {}), False),
    ],
)
def test_plain_http_is_refused_unless_served_or_redirected_elsewhere(answer: PlainAnswer | None, refused: bool) -> None:
    if refused:
        _plain_refused(answer, "POST http://img.example/shrink")
    else:
        with pytest.raises(Failure):
            _plain_refused(answer, "POST http://img.example/shrink")


def test_truncated_images_are_told_from_bytes_behind_a_signature() -> None:
    assert images.truncated(images.image("truncated.jpg")) and images.truncated(images.image("truncated.png"))
    assert not images.truncated(images.image("fake.png")) and not images.truncated(PHOTO)
