"""Hypothesis' storage (its Unicode tables) goes to the per-user cache directory, never to the run's cwd."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance._hypothesis import cache_dir

PROPERTY = """
from hypothesis import given, strategies as st
from conformance import hypothesis_profile, observe, rule

@rule("AUTH-PRM-01")
@hypothesis_profile()
@given(st.text(min_size=1))
def test_text(s):
    observe(f"{len(s)} characters")
"""


def test_a_property_check_leaves_no_hypothesis_directory_in_the_cwd(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pytester.makepyfile(test_prop=PROPERTY)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--report-dir", "out", "--target-url", "https://127.0.0.1:1/mcp", "test_prop.py"
    )
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".hypothesis").exists()
    assert list((tmp_path / "cache" / "conformance" / "hypothesis" / "unicode_data").rglob("charmap.json.gz"))


def test_the_cache_directory_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "conformance"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: relative paths are invalid
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "conformance"
