"""Hypothesis' storage (its Unicode tables) goes to the per-user cache directory, never to the run's cwd."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.core._cache import cache_dir
from tests._checks_run import run_checks
from tests._run_py import run_py

# Characters, whose first draw builds and stores the character map; text() would also build the UTF-8 table, kept
# in the same storage directory by the same Hypothesis function, a costly first use that proves nothing more.
PROPERTY = """
from hypothesis import given, strategies as st
from conformance import hypothesis_profile, observe, rule

@rule("AUTH-PRM-01")
@hypothesis_profile()
@given(st.characters())
def test_character(c):
    observe(f"U+{ord(c):04X}")
"""


@pytest.fixture
def unicode_tables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A per-user cache of the test's own: the directory where Hypothesis' Unicode tables would go."""
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "conformance" / "hypothesis" / "unicode_data"


def certify_one(pytester: pytest.Pytester, source: str) -> None:
    """``source``, a module of one property check, certified in a fresh process; the check passes."""
    pytester.makepyfile(test_prop=source)
    result = run_checks(pytester, "--target-url", "https://127.0.0.1:1/mcp", "test_prop.py", how="subprocess")
    result.assert_outcomes(passed=1)


def test_a_property_check_leaves_no_hypothesis_directory_in_the_cwd(
    pytester: pytest.Pytester, unicode_tables: Path
) -> None:
    certify_one(pytester, PROPERTY)
    assert not (pytester.path / ".hypothesis").exists()
    assert list(unicode_tables.rglob("charmap.json.gz"))


# Text, as the platform's and campaigns' checks draw it: the character map and the UTF-8 table.
TEXT_PROPERTY = """
from hypothesis import given, strategies as st
from conformance import hypothesis_profile, observe, rule

@rule("AUTH-PRM-01")
@hypothesis_profile()
@given(st.text(min_size=1))
def test_text(s):
    observe(f"{len(s)} characters")
"""


def test_the_set_up_s_warm_up_leaves_a_run_that_draws_text_no_table_to_build(
    pytester: pytest.Pytester, unicode_tables: Path
) -> None:
    subprocess.run([sys.executable, "-c", run_py().WARM_HYPOTHESIS], check=True, timeout=120)
    built = sorted(path.relative_to(unicode_tables) for path in unicode_tables.rglob("*.json.gz"))
    assert built
    certify_one(pytester, TEXT_PROPERTY)
    # No table the run needed was missing (Hypothesis writes a table it read once more, so times would not tell).
    assert sorted(path.relative_to(unicode_tables) for path in unicode_tables.rglob("*.json.gz")) == built


def test_the_cache_directory_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "conformance"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: relative paths are invalid
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "conformance"


def test_the_profile_is_registered_again_in_a_fresh_copy_of_hypothesis() -> None:
    """A pytester in-process run drops the modules first imported inside it: the next import of Hypothesis is a
    fresh copy that never saw the profile (tests/test_throttling.py then tests/verdict/test_signals.py in one process
    failed with "Profile 'conformance' is not registered")."""
    from conformance.verdict._hypothesis import PROFILE, hypothesis_profile

    hypothesis_profile()
    ours = [name for name in sys.modules if name == "hypothesis" or name.startswith("hypothesis.")]
    saved = {name: sys.modules.pop(name) for name in ours}
    try:
        fresh = hypothesis_profile()
        from hypothesis import settings

        assert settings.get_profile(PROFILE) is fresh and fresh.deadline is None
    finally:
        for name in [n for n in sys.modules if n == "hypothesis" or n.startswith("hypothesis.")]:
            del sys.modules[name]
        sys.modules.update(saved)
