"""``conformance.host`` is a pytest-free core: importing it, or any of its modules, loads no pytest and
nothing of the harness's pytest face (verdicts, suites, report, reference stack, plugin)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import conformance.host

HOST = Path(conformance.host.__file__).parent
FORBIDDEN = ("pytest", "_pytest", "conformance.verdict._verdicts", "conformance.pytest.plugin")
FORBIDDEN_PACKAGES = ("conformance.suites", "conformance.report", "conformance.reference")


def _modules_after(code: str) -> list[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def _offending(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m in FORBIDDEN
        or m.split(".")[0] in FORBIDDEN
        or m.startswith(tuple(p + "." for p in FORBIDDEN_PACKAGES))
        or m in FORBIDDEN_PACKAGES
    ]


def test_import_conformance_host_loads_no_pytest() -> None:
    modules = _modules_after("import conformance.host")
    assert "conformance.host" in modules
    assert _offending(modules) == []


def test_every_host_module_and_public_name_loads_no_pytest() -> None:
    names = sorted(
        "conformance.host." + ".".join(p.relative_to(HOST).with_suffix("").parts).removesuffix(".__init__")
        for p in HOST.rglob("*.py")
    )
    code = "\n".join(f"import {n}" for n in names)
    code += "\nimport conformance.host as h\nfor n in h.__all__: getattr(h, n)"
    modules = _modules_after(code)
    assert "conformance.host.login.browser" in modules and "conformance.host.mcp" in modules
    assert _offending(modules) == []
