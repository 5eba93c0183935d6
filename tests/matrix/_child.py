"""The body of a forked harness run (see harness.py). Imports nothing of the project itself: the fork server has
preloaded it (_preload.py), and pytest loads and registers the plugin in every run, as in ``python -m pytest``."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Mapping, Sequence


def run_pytest(args: Sequence[str], env: Mapping[str, str], cwd: str, output: str) -> None:
    """``pytest ARGS`` in this (freshly forked) process: cwd, environment and both output streams are the run's."""
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115 - lives until exit
    sys.stderr = sys.stdout
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    code = 3  # pytest's "internal error", should pytest itself raise
    try:
        import pytest

        code = int(pytest.main(list(args)))
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        os._exit(code)  # skip the fork server's inherited clean-up: this process is only the run
