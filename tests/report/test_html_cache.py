"""The HTML template compiled once per user (jinja2's bytecode cache): the same page, and never a failed report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.report import html as writer
from conformance.report.model import RunReport
from tests.report.report_factory import build_report


@pytest.fixture
def fresh_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A per-user cache directory of the test's own, and the writer's environment built again inside it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    writer._environment.cache_clear()
    yield tmp_path / "cache"
    writer._environment.cache_clear()


def _render() -> str:
    writer._environment.cache_clear()  # a new process: only the cache on disk is shared
    return writer.render_html(RunReport.from_json(build_report(12)))


def test_the_second_run_loads_the_compiled_template_and_renders_the_same_page(fresh_environment: Path) -> None:
    first = _render()
    cached = list((fresh_environment / "conformance" / "jinja2").glob("*/*.cache"))
    assert cached, "the compiled template was not kept"
    stamps = [p.stat().st_mtime_ns for p in cached]
    assert _render() == first
    assert [p.stat().st_mtime_ns for p in cached] == stamps  # loaded, not compiled and written again


def test_a_corrupt_cache_entry_is_compiled_again(fresh_environment: Path) -> None:
    first = _render()
    for entry in (fresh_environment / "conformance" / "jinja2").glob("*/*.cache"):
        entry.write_bytes(entry.read_bytes()[:40])
    assert _render() == first


def test_an_unusable_cache_directory_costs_the_cache_only(
    fresh_environment: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first = _render()
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # the cache directory cannot be made under a file
    assert _render() == first
