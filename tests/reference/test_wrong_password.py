"""A wrong test password: the run is INCOMPLETE (the configuration, not the target, stopped the login), and
AUTH-FLOW-01's result holds the login exchanges that show why, even when the shared linking fixture ran while another
check was set up."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conformance.cli._main import main
from conformance.host.login import BrowserDriver, browser_available
from conformance.reference.stack import Stack
from tests._forked import forked_harness
from tests.reference.conftest import register_predefined_client


def test_a_wrong_password_is_incomplete_with_the_login_as_evidence(auth_stack: Stack, tmp_path: Path) -> None:
    env = {**auth_stack.settings, "CONFORMANCE_TEST_PASSWORD": "not-the-password-of-alice"}
    # AUTH-CIMD-01 runs first and sets the linking fixtures up: the login exchanges are recorded there.
    result = forked_harness(["--suite", "auth", "-k", "cimd or code_comes_back"], tmp_path, env=env, timeout=300)
    flow = next(r for r in result.report["results"] if r["rule"] == "AUTH-FLOW-01")
    assert flow["status"] == "skipped" and flow["incomplete"], flow
    assert result.report["verdict"]["status"] == "INCOMPLETE", result.report["verdict"]
    posts = [e for e in flow["evidence"] if e["method"] == "POST" and e["url"].startswith("https://127.0.0.1")]
    logins = [e for e in posts if "login" in (e["request_body"] or "") or "/interaction/" in e["url"]]
    assert logins, [(e["method"], e["url"]) for e in flow["evidence"]]
    text = (tmp_path / "report.json").read_text()
    assert "not-the-password-of-alice" not in text


def _doctor(
    settings: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, password: str | None = None
) -> int:
    for name in [n for n in os.environ if n.startswith("CONFORMANCE_")]:
        monkeypatch.delenv(name)
    for name, value in {**settings, **({"CONFORMANCE_TEST_PASSWORD": password} if password else {})}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return main(["doctor", "--suite", "auth"])


def test_doctor_logs_the_test_account_in(
    auth_stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _doctor(auth_stack.settings, tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ok      tool_server: the test account logged in" in out, out


def test_doctor_says_in_one_line_that_a_wrong_password_does_not_log_in(
    auth_stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = "not-the-password-of-alice"
    code = _doctor(auth_stack.settings, tmp_path, monkeypatch, wrong)
    captured = capsys.readouterr()
    problems = [line for line in captured.out.splitlines() if line.startswith("PROBLEM")]
    assert code == 1 and len(problems) == 1, captured.out
    assert problems[0].startswith("PROBLEM tool_server: the test account could not log in: "), problems
    assert wrong not in captured.out + captured.err


def test_doctor_logs_in_with_a_predefined_client_too(
    auth_stack: Stack,
    issuer: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No CIMD probe for a predefined client: the login probe's authorization request names the client_id, with
    the redirect URI the vendor registered for the harness."""
    client_id = register_predefined_client(auth_stack, issuer)
    predefined = {
        "CONFORMANCE_CLIENT_REGISTRATION": "predefined",
        "CONFORMANCE_CLIENT_ID": client_id,
    }
    code = _doctor({**auth_stack.settings, **predefined}, tmp_path, monkeypatch, "not-the-password-of-alice")
    out = capsys.readouterr().out
    assert code == 1 and "PROBLEM tool_server: the test account could not log in: " in out, out
    assert "fetched the probe document" not in out  # no CIMD here: the login probe ran on its own


# -- the same probe through the browser driver (headless Chromium, Playwright) ----------------------------------

BROWSER = {"CONFORMANCE_LOGIN_DRIVER": "browser"}


def _count_browser_logins(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The authorization URLs the browser driver was given: proof the probe ran in Chromium, not in the form driver."""
    seen: list[str] = []
    original = BrowserDriver.login

    def login(self: BrowserDriver, authorization_url: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(authorization_url)
        return original(self, authorization_url, *args, **kwargs)

    monkeypatch.setattr(BrowserDriver, "login", login)
    return seen


def test_doctor_logs_the_test_account_in_with_the_browser_driver(
    auth_stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if why := browser_available():  # asked when the test runs: asking imports Playwright
        pytest.skip(why)
    logins = _count_browser_logins(monkeypatch)
    code = _doctor({**auth_stack.settings, **BROWSER}, tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(logins) == 1, logins
    assert "ok      tool_server: the test account logged in" in out, out


def test_doctor_says_a_wrong_password_does_not_log_in_with_the_browser_driver(
    auth_stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if why := browser_available():  # asked when the test runs: asking imports Playwright
        pytest.skip(why)
    wrong = "not-the-password-of-alice"
    logins = _count_browser_logins(monkeypatch)
    code = _doctor({**auth_stack.settings, **BROWSER}, tmp_path, monkeypatch, wrong)
    captured = capsys.readouterr()
    assert len(logins) == 1, logins
    problems = [line for line in captured.out.splitlines() if line.startswith("PROBLEM")]
    assert code == 1 and len(problems) == 1, captured.out
    assert problems[0].startswith("PROBLEM tool_server: the test account could not log in: "), problems
    assert wrong not in captured.out + captured.err
