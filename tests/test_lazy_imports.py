"""A run imports only what its checks need (each of these imports is costly: docs/performance.md). A compression or
platform run never loads the ``mcp`` SDK, and a run without a Hypothesis-backed check never loads Hypothesis (its
end-of-run summary hook).

Each case reads a fresh ``pytest --collect-only`` process (collection imports every selected suite module; the end
of the run calls the summary hooks; the cases judging one configuration share its run) with a probe plugin that
lists, at ``pytest_unconfigure``, which of the watched modules were loaded. The tool-server and platform cases are
the controls: the probe sees those modules when they are loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WATCHED = (
    "mcp",
    "conformance.host.mcp",
    "hypothesis",
    "jsonschema",
    "conformance.judges.auth",
    "boto3",
    "botocore",
    "http.server",
    "jinja2",
)
PROBE = f"""
import json, os, sys

def pytest_unconfigure(config):
    loaders = {{n: type(getattr(m, "__loader__", None)).__name__ for n, m in list(sys.modules.items())}}
    suites = sorted(n for n, m in list(sys.modules.items()) if os.path.basename(getattr(m, "__file__", None) or "")
                    .startswith("test_") and "suites" in (getattr(m, "__file__", None) or ""))
    with open(os.environ["PROBE_OUT"], "w", encoding="utf-8") as out:
        json.dump({{
            "loaded": [m for m in {WATCHED!r} if m in sys.modules],
            "hypothesis": loaders.get("hypothesis.core"),
            "suites": {{n: loaders[n] for n in suites}},
        }}, out)
"""
UNREACHABLE = "https://127.0.0.1:1"


def probed_run(tmp_path: Path, *args: str, collect_only: bool = True) -> dict[str, Any]:
    """What the probe saw at the end of a fresh ``pytest --collect-only ARGS`` (``collect_only``; else a whole run)
    in ``tmp_path``: the watched modules that were loaded (``loaded``), the loader of Hypothesis' core and of each
    suite check module."""
    (tmp_path / "_lazy_probe.py").write_text(PROBE)
    out = tmp_path / "loaded.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    env.update(PYTHONPATH=str(tmp_path), PROBE_OUT=str(out))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_lazy_probe", "-q"]
    command += ["--collect-only"] if collect_only else []
    command += ["--report-dir", str(tmp_path / "report"), *args]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    if collect_only:
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        assert "collected" in run.stdout
    else:  # the checks meet a target that does not answer: the run ends with its summary and reports all the same
        assert "verdict:" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    found: dict[str, Any] = json.loads(out.read_text())
    return found


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict[str, Any]]:
    """``probed_run`` with these arguments, each distinct argument list run once for the module: several tests judge
    one run (the compression run's three, the platform run's three), each reading what it asserts on."""
    runs: dict[tuple[str, ...], dict[str, Any]] = {}

    def collect(*args: str) -> dict[str, Any]:
        if args not in runs:
            runs[args] = probed_run(tmp_path_factory.mktemp("collect"), *args)
        return runs[args]

    return collect


@pytest.mark.parametrize(
    ("suite", "option"), [("compression", "--compression-url"), ("platform", "--platform-url")], ids=str
)
def test_a_run_without_a_tool_server_never_imports_the_mcp_sdk(
    collected: Callable[..., dict[str, Any]], suite: str, option: str
) -> None:
    loaded = collected("--suite", suite, option, UNREACHABLE)["loaded"]
    assert "mcp" not in loaded and "conformance.host.mcp" not in loaded


def test_a_run_without_property_checks_never_imports_hypothesis(collected: Callable[..., dict[str, Any]]) -> None:
    loaded = collected("--suite", "compression", "--compression-url", UNREACHABLE)["loaded"]
    assert "hypothesis" not in loaded and "hypothesis" in WATCHED


def test_a_compression_run_loads_neither_an_s3_client_nor_the_image_server_to_collect(
    collected: Callable[..., dict[str, Any]],
) -> None:
    """botocore's signer loads when a store is read back (test_reading_the_s3_store_back_...), http.server when
    a loopback target gets the image server it fetches from: a remote target's run never starts one."""
    loaded = collected("--suite", "compression", "--compression-url", UNREACHABLE)["loaded"]
    assert not {"boto3", "botocore", "http.server"} & set(loaded)


def test_a_platform_run_loads_only_its_own_validators(collected: Callable[..., dict[str, Any]]) -> None:
    """Its checks import ``conformance.judges.platform``; the package loads the other judge modules (the auth
    ones: jsonschema, PyJWT, cryptography.x509) only when one of their names is used. The compression
    case is in the test above; the control (an auth run loads them) in the next one."""
    loaded = collected("--suite", "platform,campaigns", "--platform-url", UNREACHABLE)["loaded"]
    assert "jsonschema" not in loaded and "conformance.judges.auth" not in loaded


@pytest.mark.parametrize(("formats", "templates"), [("json,har", False), ("json,html", True)], ids=str)
def test_only_a_run_that_writes_the_html_report_imports_its_templates(
    tmp_path: Path, formats: str, templates: bool
) -> None:
    """The console summary's words come from the report model, not the HTML writer: jinja2 loads only for report.html
    (a whole run against a target that does not answer: every check ends, the summary is printed)."""
    args = ("--suite", "compression", "--compression-url", UNREACHABLE, "--report-formats", formats)
    found = probed_run(tmp_path, *args, "-k", "test_counting", collect_only=False)
    assert ("jinja2" in found["loaded"]) is templates
    assert (tmp_path / "report" / "report.html").is_file() is templates


def test_the_probe_sees_the_sdk_and_hypothesis_when_a_suite_needs_them(
    collected: Callable[..., dict[str, Any]],
) -> None:
    # An auth run's collection loads the raw probes, not the SDK (its first check that lists tools does).
    auth = collected("--suite", "auth", "--target-url", UNREACHABLE)["loaded"]
    assert {"conformance.host.mcp", "jsonschema", "conformance.judges.auth"} <= set(auth)
    sdk = collected("-p", "conformance.host.mcp_session", "--suite", "compression", "--compression-url", UNREACHABLE)
    assert "mcp" in sdk["loaded"]
    assert "hypothesis" in collected("--suite", "platform", "--platform-url", UNREACHABLE)["loaded"]


def test_hypothesis_statistics_asked_for_are_still_printed(tmp_path: Path) -> None:
    """The summary hook is kept when it has something to say: here, the statistics section of a plain run."""
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--hypothesis-show-statistics"]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "Hypothesis Statistics" in run.stdout


def test_hypothesis_is_imported_compiled_and_the_checks_still_rewritten(
    collected: Callable[..., dict[str, Any]],
) -> None:
    """pytest would rewrite the asserts of all of Hypothesis (it ships a pytest plugin), a large cost in every run
    without bytecode caches. Hypothesis is loaded as compiled; the suites' check modules keep their rewritten
    asserts."""
    loaded = collected("--suite", "platform", "--platform-url", UNREACHABLE)
    assert loaded["hypothesis"] == "SourceFileLoader"
    assert loaded["suites"] and set(loaded["suites"].values()) == {"AssertionRewritingHook"}, loaded["suites"]


HOSTED_RUN = """
pytest_plugins = ["pytester"]


def test_in_process_run(pytester):
    import hypothesis  # noqa: F401 - the hosting session has imported it, as the project's own tests do
    pytester.makepyfile(test_x="def test_x(): pass")
    result = pytester.runpytest("-p", "no:cacheprovider", "--target-url", "https://127.0.0.1:1/mcp", "test_x.py")
    assert "cannot be rewritten" not in result.stdout.str()
"""


def test_a_session_hosting_in_process_runs_keeps_hypothesis_rewritten(pytester: pytest.Pytester) -> None:
    """Only a certifying run imports Hypothesis compiled: in a session that is not one (the project's own tests),
    an in-process certifying run would otherwise warn "Module already imported so cannot be rewritten;
    hypothesis", an extra outcome in its summary."""
    pytester.makepyfile(test_host=HOSTED_RUN)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_host.py")
    result.assert_outcomes(passed=1)


PARSE_PROBE = """
import contextlib, io, json, sys
from conformance.cli._main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps([code, "conformance.judges" in sys.modules]))
"""


@pytest.mark.parametrize(
    ("argv", "imported"), [(["demo", "--report-dir", "/proc/nope"], False), (["validate", "--kind", "x", "f"], True)]
)
def test_only_the_validate_command_imports_the_validators(tmp_path: Path, argv: list[str], imported: bool) -> None:
    """Every other command starts without importing every validator for ``validate``'s options (here ``demo``,
    refusing an unwritable report directory before its stack starts: exit 2); ``validate`` still has them (its
    ``--kind`` choices refuse an unknown kind: exit 2)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    run = subprocess.run(
        [sys.executable, "-c", PARSE_PROBE, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    if imported:
        assert run.returncode == 2 and "invalid choice: 'x'" in run.stderr, run.stderr[-2000:]
        return
    assert json.loads(run.stdout.splitlines()[-1]) == [2, False], run.stderr[-2000:]
    assert "is not writable" in run.stderr


SDK_PROBE = """
import json, sys
pre = sys.argv[1]
if pre == "sdk-first":
    import mcp.server.lowlevel  # the SDK imported whole before the host's session (the plain import path)
import conformance.host.mcp_session as session
lean = sorted(m for m in ("mcp.server", "mcp.client.client", "starlette", "uvicorn") if m in sys.modules)
import mcp
from mcp import ClientSession, Client
from mcp.client import ClientSession as FromClient
import mcp.server.lowlevel
print(json.dumps({
    "lean": lean,
    "same": ClientSession is FromClient is session.ClientSession is mcp.client.session.ClientSession,
    "complete": callable(Client) and hasattr(mcp, "stdio_server") and "__getattr__" not in vars(mcp),
    "all": sorted(set(mcp.__all__) - set(dir(mcp))),
}))
"""


@pytest.mark.parametrize("pre", ["fresh", "sdk-first"])
def test_the_host_session_loads_the_sdk_client_without_its_server_side(tmp_path: Path, pre: str) -> None:
    """Importing the host's SDK session skips the ``mcp`` and ``mcp.client`` package ``__init__`` modules (their
    re-exports import the SDK's server side: starlette, uvicorn, the MCPServer framework, a costly import); the first
    name asked of the package runs its ``__init__``, so the rest of the process sees the whole SDK as before. With
    the SDK already imported (the control), the session imports it plainly."""
    run = subprocess.run(
        [sys.executable, "-c", SDK_PROBE, pre], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout.splitlines()[-1])
    lean = [] if pre == "fresh" else ["mcp.client.client", "mcp.server", "starlette", "uvicorn"]
    assert found == {"lean": lean, "same": True, "complete": True, "all": []}


def test_a_package_init_that_does_more_than_re_export_is_imported_plainly() -> None:
    """The guard reads each package ``__init__``: imports, a docstring and ``__all__`` may be run later; anything
    else (a call, a definition, a conditional) might be a side effect the client relies on, so the SDK is imported
    the plain way."""
    from conformance.core._shortcuts import _only_reexports

    assert _only_reexports('"""doc"""\nfrom a import b\nimport c as d\n__all__ = ["b"]\n')
    for extra in ("logging.basicConfig()", "def f(): pass", "if X:\n    import e", "x = 1", "__all__ += ['x']"):
        assert not _only_reexports(f"from a import b\n{extra}\n"), extra


HTTPX_PROBE = """
import json, sys
if sys.argv[1] == "plugin":
    import conformance.pytest.plugin
import httpx
loaded = sorted(m for m in ("httpx._main", "click") if m in sys.modules)
sys.argv = ["httpx", "--help"]
try:
    httpx.main()
except SystemExit as exc:
    print(json.dumps([loaded, exc.code, "httpx._main" in sys.modules]))
"""


@pytest.mark.parametrize("first", ["plugin", "httpx"])
def test_the_plugin_imports_httpx_without_its_command_line_client(tmp_path: Path, first: str) -> None:
    """httpx's ``__init__`` imports its command-line client (click, pygments' lexers, rich's progress: a cost on
    every run) to bind ``httpx.main``; the plugin imports httpx without it, and ``httpx.main`` still runs the real
    client, imported when called. The control imports httpx alone: the client is loaded as usual."""
    run = subprocess.run(
        [sys.executable, "-c", HTTPX_PROBE, first], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert "Usage: httpx" in run.stdout, run.stderr[-2000:]
    loaded, code, cli_loaded = json.loads(run.stdout.splitlines()[-1])
    assert (loaded, code, cli_loaded) == (([] if first == "plugin" else ["click", "httpx._main"]), 0, True)


S3_READ_PROBE = """
import json, sys
import httpx
from conformance.config import Settings
from conformance.host import HostHTTP, Redactor
from conformance.suites.compression.client import S3Store

values = {"objstore_a_bucket": "b", "objstore_a_access_key_id": "AKID", "objstore_a_secret_access_key": "s3cr3t"}
settings = Settings(values)
http = HostHTTP(transport=httpx.MockTransport(lambda r: httpx.Response(404)), retry=None, redactor=Redactor())
store = S3Store.from_settings(settings, http)
before = sorted(m for m in ("boto3", "botocore") if m in sys.modules)
found = store.get("k.jpg")
after = sorted(m for m in ("boto3", "botocore.session", "botocore.auth") if m in sys.modules)
print(json.dumps([before, found is None, after]))
"""


def test_reading_the_s3_store_back_signs_with_botocore_without_a_boto3_client(tmp_path: Path) -> None:
    """The harness reads objstore_a back with botocore's SigV4 signer over its own client: neither boto3 nor a
    botocore session (a boto3 S3 client is costly to build: the session and S3's service model), and botocore's
    signer only when a store is read, not when the suite is collected."""
    run = subprocess.run(
        [sys.executable, "-c", S3_READ_PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.splitlines()[-1]) == [[], True, ["botocore.auth"]]


INSTALLED_PROBE = """
import json, os, sys

def pytest_unconfigure(config):
    try:
        from _pytest.config import _plugin_rewrite_name
    except ImportError:  # an older pytest: what it marks is not asked
        _plugin_rewrite_name = lambda name: None
    names = ("conformance.pytest.plugin", "conformance.host.http", "conformance.config", "conformance.suites.fixtures",
             "conformance.suites.compression.conftest", "conformance.suites.compression.test_store")
    loaders = {n: type(getattr(sys.modules.get(n), "__loader__", None)).__name__ for n in names}
    marked = _plugin_rewrite_name("conformance.pytest.plugin")  # what pytest marks for an installed (wheel) harness
    with open(os.environ["PROBE_OUT"], "w", encoding="utf-8") as out:
        json.dump({"marked": marked, "loaders": loaders}, out)
"""


def test_an_installed_harness_is_imported_compiled_and_its_checks_rewritten(tmp_path: Path) -> None:
    """Installed from a wheel, the package is marked for assertion rewriting as a whole (it ships a pytest plugin):
    a cost in every run without a bytecode cache, before the first check. Here the package is found on sys.path
    (PYTHONPATH), as an installed one is, so pytest marks it: its modules still load compiled, as the editable
    install the project's tests use loads them; the checks and their fixtures keep their rewritten asserts."""
    import conformance

    (tmp_path / "_installed_probe.py").write_text(INSTALLED_PROBE)
    out = tmp_path / "loaded.json"
    root = Path(conformance.__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(root), str(tmp_path)]), PROBE_OUT=str(out))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "_installed_probe", "--collect-only"]
    command += ["-q", "--report-dir", str(tmp_path / "report"), "--suite", "compression", "--compression-url"]
    run = subprocess.run([*command, UNREACHABLE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    found = json.loads(out.read_text())
    assert found["marked"] in ("conformance", None)
    rewritten = "AssertionRewritingHook"
    assert found["loaders"] == {
        "conformance.pytest.plugin": "SourceFileLoader",
        "conformance.host.http": "SourceFileLoader",
        "conformance.config": "SourceFileLoader",
        "conformance.suites.fixtures": rewritten,
        "conformance.suites.compression.conftest": rewritten,
        "conformance.suites.compression.test_store": rewritten,
    }
