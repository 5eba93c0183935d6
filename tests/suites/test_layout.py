"""One layout per suite (ARCHITECTURE.md, "A suite's layout"): client.py holds the calls, conftest.py only
fixtures, and a fixture is defined once across the suites (one ``listing``, shared in suites/fixtures.py)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

import conformance.suites
from conformance.core.targets import SUITE_NAMES

SUITES_DIR = Path(conformance.suites.__file__).parent


def _is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in node.decorator_list)


def _fixtures(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and _is_fixture(n)]


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_a_suite_has_its_client_and_a_fixtures_only_conftest(suite: str) -> None:
    package = SUITES_DIR / suite
    assert (package / "client.py").is_file()
    tree = ast.parse((package / "conftest.py").read_text(encoding="utf-8"))
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    others = [
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef)
        and not _is_fixture(n)
        and not n.name.startswith(("pytest_", "_"))  # hooks, and private helpers of the fixtures
    ]
    assert (classes, others) == ([], []), "move them to client.py"
    assert not _fixtures(package / "client.py")


def test_every_fixture_of_the_suites_is_defined_once() -> None:
    names = Counter(name for path in SUITES_DIR.rglob("*.py") for name in _fixtures(path))
    assert [name for name, count in names.items() if count > 1] == []
    assert "listing" in _fixtures(SUITES_DIR / "fixtures.py")
    assert not {"profile_listing"} & set(names)
