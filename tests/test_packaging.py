"""A wheel ships the package and its data, and nothing a used clone holds besides (the IdP's node_modules)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from conformance.reference.mutants import SERVICE_PACKAGES

ROOT = Path(__file__).parents[1]
SHIPPED = {
    "py.typed",
    "core/catalog.toml",
    "schemas/report.schema.json",
    "suites/auth/login_steps.toml",
    "suites/platform/images/red-64x32.png",
    "suites/platform/images/red-2048x1024.png",
    "reference/rule_groups.toml",
    *(f"reference/{service}/mutants.toml" for service in SERVICE_PACKAGES),
    "report/templates/report.html.j2",
    "reference/idp/provider.js",
    "reference/idp/idp.js",
    "reference/idp/host.js",
    "reference/idp/package.json",
    "reference/idp/package-lock.json",
}
CLUTTER = (
    "reference/idp/node_modules/oidc-provider/package.json",
    "reference/idp/node_modules/oidc-provider/lib/index.js",
    "reference/idp/node_modules/some-tool/config.toml",
    "reference/idp/node_modules/gyp/pylib/__init__.py",
    "reference/idp/node_modules/.package-lock.json",
)


def _plant(tree: Path, names: tuple[str, ...] | set[str]) -> None:
    for name in names:
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")


def test_package_data_patterns_match_what_ships_and_nothing_in_node_modules(tmp_path: Path) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = config["package-data"]["conformance"]
    _plant(tmp_path, SHIPPED)
    _plant(tmp_path, CLUTTER)
    matched = {str(p.relative_to(tmp_path)) for pattern in patterns for p in tmp_path.glob(pattern) if p.is_file()}
    assert matched >= SHIPPED, SHIPPED - matched
    assert not [m for m in matched if "node_modules" in m], matched
    assert any("node_modules" in e for e in config["packages"]["find"]["exclude"])


def _build_wheel(tree: Path, dist: Path) -> subprocess.CompletedProcess[str]:
    """The wheel of ``tree`` built by its build backend in an isolated environment: with uv when run.py installed it
    beside the interpreter (it sets up that environment in a fraction of pip's CPU), else, or if uv cannot (no
    index it can reach), with pip."""
    uv = Path(sys.executable).with_name("uv")
    if uv.is_file():
        built = subprocess.run(
            [str(uv), "build", "--wheel", "-q", "--out-dir", str(dist), str(tree)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if built.returncode == 0:
            return built
    return subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_wheel_built_from_a_used_clone_has_no_node_modules(tmp_path: Path) -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    tree = tmp_path / "clone"
    for name in tracked:
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_bytes((ROOT / name).read_bytes())
    _plant(tree / "conformance", CLUTTER)  # what `run.py setup` leaves in a clone
    built = _build_wheel(tree, tmp_path / "dist")
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("conformance-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if "node_modules" in n]
    assert {f"conformance/{name}" for name in SHIPPED} <= set(names)
    # The corpus and the docs are the repository's, not the wheel's (fixtures/README.md); the validators ship.
    assert not [n for n in names if n.startswith(("fixtures/", "docs/"))]
    assert {"conformance/judges/__init__.py", "conformance/pytest/vendor.py"} <= set(names)
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert "conformance-vendor = conformance.pytest.vendor" in zipfile.ZipFile(wheel).read(entry_points).decode()
