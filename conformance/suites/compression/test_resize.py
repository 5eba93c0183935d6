"""Resizing: scale, fit, cover, thumb; never enlarging; bad options; keeping the important area; the headers of
resize and preserve answers (IMG-RSZ-*).

Dimensions are read by decoding the returned image, never from the headers (IMG-RSZ-08 compares the two).
"""

from __future__ import annotations

from typing import Any

from conformance import alone, expect, fail, observe, rule
from conformance.judges.compression import IMAGE_HEADERS, image_header_problems
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites.compression import images
from conformance.suites.compression.client import Api, decoded_or_fail, expect_json_error


def _resize(api: Api, name: str, options: dict[str, Any]) -> images.Decoded:
    upload = api.upload(name)
    return decoded_or_fail(api.command(upload.location, {"resize": options}), f"resize {options} of {name}")


def _source(name: str) -> images.Decoded:
    decoded = images.decode(images.image(name))
    assert decoded is not None  # our own images always decode
    return decoded


SCALE = "IMG-RSZ-01; contract compression, Resize options rule 1 and Rules 3 (scale: exactly one of width or height)"
RSZ01 = attack_table(
    "IMG-RSZ-01",
    Attack("both width and height", SCALE, named=True),
    Attack("neither width nor height", SCALE, named=True),
    Attack("both, in the source's aspect ratio", f"{SCALE}: never both, even when they agree"),
    Attack("both, the source's own size", f"{SCALE}: never both, even when they agree"),
    Attack("both null", f"{SCALE}: null is not a width or height, so neither is given"),
)


def _rsz01_options(source: images.Decoded) -> dict[str, dict[str, Any]]:
    half_w, half_h = source.width // 2, round(source.height * (source.width // 2) / source.width)
    return {
        "both width and height": {"method": "scale", "width": 100, "height": 50},
        "neither width nor height": {"method": "scale"},
        "both, in the source's aspect ratio": {"method": "scale", "width": half_w, "height": half_h},
        "both, the source's own size": {"method": "scale", "width": source.width, "height": source.height},
        "both null": {"method": "scale", "width": None, "height": None},
    }


@rule("IMG-RSZ-01")
def test_scale(api: Api) -> None:
    source = _source("photo.jpg")
    out = _resize(api, "photo.jpg", {"method": "scale", "width": 120})
    expected_h = source.height * 120 / source.width
    expect(out.width == 120, f"scale width=120 gave width {out.width}")
    expect(abs(out.height - expected_h) <= 1, f"scale width=120 gave height {out.height}, not {expected_h:.1f}")
    out = _resize(api, "photo.jpg", {"method": "scale", "height": 40})
    expected_w = source.width * 40 / source.height
    expect(out.height == 40, f"scale height=40 gave height {out.height}")
    expect(abs(out.width - expected_w) <= 1, f"scale height=40 gave width {out.width}, not {expected_w:.1f}")
    _expect_refused(api, "IMG-RSZ-01", _rsz01_options(source))


def _expect_refused(
    api: Api, rule_id: str, options_by_case: dict[str, dict[str, Any]], *, uncounted: bool = False
) -> None:
    """Every case of ``rule_id``'s table, sent as the resize options of one upload: each a 4xx JSON error (the
    contract: "4xx is a request error"; the code for bad options is not shown). ``uncounted``: and the account's
    Compression-Count, read before and after them all, unchanged (the check must then run alone)."""
    run = AttackRun.of(rule_id)
    location = api.upload("photo.jpg").location
    before = api.count() if uncounted else None
    statuses: dict[str, int] = {}

    def send(case: str) -> None:
        options = options_by_case[case]
        response = api.command(location, {"resize": options})
        statuses[case] = response.status_code
        expect_json_error(response, f"resize {options} ({case})")

    run.each(options_by_case, send, limit=api.http.concurrency)  # the cases at once (--concurrency)
    if before is not None:
        after = api.count()
        if after != before:
            run.problems.append(f"rejected resizes raised Compression-Count from {before} to {after}")
    observe(f"refusals answered {', '.join(map(str, sorted(set(statuses.values()))))}")
    run.conclude()


# fit, cover and thumb need both dimensions: every way of giving fewer is refused (one probe per method
# missed a sandbox that took a missing width as the height).
BOTH = "contract compression, Rules 3 (fit, cover and thumb need both width and height); Resize options rules 2-4"
_BOTH_CASES: dict[str, dict[str, Any]] = {
    "only width": {"width": 100},
    "only height": {"height": 100},
    "neither width nor height": {},
    "width, height null": {"width": 100, "height": None},
}


def _both_required_table(rule_id: str) -> tuple[Attack, ...]:
    return attack_table(
        rule_id,
        Attack("only width", BOTH, named=True),
        Attack("only height", BOTH, named=True),
        Attack("neither width nor height", BOTH),
        Attack("width, height null", f"{BOTH}: null is not a height"),
    )


RSZ02, RSZ03, RSZ04 = (_both_required_table(r) for r in ("IMG-RSZ-02", "IMG-RSZ-03", "IMG-RSZ-04"))


def _expect_both_required(api: Api, rule_id: str, method: str) -> None:
    _expect_refused(api, rule_id, {case: {"method": method, **dims} for case, dims in _BOTH_CASES.items()})


@rule("IMG-RSZ-02")
def test_fit(api: Api) -> None:
    source = _source("photo.jpg")
    for box_w, box_h in ((100, 100), (200, 60)):
        out = _resize(api, "photo.jpg", {"method": "fit", "width": box_w, "height": box_h})
        what = f"fit {box_w}x{box_h} gave {out.width}x{out.height}"
        expect(out.width <= box_w and out.height <= box_h, f"{what}: a dimension exceeds the box")
        expect(out.width == box_w or out.height == box_h, f"{what}: neither dimension meets the box")
        if out.width == box_w:
            expect(abs(out.height - source.height * box_w / source.width) <= 1, f"{what}: aspect ratio not kept")
        else:
            expect(abs(out.width - source.width * box_h / source.height) <= 1, f"{what}: aspect ratio not kept")
    _expect_both_required(api, "IMG-RSZ-02", "fit")


@rule("IMG-RSZ-03")
def test_cover(api: Api) -> None:
    for box_w, box_h in ((100, 100), (150, 50)):
        out = _resize(api, "photo.jpg", {"method": "cover", "width": box_w, "height": box_h})
        expect((out.width, out.height) == (box_w, box_h), f"cover {box_w}x{box_h} gave {out.width}x{out.height}")
    _expect_both_required(api, "IMG-RSZ-03", "cover")


@rule("IMG-RSZ-04")
def test_thumb(api: Api) -> None:
    for name, box_w, box_h in (("subject.png", 100, 100), ("subject.png", 120, 40), ("photo.jpg", 90, 90)):
        out = _resize(api, name, {"method": "thumb", "width": box_w, "height": box_h})
        expect(
            (out.width, out.height) == (box_w, box_h), f"thumb {box_w}x{box_h} of {name} gave {out.width}x{out.height}"
        )
    _expect_both_required(api, "IMG-RSZ-04", "thumb")


@rule("IMG-RSZ-05")
def test_never_enlarges(api: Api) -> None:
    source = _source("photo.jpg")
    big_w, big_h = source.width * 2, source.height * 2
    problems = []
    for options in (
        {"method": "scale", "width": big_w},
        {"method": "scale", "height": big_h},
        {"method": "fit", "width": big_w, "height": big_h},
        {"method": "cover", "width": big_w, "height": big_h},
        {"method": "thumb", "width": big_w, "height": big_h},
        {"method": "cover", "width": big_w, "height": source.height // 2},
    ):
        out = _resize(api, "photo.jpg", options)
        if out.width > source.width or out.height > source.height:
            problems.append(f"{options} gave {out.width}x{out.height} from {source.width}x{source.height}")
    if problems:
        fail("enlarged: " + "; ".join(problems))
    observe(
        f"6 resizes to targets larger than {source.width}x{source.height} (scale, fit, cover, thumb): none enlarged"
    )


RESIZE = "contract compression, Resize options"
_RSZ06_CASES: dict[str, tuple[dict[str, Any], str, bool]] = {
    # case: (resize options, source, named by the rule)
    "method 'stretch' (unknown)": ({"method": "stretch", "width": 100, "height": 100}, f"{RESIZE} (method)", True),
    "method 'Scale' (case changed)": ({"method": "Scale", "width": 100}, f"{RESIZE} (method: exact values)", False),
    "method '' (empty)": ({"method": "", "width": 100}, f"{RESIZE} (method)", False),
    "method as a number": ({"method": 1, "width": 100}, f"{RESIZE} (method: string)", False),
    "no method": ({"width": 100}, f"{RESIZE} (method)", False),
    "width as a numeric string": ({"method": "scale", "width": "100"}, f"{RESIZE} (width: integer)", True),
    "width as a fraction": ({"method": "scale", "width": 100.5}, f"{RESIZE} (width: integer)", True),
    "width as true": ({"method": "scale", "width": True}, f"{RESIZE} (width: integer)", False),
    "width as an array": ({"method": "scale", "width": [100]}, f"{RESIZE} (width: integer)", False),
    "height as a numeric string": ({"method": "fit", "width": 100, "height": "50"}, f"{RESIZE} (height)", False),
    "height as a fraction": ({"method": "fit", "width": 100, "height": 50.5}, f"{RESIZE} (height: integer)", False),
    "height as true": ({"method": "fit", "width": 100, "height": True}, f"{RESIZE} (height: integer)", False),
    "scale width 0": ({"method": "scale", "width": 0}, "IMG-RSZ-06 (zero)", True),
    "scale width -10": ({"method": "scale", "width": -10}, "IMG-RSZ-06 (negative)", True),
    "scale height 0": ({"method": "scale", "height": 0}, "IMG-RSZ-06 (zero)", False),
    "scale height -1": ({"method": "scale", "height": -1}, "IMG-RSZ-06 (negative, the boundary)", False),
    "fit height -5": ({"method": "fit", "width": 100, "height": -5}, "IMG-RSZ-06 (negative)", True),
    "fit width 0": ({"method": "fit", "width": 0, "height": 50}, "IMG-RSZ-06 (zero)", False),
    "cover width 0": ({"method": "cover", "width": 0, "height": 50}, "IMG-RSZ-06 (zero)", True),
    "cover height -1": ({"method": "cover", "width": 50, "height": -1}, "IMG-RSZ-06 (negative)", False),
    "thumb width -1": ({"method": "thumb", "width": -1, "height": 50}, "IMG-RSZ-06 (negative)", False),
    "thumb height 0": ({"method": "thumb", "width": 50, "height": 0}, "IMG-RSZ-06 (zero)", False),
}
RSZ06 = attack_table(
    "IMG-RSZ-06", *(Attack(case, source, named=named) for case, (_, source, named) in _RSZ06_CASES.items())
)


@alone("reads the account's Compression-Count before and after its operations, which any other check's moves")
@rule("IMG-RSZ-06")
def test_bad_resize_options(api: Api) -> None:
    _expect_refused(
        api, "IMG-RSZ-06", {case: options for case, (options, _, _) in _RSZ06_CASES.items()}, uncounted=True
    )


@rule("IMG-RSZ-07")
def test_important_area_kept(api: Api) -> None:
    kept_in_source, _ = images.red_fraction(images.subject_pixels())
    problems = []
    kept: dict[str, float] = {}
    for method in ("cover", "thumb"):
        out = _resize(api, "subject.png", {"method": method, "width": 100, "height": 100})
        fraction, pixels = images.red_fraction(out.image)
        if fraction < 0.8 * kept_in_source:
            problems.append(f"{method} 100x100 kept {fraction:.0%} of the off-centre subject ({pixels} px)")
        kept[method] = fraction
    if problems:
        fail("; ".join(problems))
    observe("the off-centre subject kept: " + ", ".join(f"{m} {f:.0%}" for m, f in kept.items()))


PRESERVE_HEADERS = "contract C, Endpoints (POST /output with preserve: 200 with the image; no headers named)"


@rule("IMG-RSZ-08")
def test_command_answer_headers(api: Api) -> None:
    """A resize answer is 200 with the image and "the headers above" (those of a download): Compression-Count,
    Image-Width/Image-Height of the returned image, its Content-Type and Content-Length. The contract's preserve
    answer is 200 with the image and names no headers: those it carries must mean what the headers table says, the
    missing ones are reported."""
    commands: dict[str, tuple[str, dict[str, Any]]] = {
        "resize scale width=60 of photo.jpg": ("photo.jpg", {"resize": {"method": "scale", "width": 60}}),
        "resize cover 40x30 of photo.png": ("photo.png", {"resize": {"method": "cover", "width": 40, "height": 30}}),
        "preserve [copyright, creation] of meta.jpg": ("meta.jpg", {"preserve": ["copyright", "creation"]}),
        "preserve [copyright] of meta.png": ("meta.png", {"preserve": ["copyright"]}),
    }
    problems = []
    absent = []
    for what, (name, command) in commands.items():
        response = api.command(api.upload(name).location, command)
        decoded = decoded_or_fail(response, what)
        resize = "resize" in command
        problems += [f"{what}: {p}" for p in image_header_problems(response, decoded, required=resize)]
        if not resize:
            absent += [f"{what}: no {h}" for h in IMAGE_HEADERS if h not in response.headers]
    if problems:
        fail("; ".join(problems))
    observe(
        f"{'; '.join(commands)}: 200 with the image; Content-Type, Content-Length, Image-Width/Height and "
        "Compression-Count agree with it"
    )
    if absent:
        observe(f"preserve answers without a download's headers ({PRESERVE_HEADERS}): " + "; ".join(absent))
