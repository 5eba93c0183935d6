"""`conformance init` against the embedded reference without --client-id: the host identifies itself by its CIMD
URL, so init runs the publisher while an authorization request names that URL, and starts the login steps from the
sign-in page the reference authorization server shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli._main import main
from conformance.host.login import LoginSteps
from conformance.reference.stack import Stack


def test_init_without_a_client_id_starts_from_the_reference_sign_in_page(
    auth_stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = auth_stack.settings
    args = ["init", "--dir", str(tmp_path), "--ci", "none", "--target-url", s["CONFORMANCE_TARGET_URL"]]
    args += ["--ca-bundle", s["CONFORMANCE_CA_BUNDLE"]]
    cimd = ["--publisher-certfile", s["CONFORMANCE_PUBLISHER_CERTFILE"]]
    cimd += ["--publisher-keyfile", s["CONFORMANCE_PUBLISHER_KEYFILE"]]
    assert main([*args, *cimd]) == 0, capsys.readouterr().err
    text = (tmp_path / "login_steps.toml").read_text()
    assert "(CIMD client)" in text, text
    steps = LoginSteps.load(tmp_path / "login_steps.toml")
    # The reference IdP's sign-in form: its user and password fields, found on the real page.
    assert set(steps.steps[0].fill.values()) == {"{user}", "{password}"}, text

    # Without a publisher certificate there is no CIMD URL to name: the file says how to get the page.
    assert main([*args, "--dir", str(tmp_path / "bare")]) == 0
    bare = (tmp_path / "bare" / "login_steps.toml").read_text()
    assert "--publisher-certfile F --publisher-keyfile K" in bare and "--client-id ID" in bare
