"""A pytest plugin for the benchmarks (``-p _as_installed`` with benchmarks/ on PYTHONPATH): marks the
``conformance`` package for assertion rewriting, as pytest marks it when the harness is installed from a wheel (an
editable install, as in .venv, is not marked), so that a benchmark sees what an installed harness's run costs."""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("conformance")
