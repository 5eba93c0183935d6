"""Compression counting (IMG-CNT-01): read before and after every operation."""

from __future__ import annotations

from conformance import alone, expect, observe, rule
from conformance.judges.compression import count_of
from conformance.suites.compression.client import Api


@alone("reads the account's Compression-Count before and after its operations, which any other check's moves")
@rule("IMG-CNT-01")
def test_counting(api: Api) -> None:
    start = api.count()
    steps: list[str] = []

    def check(what: str, delta: int, header: int | None) -> None:
        now = api.count()
        steps.append(f"{what}: {now - start:+d}")
        expect(now == start + delta, f"after {what} the count rose by {now - start}, expected {delta} ({steps})")
        expect(header is None or header == now, f"{what} answered Compression-Count {header}, the account has {now}")

    upload = api.fresh_upload("photo.jpg")
    check("an upload", 1, count_of(upload.response))
    check("a download", 1, count_of(api.get(upload.location)))
    check("a scale resize", 2, count_of(api.command(upload.location, {"resize": {"method": "scale", "width": 60}})))
    resized = api.command(upload.location, {"resize": {"method": "cover", "width": 40, "height": 40}})
    check("a cover resize", 3, count_of(resized))
    check("a preserve", 3, count_of(api.command(upload.location, {"preserve": ["copyright", "creation"]})))
    api.command(upload.location, {"resize": {"method": "stretch", "width": 10, "height": 10}})
    check("a rejected resize", 3, None)
    api.get(upload.location + "-unknown")
    check("a download of an unknown output", 3, None)
    observe("; ".join(steps))
