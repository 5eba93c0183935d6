"""Bad input ends in one clear line, before the first request: the option, where its value came from, what is
wrong; pytest's usage-error exit (4); no traceback. The `conformance` command likewise: one line, non-zero."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.cli._main import main
from tests._forked import forked_pytest
from tests.report.report_factory import build_report

# The run would go to this (closed) port: a usage error must come before any request.
PLATFORM = ["--platform-url", "https://127.0.0.1:9", "--suite", "platform"]
PEM_JUNK = "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n"

Setup = Callable[[Path], tuple[list[str], dict[str, str]]]


def _file(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


CASES: dict[str, tuple[Setup, str]] = {
    "login-steps malformed": (
        lambda t: (["--login-steps", str(_file(t, "steps.toml", "steps = [1]"))], {}),
        "login_steps from --login-steps: login step 1",
    ),
    "login-steps not TOML": (
        lambda t: (["--login-steps", str(_file(t, "steps.toml", "[[steps]\nname="))], {}),
        "login_steps from --login-steps: cannot read login steps",
    ),
    "login-steps missing": (lambda t: (["--login-steps", str(t / "nope.toml")], {}), "nope.toml does not exist"),
    "client-key not PEM": (
        lambda t: (["--client-key", str(_file(t, "key.pem", "hello"))], {}),
        "client_key from --client-key: ",
    ),
    "client-key missing (env)": (
        lambda t: ([], {"CONFORMANCE_CLIENT_KEY": str(t / "none.pem")}),
        "client_key from CONFORMANCE_CLIENT_KEY: ",
    ),
    "ca-bundle missing": (
        lambda t: (["--ca-bundle", str(t / "ca.pem")], {}),
        "ca_bundle from --ca-bundle: ",
    ),
    "ca-bundle not PEM": (
        lambda t: (["--ca-bundle", str(_file(t, "ca.pem", PEM_JUNK))], {}),
        "ca_bundle from --ca-bundle: ",
    ),
    "ca-bundle empty (config file)": (
        lambda t: (
            ["--conformance-config", str(_file(t, "c.toml", f'ca_bundle = "{t / "empty.pem"}"'))],
            {"_touch": str(t / "empty.pem")},
        ),
        "ca_bundle from ",
    ),
    "report-dir is a file": (
        lambda t: (["--report-dir", str(_file(t, "reports", "x"))], {}),
        "report_dir from --report-dir: ",
    ),
    "report-dir under a file": (
        lambda t: ([], {"CONFORMANCE_REPORT_DIR": str(_file(t, "f", "x") / "reports")}),
        "report_dir from CONFORMANCE_REPORT_DIR: ",
    ),
    "report-dir not writable": (lambda t: (["--report-dir", "/proc/conformance/reports"], {}), "is not writable"),
    "negative timeout": (lambda t: (["--connect-timeout", "-1"], {}), "connect_timeout from --connect-timeout: "),
    "zero timeout (env)": (lambda t: ([], {"CONFORMANCE_TOTAL_TIMEOUT": "0"}), "total_timeout from CONFORMANCE_"),
    "NaN timeout (ini)": (lambda t: (["-o", "conformance_read_timeout=nan"], {}), "ini conformance_read_timeout"),
    "non-numeric size": (lambda t: (["--max-response-bytes", "lots"], {}), "max_response_bytes from --max-"),
    "zero size": (lambda t: (["--max-response-bytes", "0"], {}), "max_response_bytes from --max-response-bytes"),
    "suite option out of range": (lambda t: (["--platform-rl-budget", "0"], {}), "platform_rl_budget from --"),
    "unknown login driver": (lambda t: (["--login-driver", "telepathy"], {}), "login_driver from --login-driver"),
    "baseline: unknown rule": (
        lambda t: (["--expected-failures", str(_file(t, "b.toml", 'expected_failures = ["CAMP-99"]'))], {}),
        "unknown rule ID 'CAMP-99'",
    ),
    "baseline: unknown target": (
        lambda t: (
            ["--expected-failures", str(_file(t, "b.toml", '[[expected]]\nrule = "CAMP-14"\ntarget = "platfrom"'))],
            {},
        ),
        "[[expected]] entry 1 (rule 'CAMP-14'): unknown target 'platfrom'",
    ),
    "baseline: key typo": (
        lambda t: (
            ["--expected-failures", str(_file(t, "b.toml", '[[expected]]\nrule = "CAMP-14"\ntargte = "platform"'))],
            {},
        ),
        "unknown key(s) ['targte']",
    ),
    "baseline: target of another suite": (
        lambda t: (
            ["--expected-failures", str(_file(t, "b.toml", '[[expected]]\nrule = "CAMP-14"\ntarget = "compression"'))],
            {},
        ),
        "CAMP-14 is judged on target 'platform'",
    ),
    "baseline missing": (
        lambda t: (["--expected-failures", str(t / "baseline.toml")], {}),
        "expected_failures from --expected-failures: ",
    ),
}


# Cases run by a real ``python -m pytest`` (the exit status and the whole output of a fresh interpreter, imports
# included); the others by a forked run (tests/_forked.py), which shows the same line and exit code of pytest.main.
REAL_PROCESS = ("negative timeout", "client-key missing (env)", "baseline: unknown rule")


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_and_a_usage_error(case: str, tmp_path: Path) -> None:
    setup, words = CASES[case]
    args, env = setup(tmp_path)
    if "_touch" in env:
        Path(env.pop("_touch")).touch()
    if case in REAL_PROCESS:
        merged = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *PLATFORM, *args]
        done = subprocess.run(
            command, capture_output=True, text=True, env={**merged, **env}, cwd=tmp_path, timeout=120, check=False
        )
        code, output = done.returncode, done.stdout + done.stderr
    else:
        forked = forked_pytest([*PLATFORM, *args], tmp_path, env=env, timeout=120)
        code, output = forked.exit_code, forked.output
    assert code == 4, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ERROR: conformance: "), output
    assert words in lines[0], lines[0]
    assert "Traceback" not in output
    assert not (tmp_path / "report.json").exists() and not (tmp_path / "reports" / "report.json").exists()


# -- the `conformance` command ---------------------------------------------------------------------------------


def _conformance(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`conformance ARGS` in a fresh process after ``code`` ran (it simulates a broken installation)."""
    script = f"import sys\n{code}\nfrom conformance.cli._main import main\nsys.exit(main({list(args)!r}))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)


BLOCK_BPE = "sys.modules['bpe_openai'] = None  # as if installed without the reference extra"


@pytest.mark.parametrize("args", [("demo", "--suite", "platform"), ("up",)])
def test_without_the_reference_extra_the_stack_is_one_clear_line(args: tuple[str, ...]) -> None:
    done = _conformance(BLOCK_BPE, *args)
    assert done.returncode != 0
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "the embedded stack needs the reference extra: pip install 'conformance[reference]'" in lines[0]


def test_an_npm_failure_is_one_line_with_the_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.reference import idp

    monkeypatch.setattr(idp, "is_installed", lambda: False)
    failing = [sys.executable, "-c", "import sys; print('npm ERR! registry unreachable'); sys.exit(1)"]
    monkeypatch.setattr(idp, "_npm_command", lambda node: failing)
    assert main(["demo", "--suite", "auth"]) == 2
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1 and "npm ci failed" in lines[0], lines
    log = Path(lines[0].rsplit("log: ", 1)[1])
    try:
        assert "registry unreachable" in log.read_text()
    finally:
        log.unlink()


def test_a_service_that_dies_at_start_up_is_one_line_with_the_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.reference import stack
    from conformance.reference._service import ServiceSpec

    crasher = ServiceSpec(
        "crasher", [sys.executable, "-c", "print('cannot bind'); raise SystemExit(3)"], "https://127.0.0.1:9/h"
    )
    monkeypatch.setattr(stack, "collect_specs", lambda ctx, packages: [crasher])
    assert main(["up"]) == 2
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1 and "service crasher exited with 3 while starting" in lines[0], lines
    log = Path(lines[0].rsplit("its log: ", 1)[1])
    try:
        assert "cannot bind" in log.read_text()
    finally:
        log.unlink()


def test_report_into_a_directory_writes_report_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "in.json"
    report.write_text(json.dumps(build_report(3)))
    out = tmp_path / "out"
    out.mkdir()
    assert main(["report", str(report), "-o", str(out)]) == 0
    assert (out / "report.html").is_file()
    assert main(["report", str(report), "-o", str(tmp_path / "new") + "/"]) == 0
    assert (tmp_path / "new" / "report.html").is_file()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["report", str(report), "-o", str(blocker / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err


def test_demo_with_a_report_dir_under_a_file_stops_before_the_stack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["demo", "--suite", "platform", "--report-dir", str(blocker / "reports")]) == 2
    err = capsys.readouterr().err
    assert "report_dir from --report-dir:" in err and "which is a file" in err and len(err.strip().splitlines()) == 1


def test_up_with_an_env_file_under_a_file_stops_before_the_stack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["up", "--env-file", str(blocker / "stack.env")]) == 2
    err = capsys.readouterr().err
    assert "--env-file" in err and "cannot write" in err and len(err.strip().splitlines()) == 1
