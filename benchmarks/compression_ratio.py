"""Compression ratio of the reference engine (output bytes / input bytes) on real photos and screenshots.

    .venv/bin/python benchmarks/compression_ratio.py [FILE ...]

Without arguments it uses the photos and screenshots found on this machine (documentation images shipped with
the Rust toolchain, the Google Cloud SDK, Node.js and others; nothing is downloaded). Files on the web are
usually optimized already, so each image is also measured "as captured": re-saved the way cameras (JPEG
quality 95) and screenshot tools (PNG, fast zlib) write them, which is what the real service's published ratios
(PNG about 0.09-0.35, JPEG about 0.40-0.44) are measured on.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from pathlib import Path

from PIL import Image

from conformance.reference.compression import engine

CANDIDATES = [
    # photos
    "~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/embedded-book/assets/f3.jpg",
    "~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/embedded-book/assets/verify.jpeg",
    "/usr/lib/google-cloud-sdk/platform/gsutil/third_party/requests/ext/flower-of-life.jpg",
    # screenshots and diagrams
    "~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/rustc/images/llvm-cov-show-01.png",
    "~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/book/img/trpl14-01.png",
    "~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/book/img/trpl14-03.png",
    "~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/cargo/images/build-info.png",
    "~/.pyenv/terminal_output.png",
    "/usr/lib/google-cloud-sdk/platform/gsutil/third_party/requests/ext/ss.png",
    "/usr/share/doc/nodejs/contributing/doc_img/compare-boxplot.png",
    "/usr/share/doc/valgrind/html/images/dh-tree.png",
]


def as_captured(data: bytes) -> bytes:
    """The image as a camera (JPEG q95) or a screenshot tool (PNG, zlib level 1) would have written it."""
    with Image.open(io.BytesIO(data)) as image:
        out = io.BytesIO()
        if image.format == "JPEG":
            image.convert("RGB").save(out, "JPEG", quality=95)
        else:
            image.save(out, "PNG", compress_level=1)
        return out.getvalue()


def measure(paths: list[Path]) -> int:
    rows: dict[str, list[tuple[str, float, float]]] = {"image/png": [], "image/jpeg": []}
    print(f"{'file':40} {'type':10} {'pixels':>9} {'input':>9} {'ratio':>6} {'captured':>9} {'ratio':>6} {'ms':>6}")
    for path in paths:
        data = path.read_bytes()
        mime = engine.sniff(data)
        if mime is None:
            continue
        started = time.perf_counter()
        out = engine.optimize(data)
        elapsed_ms = (time.perf_counter() - started) * 1000
        captured = as_captured(data)
        out_captured = engine.optimize(captured)
        ratio, ratio_captured = len(out.data) / len(data), len(out_captured.data) / len(captured)
        rows[mime].append((path.name, ratio, ratio_captured))
        print(
            f"{path.name[:40]:40} {mime:10} {out.width * out.height:>9} {len(data):>9} {ratio:>6.3f} "
            f"{len(captured):>9} {ratio_captured:>6.3f} {elapsed_ms:>6.0f}"
        )
    published = {"image/png": "0.09-0.35", "image/jpeg": "0.40-0.44"}
    print()
    for mime, found in rows.items():
        if not found:
            continue
        as_is = statistics.mean(r for _, r, _ in found)
        as_captured_mean = statistics.mean(c for _, _, c in found)
        print(
            f"{mime}: {len(found)} files, mean ratio {as_is:.3f} as found, {as_captured_mean:.3f} as captured "
            f"(published for the real service: {published[mime]})"
        )
    return 0


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [Path(p).expanduser() for p in CANDIDATES]
    paths = [p for p in paths if p.is_file()]
    if not paths:
        print("no images found; pass image files as arguments", file=sys.stderr)
        return 2
    return measure(paths)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
