"""How the project's own tests are shared out over xdist workers (tests/conftest.py): expensive session fixtures are
made once per run, and the costliest units of work are handed out first."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import SHARED_FIXTURE_SCOPES, longest_first, scope_costs, xdist_scope

TESTS = Path(__file__).parents[1]


def users_of(fixture: str) -> set[str]:
    """Test modules that request ``fixture`` as a parameter of a test or fixture function."""
    pattern = re.compile(rf"def \w+\([^)]*\b{fixture}\b", re.S)
    return {
        f"tests/{path.relative_to(TESTS).as_posix()}"
        for path in TESTS.rglob("*.py")
        if path.name != "conftest.py" and pattern.search(path.read_text(encoding="utf-8"))
    }


def test_every_module_using_a_shared_fixture_is_scheduled_with_the_others() -> None:
    for fixture, modules in SHARED_FIXTURE_SCOPES.items():
        assert users_of(fixture) == set(modules), fixture
        scopes = {xdist_scope(f"{module}::test_x", {}) for module in modules}
        assert len(scopes) == 1, scopes


def test_the_costliest_unit_goes_first(tmp_path: Path) -> None:
    queue = {"a.py": {"t1": False}, "b.py": {"t1": False, "t2": False, "t3": False}, "c.py": {"t1": False}}
    assert longest_first(queue, {}) == "b.py"  # unrecorded: a second per test
    recorded = tmp_path / "durations.json"
    recorded.write_text(json.dumps({"a.py": 40.0, "b.py": 2.5}))
    assert longest_first(queue, scope_costs(recorded)) == "a.py"
    assert scope_costs(tmp_path / "missing.json") == {}
