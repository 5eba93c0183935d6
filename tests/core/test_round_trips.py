"""The exchanges' round trips as the run loop reads them (conformance.core._context.RoundTrips), and the number of
checks at once it chooses from them (conformance.pytest._overlap.ChecksAtOnce)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core import _context
from conformance.core._context import RoundTrips
from conformance.pytest import _overlap
from conformance.pytest._overlap import ChecksAtOnce


def trips(*seconds: float) -> RoundTrips:
    found = RoundTrips()
    for s in seconds:
        found.add(s)
    return found


def test_no_share_before_four_exchanges() -> None:
    assert trips(0.05, 0.05, 0.05).floor_share() is None


def test_exchanges_at_the_networks_floor_share_near_one_and_queued_ones_near_zero() -> None:
    assert trips(0.050, 0.052, 0.052, 0.055, 0.060).floor_share() == pytest.approx(0.05 / 0.052)
    assert trips(0.001, *[0.040] * 8).floor_share() == pytest.approx(0.025)


def test_the_median_of_the_latest_follows_the_run_and_reset_forgets_it() -> None:
    found = trips(0.05, *[0.5] * 16)
    assert found.floor_share() == pytest.approx(0.1)
    for _ in range(16):
        found.add(0.05)
    assert found.floor_share() == pytest.approx(1.0)
    found.reset()
    assert found.floor_share() is None


@pytest.mark.parametrize(
    ("latest", "chosen"),
    [
        (None, 4),  # nothing measured yet: the least
        ([0.05] * 16, 16),  # at the floor: the most
        ([0.1] * 16, 8),  # twice the floor: half
        ([1.0] * 16, 4),  # queued: never below the least
    ],
)
def test_checks_at_once_scale_with_the_share_between_least_and_most(
    monkeypatch: pytest.MonkeyPatch, latest: list[float] | None, chosen: int
) -> None:
    found = RoundTrips()
    if latest is not None:
        found.add(0.05)
        for s in latest:
            found.add(s)
    monkeypatch.setattr(_context, "ROUND_TRIPS", found)
    monkeypatch.setattr(_overlap, "cores_busy", lambda: False)
    assert ChecksAtOnce(4, 16).now() == chosen
    assert ChecksAtOnce(6, 6).now() == 6  # a number set: fixed


def test_a_machine_whose_cores_are_all_busy_runs_the_least(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exchanges that all take long on a loaded machine wait for a core, not for the network: no more at once."""
    found = RoundTrips()
    for _ in range(16):
        found.add(0.05)
    monkeypatch.setattr(_context, "ROUND_TRIPS", found)
    monkeypatch.setattr(_overlap, "cpu_pressure", lambda: 0.6)
    assert _overlap.cores_busy() and ChecksAtOnce(4, 16).now() == 4
    monkeypatch.setattr(_overlap, "cpu_pressure", lambda: 0.1)
    assert not _overlap.cores_busy() and ChecksAtOnce(4, 16).now() == 16


def test_without_cpu_pressure_the_load_average_tells(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_overlap, "cpu_pressure", lambda: None)
    cores = len(_overlap.os.sched_getaffinity(0))
    monkeypatch.setattr(_overlap.os, "getloadavg", lambda: (float(cores), 0.0, 0.0))
    assert _overlap.cores_busy()
    monkeypatch.setattr(_overlap.os, "getloadavg", lambda: (cores - 0.5, 0.0, 0.0))
    assert not _overlap.cores_busy()


def test_cpu_pressure_is_read_from_the_kernels_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    told = tmp_path / "cpu"
    told.write_text("some avg10=42.50 avg60=20.00 avg300=10.00 total=123\nfull avg10=0.00 avg60=0.00\n")
    monkeypatch.setattr(_overlap, "CPU_PRESSURE", str(told))
    monkeypatch.setattr(_overlap, "PRESSURE_READ_S", 0.0)  # every call reads the file
    assert _overlap.cpu_pressure() == pytest.approx(0.425)
    told.write_text("not what the kernel writes\n")
    assert _overlap.cpu_pressure() is None
    monkeypatch.setattr(_overlap, "CPU_PRESSURE", str(tmp_path / "absent"))
    assert _overlap.cpu_pressure() is None


def test_cpu_pressure_is_read_again_only_once_a_while_has_passed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    told = tmp_path / "cpu"
    told.write_text("some avg10=42.50 avg60=20.00 avg300=10.00 total=123\n")
    monkeypatch.setattr(_overlap, "CPU_PRESSURE", str(told))
    monkeypatch.setattr(_overlap, "_pressure_read", None)
    clock = [100.0]
    monkeypatch.setattr(_overlap.time, "monotonic", lambda: clock[0])
    assert _overlap.cpu_pressure() == pytest.approx(0.425)
    told.write_text("some avg10=1.00 avg60=20.00 avg300=10.00 total=123\n")
    clock[0] += _overlap.PRESSURE_READ_S / 2
    assert _overlap.cpu_pressure() == pytest.approx(0.425)  # the figure read a moment ago
    clock[0] += _overlap.PRESSURE_READ_S
    assert _overlap.cpu_pressure() == pytest.approx(0.01)
