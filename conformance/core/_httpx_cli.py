"""httpx imported without its command-line client.

``import httpx`` also imports ``httpx._main``, its command-line client, to bind the name ``httpx.main``: click,
pygments' lexers and rich's progress, syntax and markup modules, a cost on every run for nothing used by the
harness. Imported by the pytest plugin before anything of the package imports httpx, this module imports httpx
with that one submodule held back (a ``None`` entry in ``sys.modules``: its import fails as if the CLI's own
dependencies were missing, which httpx's ``__init__`` expects), then binds ``httpx.main`` to a function that imports
the real client when called. Guarded: only when neither httpx nor its client is imported yet; if holding it back
makes httpx's import fail (a version that does not expect it), httpx is imported plainly.
"""

from __future__ import annotations

import sys
from typing import Any

_CLI = "httpx._main"


def main(*args: Any, **kwargs: Any) -> Any:
    """``httpx.main``: httpx's command-line client, imported on first call."""
    from httpx._main import main as cli

    return cli(*args, **kwargs)


def _import_httpx() -> None:
    if "httpx" in sys.modules or _CLI in sys.modules:
        return
    sys.modules[_CLI] = None  # type: ignore[assignment]  # a None entry: "import httpx._main" raises ImportError
    try:
        import httpx
    except ImportError:
        sys.modules.pop(_CLI, None)
        for name in [n for n in sys.modules if n == "httpx" or n.startswith("httpx.")]:
            del sys.modules[name]  # a half-imported httpx: imported again below, plainly
        import httpx

        return
    finally:
        if sys.modules.get(_CLI, 0) is None:
            del sys.modules[_CLI]
    httpx.main = main  # type: ignore[assignment]


_import_httpx()
