"""The compression engine: libvips (pyvips + pyvips-binary, which bundles mozjpeg and libimagequant).

PNG: palette quantization with dithering at the highest zlib and quantizer effort. JPEG: mozjpeg options
(trellis quantization, optimized scans, progressive). The result is never larger than the input: when
re-encoding does not help, the input itself is served with its metadata stripped losslessly.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pyvips

from . import metadata
from .errors import ServiceError

JPEG = "image/jpeg"
PNG = "image/png"
MAX_PIXELS = 50_000_000
JPEG_QUALITY = 78
PNG_QUALITY = 90
PNG_EFFORT = 7  # libimagequant effort: the highest effort costs much more time for files hardly smaller
RESIZE_METHODS = ("scale", "fit", "cover", "thumb")
_HUGE = 10_000_000  # "unbounded" side for thumbnail_image when only one dimension is given
_KEEP_ICC = int(pyvips.enums.ForeignKeep.ICC)  # colour profile stays; every other block is rebuilt by us

# libvips' own operation cache only costs memory here: every request works on a new buffer.
pyvips.cache_set_max(0)
_init_lock = threading.Lock()


class ImageError(ServiceError):
    """A client-side problem with the image; carries the HTTP status and the error body."""


@dataclass(frozen=True)
class Resize:
    method: str
    width: int | None
    height: int | None


@dataclass(frozen=True)
class Encoded:
    data: bytes
    mime: str
    width: int
    height: int


def sniff(data: bytes) -> str | None:
    """The type from the magic bytes; the Content-Type of the upload is never trusted."""
    if data.startswith(metadata.PNG_SIGNATURE):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    return None


def decode(data: bytes, *, strict: bool = True) -> tuple[pyvips.Image, str]:
    """Fully decode ``data`` (so truncation is caught now, not in a later request) and autorotate it."""
    if not data:
        raise ImageError(400, "InputMissing", "Input missing: the request body is empty")
    mime = sniff(data)
    if mime is None:
        raise ImageError(415, "UnsupportedMediaType", "File type is not supported (only PNG and JPEG)")
    loader = pyvips.Image.jpegload_buffer if mime == JPEG else pyvips.Image.pngload_buffer
    try:
        image = loader(data, fail_on="truncated" if strict else "none", access="random")
        if image.width * image.height > MAX_PIXELS:
            raise ImageError(400, "TooLarge", f"Image dimensions exceed {MAX_PIXELS} pixels")
        image = image.copy_memory()  # forces the whole decode: a truncated file fails here
    except pyvips.Error as exc:
        raise ImageError(400, "DecodeError", "Input file is corrupt or truncated") from exc
    return image.autorot(), mime


def _orientation(data: bytes, mime: str) -> int:
    if mime != JPEG:
        return 1
    try:
        image = pyvips.Image.jpegload_buffer(data)
        return int(image.get("orientation")) if image.get_typeof("orientation") else 1
    except pyvips.Error:
        return 1


def _encode(image: pyvips.Image, mime: str, defects: frozenset[str]) -> bytes:
    if image.format != "uchar":
        image = image.cast("uchar", shift=image.format in ("ushort", "short"))
    if mime == PNG:
        return bytes(
            image.pngsave_buffer(
                palette=True, Q=PNG_QUALITY, dither=1.0, effort=PNG_EFFORT, compression=9, keep=_KEEP_ICC
            )
        )
    if image.hasalpha():
        image = image.flatten(background=[255, 255, 255])
    return bytes(
        image.jpegsave_buffer(
            Q=JPEG_QUALITY,
            optimize_coding=True,
            trellis_quant=True,
            overshoot_deringing=True,
            optimize_scans=True,
            interlace=True,
            quant_table=3,
            keep=_KEEP_ICC,
        )
    )


def _flat_background(image: pyvips.Image) -> list[float] | None:
    """The background colour when all four borders are one flat colour, else None."""
    w, h = image.width, image.height
    if w < 8 or h < 8:
        return None
    edges = [image.crop(0, 0, w, 2), image.crop(0, h - 2, w, 2), image.crop(0, 0, 2, h), image.crop(w - 2, 0, 2, h)]
    means = [[edge.extract_band(b).avg() for b in range(image.bands)] for edge in edges]
    if max(edge.deviate() for edge in edges) > 8:
        return None
    for band in range(image.bands):
        values = [m[band] for m in means]
        if max(values) - min(values) > 10:
            return None
    return means[0]


def _thumb(image: pyvips.Image, width: int, height: int, defects: frozenset[str]) -> pyvips.Image:
    """Subject-aware thumbnail: exactly width x height, or the largest box of that aspect inside the original."""
    grow = "enlarge_on_resize" in defects
    factor = 1.0 if grow else min(1.0, image.width / width, image.height / height)
    tw, th = max(1, round(width * factor)), max(1, round(height * factor))
    background = None if "centre_crop" in defects else _flat_background(image)
    if background is None:
        crop = "centre" if "centre_crop" in defects else "attention"
        return image.thumbnail_image(tw, height=th, crop=crop, size="both" if grow else "down")
    left, top, bw, bh = image.find_trim(threshold=24, background=background)
    if bw == 0 or bh == 0:
        return image.thumbnail_image(tw, height=th, crop="centre", size="both" if grow else "down")
    margin = max(bw, bh) // 10  # a little air around the subject
    left, top, bw, bh = left - margin, top - margin, bw + 2 * margin, bh + 2 * margin
    # the region has the target's aspect, holds the subject and is never smaller than the target
    rw = max(bw, bh * tw / th, tw)
    rh = rw * th / tw
    rw, rh = round(rw + 0.5), round(rh + 0.5)
    x = left + bw / 2 - rw / 2
    y = top + bh / 2 - rh / 2
    # crop unimportant parts when the region fits in the image; else extend the background around it
    if rw <= image.width:
        x = min(max(x, 0), image.width - rw)
    if rh <= image.height:
        y = min(max(y, 0), image.height - rh)
    region = image.embed(-round(x), -round(y), rw, rh, extend="background", background=background)
    return region.thumbnail_image(tw, height=th, crop="centre", size="both" if grow else "down")


def resize_image(image: pyvips.Image, spec: Resize, defects: frozenset[str]) -> pyvips.Image:
    """Never enlarging (decided where the contract is silent): ``scale`` and ``fit`` stop at the original size;
    ``cover`` keeps scale 1 and crops to min(width, W) x min(height, H); ``thumb`` shrinks the requested box,
    keeping its aspect ratio, until it fits inside the original."""
    size = "both" if "enlarge_on_resize" in defects else "down"
    if spec.method == "scale":
        if spec.width is not None and spec.height is not None:  # only reachable through a mutant
            return image.thumbnail_image(spec.width, height=spec.height, size=size)
        if spec.width is not None:
            return image.thumbnail_image(spec.width, height=_HUGE, size=size)
        assert spec.height is not None
        return image.thumbnail_image(_HUGE, height=spec.height, size=size)
    assert spec.width is not None and spec.height is not None
    if spec.method == "fit":
        if "fit_stretch" in defects:
            w, h = min(spec.width, image.width), min(spec.height, image.height)
            return image.resize(w / image.width, vscale=h / image.height)
        return image.thumbnail_image(spec.width, height=spec.height, size=size)
    if spec.method == "cover":
        crop = "centre" if "centre_crop" in defects else "attention"
        out = image.thumbnail_image(spec.width, height=spec.height, crop=crop, size=size)
        if "cover_off_by_one" in defects and out.width > 1:
            out = out.crop(0, 0, out.width - 1, out.height)
        return out
    if "thumb_as_fit" in defects:
        return image.thumbnail_image(spec.width, height=spec.height, size=size)
    return _thumb(image, spec.width, spec.height, defects)


def optimize(
    original: bytes,
    *,
    resize: Resize | None = None,
    preserve: frozenset[str] = frozenset(),
    defects: frozenset[str] = frozenset(),
    strict: bool = True,
) -> Encoded:
    """Compress ``original``, optionally resized and with kept metadata. ``strict`` refuses truncated input."""
    image, mime = decode(original, strict=strict)
    source_w, source_h = image.width, image.height
    try:
        if resize is not None:
            image = resize_image(image, resize, defects)
        elif "output_cropped" in defects and image.height > 1:
            image = image.crop(0, 0, image.width, image.height - 1)  # the optimized output loses its last row
        data = _encode(image, mime, defects)
    except pyvips.Error as exc:  # an input libvips decodes but cannot process is still the input's fault
        raise ImageError(400, "ProcessingError", "The image could not be processed") from exc
    same_geometry = (image.width, image.height) == (source_w, source_h)
    if same_geometry and _orientation(original, mime) == 1:
        try:
            stripped = metadata.strip(original, mime)
        except ValueError:  # a damaged container (only reachable with lenient decoding): no fallback
            stripped = data
        if len(stripped) < len(data):  # optimization did not help: serve the input, minus its metadata
            data = stripped
    keep = set(preserve)
    if "gps_kept_by_default" in defects:
        keep.add("location")
    if "copyright_dropped" in defects:
        keep.discard("copyright")
    meta = metadata.read_metadata(original).select(frozenset(keep), mime) if keep else metadata.Metadata()
    padding = 1500 if "preserve_bloat" in defects and preserve else 0
    data = metadata.write_metadata(data, mime, meta, padding=padding)
    return Encoded(data=data, mime=mime, width=image.width, height=image.height)
