from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    """One `conformance demo` of every suite against the embedded reference stack, shared by the tests that need a
    real full run (exit code, report directory, console output)."""
    report_dir = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    completed = subprocess.run(
        [sys.executable, "-m", "conformance", "demo", "--report-dir", str(report_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    return completed.returncode, report_dir, completed.stdout + completed.stderr
