"""Every reach into another project's private names lives in one module, ``conformance/core/_shortcuts.py``.

A reach is, in the package's source: an import of a private module or name of another package (``import _ssl``,
``from httpx._main import main``); an attribute read or written by a private name that no module of the package
defines (``writer._file``, ``getattr(hook, "_must_rewrite")``); a method a class defines by a private name that a
base class from another package already has (an override of ``httpx.Client._merge_url``). ``self._x`` of a class
with a base from another package counts when that base has it and the class's own methods do not assign it. Dunder
names are public. A private name that some module of the package defines is taken as the package's own wherever it
is read: the scan is a net for the common cases, not a proof.
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import conformance

PACKAGE = Path(conformance.__file__).resolve().parent
THE_MODULE = "core/_shortcuts.py"

# What the one module reaches into, by name (a new reach there is a deliberate change of this list).
EXPECTED_IN_THE_MODULE = {
    "_must_rewrite",  # pytest's AssertionRewritingHook: the packages marked for rewriting
    "httpx._main",  # httpx's command-line client, held back: the shortcut "httpx-cli"
    "_split_scope",  # xdist's LoadScopeScheduling: a check's work unit
    "_inicache",  # pytest's Config: another plugin's ini default
    "_ssl",  # the ssl module's extension
    "_fixtureinfo",  # pytest's Item: the fixture definitions resolved for a check (the shortcut "early-fixtures")
    "_fixturemanager",  # pytest's Session: a fixture asked for from another's body (the same shortcut)
}


@dataclass(frozen=True)
class Reach:
    path: str
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name}"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _sources() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(PACKAGE)): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "node_modules" not in path.parts
    }


def _defined(trees: dict[str, ast.Module]) -> set[str]:
    """Names the package defines: functions, classes, variables, arguments, keywords, and ``self.``/``cls.``
    attributes."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    names.add(node.attr)
            elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias) and (node.asname or "").startswith("_"):
                names.add(node.asname or "")
    return names


def _foreign(module: str) -> bool:
    return module.split(".")[0] != "conformance"


def _module_name(path: str) -> str:
    return "conformance." + path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _namespace(path: str, tree: ast.Module) -> dict[str, Any]:
    """A module's names, with those its functions import (a class defined in a function sees them)."""
    namespace = dict(vars(importlib.import_module(_module_name(path))))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                try:
                    namespace[alias.asname or alias.name] = getattr(importlib.import_module(node.module), alias.name)
                except Exception:
                    continue
    return namespace


def _foreign_bases(path: str, tree: ast.Module, node: ast.ClassDef) -> list[type] | None:
    """The base classes from other packages of a class (evaluated in its module), or None when they cannot be
    told (then every private method of the class counts as a reach)."""
    try:
        namespace = _namespace(path, tree)
        bases: list[Any] = [eval(ast.unparse(base), namespace) for base in node.bases]
    except Exception:
        return None
    found: list[type] = []
    for base in bases:
        if not isinstance(base, type):
            return None
        found += [cls for cls in base.__mro__ if _foreign(cls.__module__) and cls is not object]
    return found


def _class_reaches(path: str, tree: ast.Module, node: ast.ClassDef) -> Iterator[Reach]:
    own = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    methods = [
        (item.lineno, item.name)
        for item in node.body
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _private(item.name)
    ]
    reads = [
        (n.lineno, n.attr)
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
        if _private(n.attr) and n.attr not in own
    ]
    if not node.bases or not (methods or reads):
        return
    bases = _foreign_bases(path, tree, node)
    for line, name in methods:
        if bases is None or any(name in vars(base) for base in bases):
            yield Reach(path, line, name)
    for line, name in reads:
        if bases is None or any(hasattr(base, name) for base in bases):
            yield Reach(path, line, name)


def _builds_a_class(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 3
    )


@functools.cache
def _package() -> tuple[tuple[Reach, ...], frozenset[str]]:
    """The reaches in the package's modules and the names they define, from one parse (the trees are not kept)."""
    trees = _sources()
    defined = frozenset(_defined(trees))
    return tuple(_scan(trees, defined)), defined


def reaches(extra: dict[str, ast.Module]) -> list[Reach]:
    """The reaches in modules added to the package (a name they or the package define is the package's own)."""
    return _scan(extra, _package()[1] | _defined(extra))


def _scan(trees: dict[str, ast.Module], ours: frozenset[str] | set[str]) -> list[Reach]:
    found: list[Reach] = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [
                    Reach(path, node.lineno, a.name)
                    for a in node.names
                    if _foreign(a.name) and any(_private(part) for part in a.name.split("."))
                ]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _foreign(node.module):
                if any(_private(part) for part in node.module.split(".")):
                    found.append(Reach(path, node.lineno, node.module))
                found += [Reach(path, node.lineno, a.name) for a in node.names if _private(a.name)]
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                mine = node.attr in ours and not isinstance(node.ctx, ast.Store)
                if not mine and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    found.append(Reach(path, node.lineno, node.attr))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) > 1:
                name = node.args[1]
                by_name = node.func.id in ("getattr", "hasattr", "setattr", "delattr") and isinstance(
                    name, ast.Constant
                )
                if by_name and isinstance(name.value, str) and _private(name.value) and name.value not in ours:
                    found.append(Reach(path, node.lineno, name.value))
            if _builds_a_class(node):  # type(name, bases, namespace): the namespace's private names
                namespace = node.args[2]  # type: ignore[attr-defined]
                found += [
                    Reach(path, node.lineno, key.value)
                    for key in (namespace.keys if isinstance(namespace, ast.Dict) else [])
                    if isinstance(key, ast.Constant) and isinstance(key.value, str) and _private(key.value)
                ]
            if isinstance(node, ast.ClassDef):
                found += _class_reaches(path, tree, node)
    return sorted(set(found), key=lambda r: (r.path, r.line, r.name))


def package_reaches() -> tuple[Reach, ...]:
    return _package()[0]


def test_every_reach_into_another_projects_internals_is_in_the_one_module() -> None:
    found = package_reaches()
    outside = [str(r) for r in found if r.path != THE_MODULE]
    assert outside == [], "reaches into other projects' internals outside " + THE_MODULE + ":\n" + "\n".join(outside)


def test_the_one_modules_reaches_are_the_known_ones() -> None:
    inside = {r.name for r in package_reaches() if r.path == THE_MODULE}
    assert inside == EXPECTED_IN_THE_MODULE, "\n".join(str(r) for r in package_reaches() if r.path == THE_MODULE)


def test_the_scan_sees_each_kind_of_reach() -> None:
    """The scan is not blind: an import of a private module or name, a foreign private attribute, a private
    getattr, and an override of a foreign private method are each reported."""
    source = (
        "import _ssl\nfrom httpx._main import main\nfrom pytest import _internal\n"
        "def f(reporter):\n    reporter._tw.write('x')\n    return getattr(reporter, '_inicache', None)\n"
        "class Client(httpx.Client):\n    def _merge_url(self, url):\n        return url\n"
    )
    names = {(r.path, r.name) for r in reaches({"core/_probe.py": ast.parse(source)})}
    probe = {"_ssl", "httpx._main", "_internal", "_tw", "_inicache", "_merge_url"}
    assert {name for path, name in names if path == "core/_probe.py"} == probe
