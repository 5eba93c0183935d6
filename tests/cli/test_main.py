"""The `conformance` command: rules, report re-rendering, CIMD export, clean errors."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli._main import main
from conformance.core.rules import RULES
from conformance.report.model import CheckOutcome, RunReport, Status


def test_rules_json_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["id"] for row in rows} == set(RULES)
    assert all({"id", "level", "suite", "title", "source", "implemented", "mutants", "cases"} <= set(r) for r in rows)
    cases = {row["id"]: row["cases"] for row in rows}
    assert cases["AUTH-TOK-04"] >= 10 and cases["AUTH-TOK-01"] is None  # an attack table; a positive control
    assert cases["AUTH-FLOW-04"] == 6  # three ways without a code_challenge, for a public and a confidential client


def test_rules_table_filters_by_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--suite", "compression"]) == 0
    out = capsys.readouterr().out
    assert "IMG-AUTH-01" in out and "AUTH-PRM-01" not in out


def test_cimd_export_keeps_the_private_key_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    public = tmp_path / "public"
    key = tmp_path / "host-key.pem"
    code = main(["cimd", "export", str(public), "--base-url", "https://host.example", "--private-key-out", str(key)])
    assert code == 0
    document = json.loads((public / "oauth" / "client.json").read_text())
    assert document["client_id"] == "https://host.example/oauth/client.json"
    jwks = json.loads((public / "oauth" / "jwks.json").read_text())
    assert all("d" not in k for k in jwks["keys"])  # public halves only
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert "PRIVATE KEY" not in capsys.readouterr().out


def test_cimd_export_refuses_key_inside_public_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["cimd", "export", str(tmp_path), "--base-url", "https://h.example", "--private-key-out", str(tmp_path / "k")]
    )
    assert code == 2
    assert "must not be written inside the public directory" in capsys.readouterr().err


def test_report_rerender_of_a_bad_file_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "report.json"
    bad.write_text("{not json")
    assert main(["report", str(bad), "-o", str(tmp_path / "out.html")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["[]", "null", '"report"', '{"summary": {}}', '{"results": {}}'])
def test_report_rerender_of_json_that_is_no_report_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    bad = tmp_path / "report.json"
    bad.write_text(content)
    assert main(["report", str(bad), "-o", str(tmp_path / "out.html")]) == 2
    assert "is not a conformance report" in capsys.readouterr().err
    assert not (tmp_path / "out.html").exists()


@pytest.mark.parametrize("command", ["up", "demo"])
def test_unknown_mutant_is_a_clean_error_before_anything_starts(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--mutant", "no-such-mutant"]) == 2
    assert "unknown mutant(s) no-such-mutant" in capsys.readouterr().err


def test_rules_of_an_unknown_suite_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--suite", "auth,nope"]) == 2
    assert "unknown suite(s) nope" in capsys.readouterr().err


UP_SETTINGS = {
    "CONFORMANCE_TARGET_URL": "https://127.0.0.1:4443/mcp",
    "CONFORMANCE_TEST_USER": "alice-up-user",
    "CONFORMANCE_TEST_PASSWORD": "up-password-7f3a9c",
    "CONFORMANCE_COMPRESSION_API_KEY": "up-compression-key-1b2d",
    "CONFORMANCE_OBJSTORE_A_SECRET_ACCESS_KEY": "up-objstore-secret-9e8d",
}


@pytest.mark.parametrize("explicit", [False, True], ids=["default-env-file", "env-file"])
def test_up_prints_no_secret_and_writes_them_to_a_private_env_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    import contextlib
    import signal

    from conformance.cli import _main as cli
    from conformance.reference.stack import Stack

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    stack = Stack(settings=dict(UP_SETTINGS), ca_file=data_dir / "ca.pem", services=[], data_dir=data_dir)
    monkeypatch.setattr(cli, "_stack", lambda *a, **k: contextlib.nullcontext(stack))
    monkeypatch.setattr(signal, "signal", lambda sig, handler: handler())  # "SIGTERM" at once: up returns
    env_file = tmp_path / "given.env"
    if explicit:
        env_file.write_text("OLD=1\n")
        env_file.chmod(0o644)  # an existing, world-readable file
    assert main(["up", "--env-file", str(env_file)] if explicit else ["up"]) == 0
    out = capsys.readouterr().out
    secrets = [v for k, v in UP_SETTINGS.items() if k != "CONFORMANCE_TARGET_URL"]
    assert not [s for s in secrets if s in out], out
    assert "CONFORMANCE_TARGET_URL=https://127.0.0.1:4443/mcp" in out
    written = env_file if explicit else data_dir / "stack.env"
    assert f"secrets included: {written}" in out
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert set(written.read_text().splitlines()) == {f"{k}={v}" for k, v in UP_SETTINGS.items()}


def test_env_file_is_never_readable_by_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Created 0600 (not chmodded after the secrets are in it); an existing file is narrowed before writing."""
    import os

    from conformance.reference.stack import Stack

    stack = Stack(settings=dict(UP_SETTINGS), ca_file=tmp_path / "ca.pem", services=[], data_dir=tmp_path)
    modes: list[int] = []
    real_open = os.open

    def spying_open(path: str, flags: int, mode: int = 0o777, *args: object) -> int:
        modes.append(mode)
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", spying_open)
    fresh = tmp_path / "fresh.env"
    stack.write_env_file(fresh)
    assert modes == [0o600] and stat.S_IMODE(fresh.stat().st_mode) == 0o600
    existing = tmp_path / "existing.env"
    existing.write_text("x")
    existing.chmod(0o644)
    stack.write_env_file(existing)
    assert stat.S_IMODE(existing.stat().st_mode) == 0o600


READ_ONLY_COMMANDS = """
import sys
from conformance.cli._main import main

report, out = sys.argv[1], sys.argv[2]
codes = [main(["report", report, "-o", out]), main(["summary", report]), main(["diff", report, report])]
loaded = sorted(m for m in sys.modules if m == "pytest" or m.startswith(("_pytest", "pytest.")))
print(codes, loaded)
"""


def test_commands_that_read_reports_import_no_pytest(tmp_path: Path) -> None:
    """``conformance report`` (and summary, diff) only read and render: pytest stays out of the process."""
    outcome = CheckOutcome("t::x", ("AUTH-PRM-01",), Status.FAILED, "no PRM <script>")
    report = RunReport.build([outcome], strict=False, suites_run=["auth"], implemented=(), targets={})
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.to_json()))
    done = subprocess.run(
        [sys.executable, "-c", READ_ONLY_COMMANDS, str(path), str(tmp_path / "out.html")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.splitlines()[-1] == "[0, 0, 0] []", done.stdout + done.stderr
    assert "AUTH-PRM-01" in (tmp_path / "out.html").read_text(encoding="utf-8")


def test_rules_into_a_closed_pipe_ends_quietly() -> None:
    """``conformance rules --json | head -c 10``: the reader goes away; no traceback, as a Unix filter."""
    done = subprocess.run(
        f"{sys.executable} -m conformance rules --json | head -c 10 >/dev/null; echo ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.stdout.strip() == "141"


def test_init_refuses_a_url_a_run_would_refuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--dir", str(tmp_path / "cfg"), "--target-url", "ftp://x", "--ci", "none"]) == 2
    assert "--target-url" in capsys.readouterr().err
    assert not (tmp_path / "cfg").exists()


def test_cimd_export_without_a_key_names_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cimd", "export", str(tmp_path / "public"), "--base-url", "https://h.example"]) == 2
    err = capsys.readouterr().err
    assert "--private-key-out" in err and "private_key_path" not in err
    assert not (tmp_path / "public").exists()


def test_report_and_merge_under_a_regular_file_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcome = CheckOutcome("t::x", ("AUTH-PRM-01",), Status.PASSED, "")
    report = RunReport.build([outcome], strict=False, suites_run=["auth"], implemented=(), targets={})
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.to_json()))
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    assert main(["report", str(path), "-o", str(blocker / "out.html")]) == 2
    assert f"{blocker} is a file, not a folder" in capsys.readouterr().err
    assert main(["merge", str(path), "-o", str(blocker / "merged.json")]) == 2
    err = capsys.readouterr().err
    assert f"{blocker} is a file, not a folder" in err and "File exists" not in err
