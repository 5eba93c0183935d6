"""run.py (the set-up and test driver at the project's root, not a package module) loaded for a test to read."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

RUN_PY = Path(__file__).resolve().parents[1] / "run.py"


@functools.cache
def run_py() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_py", RUN_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
