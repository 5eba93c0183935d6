"""The written layering (ARCHITECTURE.md, "Layers"), enforced: which part of the package may import which.

A small AST reading of every module's imports (at any depth: an import inside a function loads the module all the
same; only imports under ``if TYPE_CHECKING:`` are left out, as they never run).
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import conformance
import conformance.pytest.plugin

PACKAGE = Path(conformance.__file__).parent


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The module's syntax tree, parsed once for all the tests of this module (they only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    base = PACKAGE.parent / relative
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def imports_of(path: Path, module: str | None = None) -> set[str]:
    """The absolute names of the modules ``path`` (module ``module``, by default named by its place in the package)
    imports; ``from pkg import sub`` counts as ``pkg.sub`` when ``sub`` is a module."""
    module = module or _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if base.startswith("conformance") and _is_module(sub) else base)
    return found


def modules_under(relative: str) -> list[Path]:
    target = PACKAGE / relative
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def violations(relative: str, *, forbidden: tuple[str, ...] = (), allowed: tuple[str, ...] | None = None) -> list[str]:
    """``module -> import`` lines breaking the rule: an import of ``forbidden`` (a module and what is under it; the
    bare ``conformance`` means the package's facade alone), or (with ``allowed``) an import of the package outside
    ``allowed`` and outside the part itself."""
    own = _module_name(PACKAGE / relative)
    found = []
    for path in modules_under(relative):
        for name in sorted(imports_of(path)):
            bad = _within(name, tuple(f for f in forbidden if f != "conformance")) or (
                name == "conformance" and "conformance" in forbidden
            )
            if allowed is not None and _within(name, ("conformance",)) and not _within(name, (own, *allowed)):
                bad = True
            if bad:
                found.append(f"{_module_name(path)} -> {name}")
    return found


# host/ is the host's machinery: it never reaches up into pytest, the verdicts, the suites, the reports, the
# reference services or the plugin (it raises the conformance.core._exceptions family; the suites judge).
HOST_FORBIDDEN_PYTEST = ("pytest", "_pytest")
HOST_FORBIDDEN_VERDICTS = ("conformance.verdict._verdicts",)
HOST_FORBIDDEN_UPPER = (
    "conformance.suites",
    "conformance.report",
    "conformance.reference",
    "conformance.pytest.plugin",
    "conformance.pytest._xdist",
    "conformance.cli",
)


def test_the_layering_reader_sees_imports_at_every_depth(tmp_path: Path) -> None:
    """The reader itself: lazy, relative and package-level imports count; TYPE_CHECKING ones do not."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import _cases\n"
        "from conformance import _gc, rule\n"
        "from conformance.core import _context\n"
        "if TYPE_CHECKING:\n    import conformance.pytest.plugin\n"
        "def f():\n    import pytest\n    from ..host import mtls\n",
        encoding="utf-8",
    )
    found = imports_of(probe, "conformance.suites.probe")
    assert {"conformance.suites._cases", "conformance.core._context", "conformance", "pytest"} <= found
    assert "conformance.host.mtls" in found and "conformance.pytest.plugin" not in found


def test_host_imports_no_pytest() -> None:
    assert violations("host", forbidden=HOST_FORBIDDEN_PYTEST) == []


def test_host_imports_no_verdicts() -> None:
    assert violations("host", forbidden=HOST_FORBIDDEN_VERDICTS) == []


def test_host_imports_nothing_above_it() -> None:
    """Not the suites, reports, reference services or plugin, nor the package's facade (which re-exports them)."""
    assert violations("host", forbidden=(*HOST_FORBIDDEN_UPPER, "conformance")) == []


@pytest.mark.parametrize(
    "leaf",
    ["core/targets.py", "core/_context.py", "core/_cache.py", "core/_values.py", "host/addresses.py", "host/mtls.py"],
)
def test_the_leaves_import_nothing_of_the_package(leaf: str) -> None:
    assert violations(leaf, allowed=()) == []


def test_the_exceptions_import_only_the_running_check_s_record() -> None:
    assert violations("core/_exceptions.py", allowed=("conformance.core._context",)) == []


# A rule ID as the catalog spells it (AUTH-TOOL-01, PROF-05, RL-06, IMG-SHRINK-03) or shortened (TOOL-02, CHAL-01).
RULE_ID = re.compile(r"\b[A-Z]{2,}(?:-[A-Z]+)*-\d{2}\b")


def test_host_names_no_rule() -> None:
    """host/ does what a host does (parses and types documents, raises InvalidResponse); which rule a document
    breaks is the judges' to say (conformance/judges/), so no rule ID appears in host/, not even in a comment."""
    assert RULE_ID.search("judged under AUTH-TOOL-01 and (PRM-01), RL-06") is not None
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {match.group()}"
        for path in modules_under("host")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in RULE_ID.finditer(line)
    ]
    assert found == []


def test_suites_import_neither_the_plugin_nor_the_report() -> None:
    assert violations("suites", forbidden=("conformance.pytest.plugin", "conformance.report", "conformance.cli")) == []


def test_rules_imports_only_the_cache_the_exceptions_and_the_targets() -> None:
    allowed = ("conformance.core._cache", "conformance.core._exceptions", "conformance.core.targets")
    assert violations("core/rules.py", allowed=allowed) == []


def test_reference_imports_only_host_mtls_host_addresses_the_exceptions_the_targets_and_the_cache() -> None:
    allowed = (
        "conformance.core._cache",
        "conformance.core._httpx_cli",
        "conformance.core._shortcuts",
        "conformance.core._values",
        "conformance.host.mtls",
        "conformance.host.addresses",
        "conformance.core._exceptions",
        "conformance.core.targets",
        "conformance.reference",
    )
    assert violations("reference", allowed=allowed) == []


def test_the_shared_fixtures_keep_the_linking_client_out_until_a_check_needs_it() -> None:
    """The plugin names conformance.suites.fixtures in ``pytest_plugins``: loading it must not load OAuth, MCP or
    the login drivers (a run with no tool server never needs them)."""
    heavy = ("conformance.suites._linking", "conformance.host.oauth", "conformance.host.login", "conformance.host.mcp")
    code = (
        "import sys, conformance.pytest.plugin, conformance.suites.fixtures; "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
    assert "conformance.suites.fixtures" in conformance.pytest.plugin.pytest_plugins


MAX_FUNCTION_LINES = 80  # no function in the product over 80 lines


def test_no_function_in_the_product_is_over_80_lines() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


# The work's own history (tracker numbers, work-branch and findings-file names) stays out of the house: code, docs,
# tests and benchmarks say what they do and why, not which change brought them.
HISTORY = re.compile("|".join((r"\b[Ii]ssues? \d+\b", r"\bh\d{2}[a-z]?-(?:findings|verdicts)\b")))


def test_nothing_narrates_its_history() -> None:
    root = Path(__file__).resolve().parents[1]
    trees = ["conformance", "tests", "docs", "benchmarks"]
    paths = [p for tree in trees for p in (root / tree).rglob("*") if p.suffix in (".py", ".md", ".toml", ".js", ".j2")]
    paths += [p for p in root.glob("*.md")] + [root / "run.py", root / "action.yml"]
    found = [
        f"{path.relative_to(root)}:{number}"
        for path in paths
        if "node_modules" not in path.parts and path.is_file()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert found == []


@functools.cache
def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at load time or inside functions (``if TYPE_CHECKING:`` blocks
    left out: they never run). Built once for the tests that read it (none changes it)."""
    root = Path(conformance.__file__).resolve().parent
    modules = {
        ".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in root.rglob("*.py")
    }

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = _tree(path)
        skipped = {
            id(child)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for child in ast.walk(node)
        }
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                found |= {o for a in node.names if (o := owner(a.name))}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                found |= {o for a in node.names if (o := owner(f"{base}.{a.name}") or owner(base))}
        graph[module] = found - {module}
    return graph


def test_the_package_has_no_import_cycle() -> None:
    """No module of the package reaches itself through imports, those inside functions included: every floor
    imports only floors below it."""
    graph = _import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert cycles == []


# The floors of the package, lowest first: a module may import its own floor and those below, never one above.
# ``conformance`` alone is the facade (``conformance/__init__.py``), which re-exports the verdict API lazily.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("conformance.core",),  # leaves: targets, catalog, exceptions, the running check's record, budgets
    ("conformance.host",),  # what a real host does; no pytest
    ("conformance.reference",),  # the reference services, beside the harness (see the test above)
    ("conformance.config",),  # settings
    ("conformance.judges",),  # judging a document: a document (and context) in, each rule's verdict out
    ("conformance.report",),  # the result model and its writers
    ("conformance.verdict",),  # what a check says, and the judge
    ("conformance",),  # the facade
    ("conformance.suites",),  # the checks and their clients
    ("conformance.pytest",),  # the pytest face
    ("conformance.cli", "conformance.testing", "conformance.__main__"),  # commands and the tests' helpers
)

# Imports against the order, each with its reason (ideally none).
ALLOWED_AGAINST_THE_ORDER: dict[tuple[str, str], str] = {}


def floor_of(module: str) -> int:
    best, rank = -1, -1
    for number, prefixes in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), number
    return rank


def test_every_module_has_a_floor() -> None:
    assert [m for m in _import_graph() if floor_of(m) < 0] == []


def test_no_module_imports_a_floor_above_its_own() -> None:
    graph = _import_graph()
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if floor_of(target) > floor_of(module) and (module, target) not in ALLOWED_AGAINST_THE_ORDER
    )
    assert upward == []


def test_the_package_top_level_holds_at_most_ten_modules() -> None:
    assert len([p for p in PACKAGE.glob("*.py")]) <= 10
