"""The lowest-versions pass (run.py's ``lowest_pass``, tox's ``lowest``) runs its property tests under
tests/conftest.py's Hypothesis profile, and the budgets the tests name shrink with it; the main pass keeps them."""

from __future__ import annotations

import configparser
from pathlib import Path

from hypothesis import settings

from tests._examples import examples
from tests._run_py import run_py
from tests.conftest import FLOOR_EXAMPLES, FLOOR_PROFILE

ROOT = Path(__file__).resolve().parents[1]


def test_a_named_budget_is_kept_by_the_default_profile_and_shrinks_with_the_floors_one() -> None:
    default = settings.get_profile("default")
    floors = settings(max_examples=FLOOR_EXAMPLES)
    assert [examples(n, default) for n in (1, 40, 150, 400)] == [1, 40, 150, 400]
    assert [examples(n, floors) for n in (1, 40, 150, 400)] == [1, 4, 15, 40]


def test_run_py_and_tox_run_the_pass_with_the_floors_profile() -> None:
    command = run_py().lowest_pass("1")
    assert command[command.index("--hypothesis-profile") + 1] == FLOOR_PROFILE
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    assert f"--hypothesis-profile {FLOOR_PROFILE}" in tox["testenv:lowest"]["commands"]
    assert "--hypothesis-profile" not in tox["testenv:newest"]["commands"] + tox["versions"]["commands"]
