"""Compression sandbox mutants: each switches exactly one defect (``--mutant NAME``) and names the rules it trips."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, row_maker

_m = row_maker("compression")


MUTANTS: list[Mutant] = [
    _m("auth_any_key", {"IMG-AUTH-01"}, "Accepts any API key in api:<key>"),
    _m("auth_key_prefix", {"IMG-AUTH-01"}, "Accepts a password that is a non-empty prefix of an API key"),
    _m(
        "input_size_wrong",
        {"IMG-SHRINK-01"},
        "The upload's output record reports the output size as input.size",
        {"IMG-SHRINK-02"},
    ),
    _m("source_url_broken", {"IMG-SHRINK-02"}, "Every {source: {url}} upload answers 400 Source not found"),
    _m("truncated_accepted", {"IMG-SHRINK-03"}, "Truncated images are decoded leniently, answered 201 and counted"),
    _m(
        "source_truncated_accepted",
        {"IMG-SHRINK-03"},
        "A truncated image fetched by source URL is decoded leniently, answered 201 and counted (uploads stay strict)",
    ),
    _m("output_larger", {"IMG-SHRINK-04"}, "No optimization and no fallback: the output is larger than the input"),
    _m("width_header_lies", {"IMG-OUT-01"}, "GET /output sends Image-Width one pixel more than the image"),
    _m("content_type_mismatch", {"IMG-OUT-01"}, "GET /output sends the other image type in Content-Type"),
    _m("scale_accepts_both", {"IMG-RSZ-01"}, "scale accepts width and height together (and fits the box)"),
    _m("fit_stretch", {"IMG-RSZ-02"}, "fit stretches the image to the box, ignoring the aspect ratio"),
    _m("cover_off_by_one", {"IMG-RSZ-03"}, "cover returns one pixel less than the requested width"),
    _m("thumb_as_fit", {"IMG-RSZ-04"}, "thumb behaves like fit: no background added, no crop to the exact size"),
    _m("enlarge_on_resize", {"IMG-RSZ-05"}, "Resizing enlarges images to targets larger than the original"),
    _m("negative_dimension_accepted", {"IMG-RSZ-06"}, "Negative resize dimensions are taken as their absolute value"),
    _m("bool_dimension_accepted", {"IMG-RSZ-06"}, "A boolean resize dimension (true) is taken as the integer 1"),
    _m("method_case_insensitive", {"IMG-RSZ-06"}, "Resize methods are matched case-insensitively ('Scale' works)"),
    _m("centre_crop", {"IMG-RSZ-07"}, "cover and thumb crop the centre instead of the important area"),
    _m("copyright_dropped", {"IMG-PRS-01"}, "preserve: [copyright] drops the copyright"),
    _m("gps_kept_by_default", {"IMG-PRS-02"}, "GPS latitude and longitude are kept without preserve: [location]"),
    _m("preserve_bloat", {"IMG-PRS-03"}, "Preserving adds 1.5 kB of padding to the output"),
    _m(
        "store_writes_nothing",
        {"IMG-STO-01", "IMG-STO-02"},
        "store answers 200 with a Location but writes nothing (so it cannot refuse bad credentials either)",
        {"IMG-STO-03"},
    ),
    _m("bad_path_accepted", {"IMG-STO-03"}, "store.path is not validated (trailing slash, '..' segments accepted)"),
    _m(
        "store_path_leading_slash",
        {"IMG-STO-03"},
        "store.path '/<bucket>/<key>' is accepted: leading slashes are stripped instead of refused",
    ),
    _m("preserve_counts", {"IMG-CNT-01"}, "A preserve request counts one compression"),
    _m("error_without_message", {"IMG-ERR-01"}, "Error bodies (other than 401) have no message"),
    _m("plain_http", {"IMG-TLS-01"}, "The TLS port also serves plain HTTP (a front routes non-TLS connections)"),
]
