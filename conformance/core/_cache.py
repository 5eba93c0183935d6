"""The per-user cache directory, where what a run would otherwise rebuild each time is kept: Hypothesis'
storage, the HTML report's compiled templates, the IdP's Node compile cache. A leaf: imports nothing of the package."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/conformance``, else ``~/.cache/conformance``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "conformance"
