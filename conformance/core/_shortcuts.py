"""Every place the harness reaches into another project's internals (names it does not document as public).

Two kinds live here, and nowhere else (``tests/test_private_reaches.py`` scans the package and fails on a reach
outside this module):

- **Shortcuts**, which only save time; each is on by default and each has the public behaviour as its fallback:

  ``httpx-cli``
      ``import httpx`` without its command-line client ``httpx._main`` (click, pygments, rich's progress and
      syntax modules), which the harness never calls.
  ``rewrite``
      pytest's assertion rewriter kept off the harness's own modules (``AssertionRewritingHook._must_rewrite``):
      installed from a wheel, the package is otherwise parsed, rewritten and compiled from source on every run
      that has no bytecode for it.
  ``hypothesis-rewrite``
      the same for Hypothesis, which a property-based check imports.
  ``hypothesis-summary``
      Hypothesis' pytest plugin unregistered before the terminal summary when it has nothing to say: its
      ``pytest_terminal_summary`` imports all of Hypothesis on every run, even one that never used it.
  ``mcp-inits``
      the MCP SDK's client modules imported without the ``mcp`` and ``mcp.client`` package ``__init__`` modules,
      which re-export the server side too; the reference tool server's server modules without the ``mcp`` and
      ``mcp.server`` ones, which import the client and the high-level server.
  ``early-fixtures``
      the fixture definitions pytest resolved for each check (``item._fixtureinfo``, and the fixture manager's
      lookup for a fixture asked for from another's body), from which the run loop starts the work of fixtures
      marked ``conformance.early`` ahead of their first user (``conformance/core/_early.py``); off, every fixture
      is set up by its first user, as pytest does.
  ``tokenizer-backend``
      the reference platform sandbox's tokenizer, bpe-openai's Rust tokenizer (``bpe_openai._bindings``), loaded
      without the ``bpe_openai`` package ``__init__``, which builds every encoding's rank table in Python (a second
      copy the counts never read).

  ``CONFORMANCE_NO_SHORTCUTS=1`` turns all of them off (the kill switch: a new version of pytest, httpx or the MCP
  SDK that the detection below does not catch); a comma-separated list of names turns off those only. What each
  saves is measured by ``benchmarks/startup.py`` (``tokenizer-backend``, a reference service's: by
  ``benchmarks/named_costs.py``; docs/performance.md).

- **Extension points**, which the harness needs for what it does and which their projects document nowhere
  public: the xdist scheduler's work unit (``LoadScopeScheduling._split_scope``, the hook xdist's own schedulers
  override), another plugin's ini default (``Config._inicache``), and the ``_ssl`` extension's file (the reference
  mTLS front calls the libssl that Python itself uses). The kill switch leaves them on; each checks the internal
  has the expected shape first and otherwise falls back to a plainer behaviour that never crashes.

Every function checks that the internal it touches exists and has the expected shape before touching it, and
takes the public way (or does nothing) otherwise. Nothing heavy is imported at module level: ``conformance``'s
``__init__`` imports this module first, which takes the package off pytest's rewriter (shortcut ``rewrite``)
before any other module of the package is imported. A wheel-installed package is otherwise rewritten as a whole,
since pytest marks every package of a distribution that declares a plugin; the checks and their fixtures keep
their rewritten asserts (test modules and conftest files are rewritten by name, and ``conformance.suites.fixtures``
is marked by name as a ``pytest_plugins`` entry).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

ENV = "CONFORMANCE_NO_SHORTCUTS"

SHORTCUTS: dict[str, str] = {
    "httpx-cli": "import httpx without its command-line client",
    "rewrite": "pytest's assertion rewriter kept off the harness's own modules",
    "hypothesis-rewrite": "pytest's assertion rewriter kept off Hypothesis",
    "hypothesis-summary": "Hypothesis' pytest plugin unregistered when it has nothing to say",
    "mcp-inits": "the MCP SDK's client or server modules without its package __init__ modules",
    "early-fixtures": "session fixtures marked early started ahead of their first user",
    "tokenizer-backend": "bpe-openai's Rust tokenizer without the package __init__, which loads every encoding",
}


def enabled(name: str) -> bool:
    """Whether shortcut ``name`` is on: unless ``CONFORMANCE_NO_SHORTCUTS`` is ``1`` (every one off) or a
    comma-separated list naming it."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in ("", "0", "no", "false", "off"):
        return True
    if value in ("1", "all", "yes", "true", "on"):
        return False
    return name not in {part.strip() for part in value.split(",")}


# -- httpx-cli ----------------------------------------------------------------------------------------------------

_HTTPX_CLI = "httpx._main"


def _httpx_main(*args: Any, **kwargs: Any) -> Any:
    """``httpx.main``: httpx's command-line client, imported on first call."""
    from httpx._main import main as cli

    return cli(*args, **kwargs)


def import_httpx() -> None:
    """Import httpx with its command-line client held back (a ``None`` entry in ``sys.modules``: its import fails
    as if the client's own dependencies were missing, which httpx's ``__init__`` expects), then bind ``httpx.main``
    to a function that imports the real client when called. Only when neither httpx nor its client is imported
    yet; if holding it back makes httpx's import fail (a version that does not expect it), httpx is imported
    plainly."""
    if not enabled("httpx-cli") or "httpx" in sys.modules or _HTTPX_CLI in sys.modules:
        return
    sys.modules[_HTTPX_CLI] = None  # type: ignore[assignment]  # a None entry: "import httpx._main" raises ImportError
    try:
        import httpx
    except ImportError:
        sys.modules.pop(_HTTPX_CLI, None)
        for name in [n for n in sys.modules if n == "httpx" or n.startswith("httpx.")]:
            del sys.modules[name]  # a half-imported httpx: imported again, plainly
        import httpx

        return
    finally:
        if sys.modules.get(_HTTPX_CLI, 0) is None:
            del sys.modules[_HTTPX_CLI]
    if callable(getattr(httpx, "main", None)) or not hasattr(httpx, "main"):
        httpx.main = _httpx_main  # type: ignore[assignment]


# -- rewrite, hypothesis-rewrite -----------------------------------------------------------------------------------


def unmark_for_rewrite(hook: Any, package: str) -> None:
    """Take ``package`` off the packages pytest's rewrite ``hook`` marked: a no-op when the hook keeps no set of
    names under ``_must_rewrite``."""
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and all(isinstance(name, str) for name in marked):
        marked.discard(package)


def keep_package_compiled(package: str) -> None:
    """``package``'s modules imported as compiled, not through pytest's active assertion rewriter (if any)."""
    if not enabled("rewrite"):
        return
    for finder in sys.meta_path:
        if type(finder).__name__ == "AssertionRewritingHook":
            unmark_for_rewrite(finder, package)


def keep_hypothesis_compiled(config: Any) -> None:
    """Hypothesis imported as compiled, when it is not imported yet (before the suites import it)."""
    if enabled("hypothesis-rewrite") and "hypothesis" not in sys.modules:
        unmark_for_rewrite(getattr(config.pluginmanager, "rewrite_hook", None), "hypothesis")


def drop_idle_hypothesis_summary(config: Any) -> None:
    """Unregister Hypothesis' pytest plugin (``hypothesispytest``) when its terminal summary would print nothing:
    Hypothesis not imported in this process, no statistics asked for and no report carrying failing examples (an
    xdist controller receives them from its workers, under the plugin's ``FAILING_EXAMPLES_KEY``). Called from
    ``pytest_sessionfinish``, before the terminal reporter writes the summary."""
    if not enabled("hypothesis-summary") or "hypothesis" in sys.modules:
        return
    plugin = config.pluginmanager.get_plugin("hypothesispytest")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    key = getattr(plugin, "FAILING_EXAMPLES_KEY", None)
    stats = getattr(reporter, "stats", None)
    if plugin is None or not isinstance(key, str) or not isinstance(stats, dict):
        return
    if config.getoption("hypothesis_show_statistics", default=False):
        return
    if any(key in getattr(r, "__dict__", {}) for reports in stats.values() for r in reports):
        return
    config.pluginmanager.unregister(plugin)


# -- mcp-inits ----------------------------------------------------------------------------------------------------

_DEFERRED = ("mcp", "mcp.client")  # parents first
_DEFERRED_SERVER = ("mcp", "mcp.server")
_mcp_lock = threading.RLock()


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


def _completes(module: ModuleType, spec: Any) -> Callable[[str], Any]:
    """The deferred package's ``__getattr__``: run its ``__init__`` once, then answer as the full package."""

    def __getattr__(name: str) -> Any:
        with _mcp_lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                spec.loader.exec_module(module)  # every name it defines; submodules already imported are reused
        return getattr(module, name)  # a name the package does not define: its own AttributeError

    return __getattr__


def _defer_package_inits(packages: tuple[str, ...] = _DEFERRED) -> list[str]:
    """Enter the packages in ``sys.modules`` unexecuted; the names entered (none when the guard says no)."""
    if not enabled("mcp-inits") or any(name in sys.modules for name in packages):
        return []
    entered: list[str] = []
    try:
        for name in packages:
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
    except Exception:  # any surprise: the plain import
        pass
    _undo(entered)
    return []


def _undo(entered: list[str]) -> None:
    for name in reversed(entered):
        sys.modules.pop(name, None)
    for name in [n for n in sys.modules if n.startswith(tuple(f"{e}." for e in entered))]:
        sys.modules.pop(name, None)


def import_mcp_client(modules: tuple[str, ...], packages: tuple[str, ...] = _DEFERRED) -> None:
    """Import the MCP SDK's ``modules`` (its client side) with the ``mcp`` and ``mcp.client`` package ``__init__``
    modules deferred: entered in ``sys.modules`` unexecuted, each runs (once, completely) the first time anything
    asks it for a name it does not hold yet (PEP 562 module ``__getattr__``). Done only when neither package is
    imported yet and each ``__init__`` is nothing but imports, a docstring and ``__all__``; undone for the plain
    import if anything fails. ``packages``: the package ``__init__`` modules deferred, parents first."""
    import importlib

    with _mcp_lock:
        entered = _defer_package_inits(packages)
        try:
            for module in modules:
                importlib.import_module(module)
        except Exception:
            if not entered:
                raise
            _undo(entered)  # the plain import, from the packages down
            for module in modules:
                importlib.import_module(module)


def import_mcp_server(modules: tuple[str, ...]) -> None:
    """Import the MCP SDK's ``modules`` (its server side, e.g. ``mcp.server.lowlevel``) as
    :func:`import_mcp_client` does its client's, with the ``mcp`` and ``mcp.server`` package ``__init__`` modules
    deferred: they import the client and the high-level server too."""
    import_mcp_client(modules, _DEFERRED_SERVER)


# -- tokenizer-backend --------------------------------------------------------------------------------------------

_BPE_PACKAGE, _BPE_BACKEND = "bpe_openai", "bpe_openai._bindings"
_bpe_lock = threading.Lock()


def _bpe_backend() -> ModuleType | None:
    """``bpe_openai._bindings`` (an extension module), imported without running ``bpe_openai/__init__.py`` unless
    that package is imported already; None when it is not where and what it is expected to be."""
    module = sys.modules.get(_BPE_BACKEND)
    if module is not None:
        return module
    if _BPE_PACKAGE in sys.modules:
        import importlib

        return importlib.import_module(_BPE_BACKEND)
    import importlib.machinery

    package = importlib.util.find_spec(_BPE_PACKAGE)  # a top-level package: found, not run
    locations = package.submodule_search_locations if package is not None else None
    if not locations:
        return None
    spec = importlib.machinery.PathFinder.find_spec(_BPE_BACKEND, list(locations))
    if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Under its own name: the package, once imported, finds it there (an extension initializes once per process).
    sys.modules[_BPE_BACKEND] = module
    return module


def bpe_tokenizer(encoding: str) -> Any | None:
    """bpe-openai's Rust tokenizer of ``encoding`` (``o200k_base``, ``cl100k_base``; what the package's
    ``Encoding.encode_ordinary`` encodes with), loaded without the ``bpe_openai`` package ``__init__``, whose
    import builds every encoding's rank table in Python; None when the shortcut is off or the package is not shaped
    as expected (then ``bpe_openai.get_encoding(encoding)``, the public way)."""
    if not enabled("tokenizer-backend"):
        return None
    with _bpe_lock:
        try:
            module = _bpe_backend()
        except ImportError:
            return None
        factory = getattr(module, "tokenizer_for_encoding", None)
        if not callable(factory):
            return None
        tokenizer = factory(encoding)
    return tokenizer if callable(getattr(tokenizer, "encode", None)) else None


# -- early-fixtures -----------------------------------------------------------------------------------------------


def fixture_definitions(item: Any) -> Mapping[str, Sequence[Any]]:
    """The fixture definitions pytest resolved for a collected check, by name (each name's definitions, the one
    that applies last); empty when the shortcut is off or pytest keeps them otherwise."""
    if not enabled("early-fixtures"):
        return {}
    found = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", None)
    return found if isinstance(found, Mapping) else {}


def fixture_definition(item: Any, name: str) -> Any | None:
    """The definition of fixture ``name`` that applies to a check which asks for it only from another fixture's
    body (``request.getfixturevalue``); None when the shortcut is off or pytest has no such lookup."""
    if not enabled("early-fixtures"):
        return None
    lookup = getattr(getattr(getattr(item, "session", None), "_fixturemanager", None), "getfixturedefs", None)
    if not callable(lookup):
        return None
    try:
        found = lookup(name, item)
    except Exception:  # another shape of the lookup: no early start, never a crash
        return None
    return found[-1] if isinstance(found, Sequence) and found else None


# -- extension points (not shortcuts: the kill switch leaves them on) ---------------------------------------------


def scope_scheduling(base: type) -> type | None:
    """A subclass of xdist's ``LoadScopeScheduling`` (``base``) whose work unit of a test is its instance's
    ``scope(nodeid)``, through the method xdist's own schedulers override; None when ``base`` has no such method
    (then xdist's default distribution is used)."""
    if not callable(getattr(base, "_split_scope", None)):
        return None

    def split_scope(self: Any, nodeid: str) -> str:
        return str(self.scope(nodeid))

    return type(base.__name__, (base,), {"_split_scope": split_scope, "__module__": __name__})


def set_ini_default(config: Any, name: str, value: Any) -> None:
    """Make ``config.getini(name)`` answer ``value`` (for a plugin that reads it next), by pytest's cache of ini
    values; nothing when that cache is not a dict."""
    cache = getattr(config, "_inicache", None)
    if isinstance(cache, dict):
        cache[name] = value


def ssl_extension_file() -> str | None:
    """The file of Python's ``_ssl`` extension (linked to the libssl the ``ssl`` module uses), or None."""
    try:
        import _ssl
    except ImportError:
        return None
    path = getattr(_ssl, "__file__", None)
    return path if isinstance(path, str) else None


# Imported first by the package's ``__init__``: before any other module of the package is imported.
keep_package_compiled("conformance")

__all__ = [
    "ENV",
    "SHORTCUTS",
    "bpe_tokenizer",
    "drop_idle_hypothesis_summary",
    "enabled",
    "fixture_definition",
    "fixture_definitions",
    "import_httpx",
    "import_mcp_client",
    "import_mcp_server",
    "keep_hypothesis_compiled",
    "keep_package_compiled",
    "scope_scheduling",
    "set_ini_default",
    "ssl_extension_file",
    "unmark_for_rewrite",
]
