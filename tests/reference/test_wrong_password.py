"""A wrong test password: the run is INCOMPLETE (the configuration, not the target, stopped the login), and
AUTH-FLOW-01's result holds the login exchanges that show why, even when the shared linking fixture ran while another
check was set up."""

from __future__ import annotations

from pathlib import Path

from conformance.reference.stack import Stack
from conformance.testing import run_harness


def test_a_wrong_password_is_incomplete_with_the_login_as_evidence(auth_stack: Stack, tmp_path: Path) -> None:
    env = {**auth_stack.settings, "CONFORMANCE_TEST_PASSWORD": "not-the-password-of-alice"}
    # AUTH-CIMD-01 runs first and sets the linking fixtures up: the login exchanges are recorded there.
    result = run_harness(["--suite", "auth", "-k", "cimd or code_comes_back"], tmp_path, env=env, timeout=300)
    flow = next(r for r in result.report["results"] if r["rule"] == "AUTH-FLOW-01")
    assert flow["status"] == "skipped" and flow["incomplete"], flow
    assert result.report["verdict"]["status"] == "INCOMPLETE", result.report["verdict"]
    posts = [e for e in flow["evidence"] if e["method"] == "POST" and e["url"].startswith("https://127.0.0.1")]
    logins = [e for e in posts if "login" in (e["request_body"] or "") or "/interaction/" in e["url"]]
    assert logins, [(e["method"], e["url"]) for e in flow["evidence"]]
    text = (tmp_path / "report.json").read_text()
    assert "not-the-password-of-alice" not in text
