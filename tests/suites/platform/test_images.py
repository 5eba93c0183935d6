"""TOK-06's images are shipped PNG files (encoding the large one in every run would be costly): each is the solid
red RGB image of its size the check means to send."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from conformance.suites.platform.test_tokens import png_data_url


@pytest.mark.parametrize(("width", "height"), [(64, 32), (2048, 1024)])
def test_each_image_is_a_solid_red_png_of_its_size(width: int, height: int) -> None:
    url = png_data_url(width, height)
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    with Image.open(io.BytesIO(base64.b64decode(url.removeprefix(prefix)))) as image:
        assert (image.format, image.mode, image.size) == ("PNG", "RGB", (width, height))
        assert image.getcolors() == [(width * height, (200, 30, 30))]
