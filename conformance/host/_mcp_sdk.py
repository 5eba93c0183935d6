"""The parts of the ``mcp`` SDK the host uses (the client session, its streamable HTTP transport, its error, the
protocol types), imported without first running the ``mcp`` and ``mcp.client`` package ``__init__`` modules.

Those two only re-export names, but to do so they import the whole SDK: the server side (starlette, uvicorn,
sse-starlette, python-multipart, the MCPServer framework and its pydantic models), the stdio transports, the
high-level ``Client``: about a third of the CPU the SDK costs a run, none of it used by the host. The
client modules are the same either way, so the SDK parses and validates exactly what it did.

The two packages are entered in ``sys.modules`` unexecuted; their ``__init__`` runs (once, completely) the first
time anything asks either one for a name it does not hold yet (PEP 562 module ``__getattr__``): ``mcp.Client``,
``from mcp import ClientSession``, ``mcp.server`` code reading ``mcp.types``... get the full package as before.
Guarded: done only when neither package is imported yet and each ``__init__`` is nothing but imports, a docstring
and ``__all__`` (read from its source, so another SDK version that does more in it gets the plain import), and
undone for the plain import if anything fails.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

_DEFERRED = ("mcp", "mcp.client")  # parents first
_lock = threading.RLock()


def _only_reexports(source: str) -> bool:
    """True when a package ``__init__`` only imports and names things: running it later changes nothing else."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring
        targets = node.targets if isinstance(node, ast.Assign) else []
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == "__all__":
            continue
        return False
    return True


def _completes(module: ModuleType, spec: Any) -> Any:
    """The deferred package's ``__getattr__``: run its ``__init__`` once, then answer as the full package."""

    def __getattr__(name: str) -> Any:
        with _lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                spec.loader.exec_module(module)  # every name it defines; submodules already imported are reused
        return getattr(module, name)  # a name the package does not define: its own AttributeError

    return __getattr__


def _defer_package_inits() -> list[str]:
    """Enter the packages unexecuted; the names entered (none when the guard says no)."""
    if any(name in sys.modules for name in _DEFERRED):
        return []
    entered: list[str] = []
    try:
        for name in _DEFERRED:
            spec = importlib.util.find_spec(name)
            loader = spec.loader if spec is not None else None
            if spec is None or spec.submodule_search_locations is None or not hasattr(loader, "get_source"):
                break
            source = loader.get_source(name)  # type: ignore[union-attr]
            if not isinstance(source, str) or not _only_reexports(source):
                break
            module = importlib.util.module_from_spec(spec)
            module.__dict__["__getattr__"] = _completes(module, spec)
            sys.modules[name] = module
            entered.append(name)
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)  # as the import system binds a submodule
        else:
            return entered
    except Exception:  # any surprise: the plain import below
        pass
    _undo(entered)
    return []


def _undo(entered: list[str]) -> None:
    for name in reversed(entered):
        sys.modules.pop(name, None)
    for name in [n for n in sys.modules if n.startswith(tuple(f"{e}." for e in entered))]:
        sys.modules.pop(name, None)


def _import_client() -> None:
    with _lock:
        entered = _defer_package_inits()
        try:
            importlib.import_module("mcp.client.session")
            importlib.import_module("mcp.client.streamable_http")
            importlib.import_module("mcp.shared.exceptions")
        except Exception:
            if not entered:
                raise
            _undo(entered)  # the plain import, from the packages down
            importlib.import_module("mcp.client.session")


_import_client()

import mcp_types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

__all__ = ["ClientSession", "MCPError", "streamable_http_client", "types"]
