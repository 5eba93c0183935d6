"""`conformance init` against the reference IdP: the login steps it derives from the real sign-in page (reached by
discovery and an authorization request) are the ones the harness bundles for that IdP."""

from __future__ import annotations

from pathlib import Path

from conformance.cli._main import main
from conformance.host.login import LoginSteps
from conformance.reference.stack import Stack
from tests.reference.conftest import https_client, metadata_url, register_predefined_client


def test_init_derives_the_reference_login_step(auth_stack: Stack, issuer: str, tmp_path: Path) -> None:
    target = auth_stack.settings["CONFORMANCE_TARGET_URL"]
    with https_client(auth_stack) as client:
        assert client.get(metadata_url(target)).status_code == 200
    client_id = register_predefined_client(auth_stack, issuer)
    # "--client-id=ID": a generated id may start with "-", which argparse would take for an option.
    args = ["init", "--dir", str(tmp_path), "--target-url", target, f"--client-id={client_id}"]
    args += ["--ca-bundle", str(auth_stack.ca_file), "--ci", "none"]
    assert main(args) == 0
    derived = LoginSteps.load(tmp_path / "login_steps.toml").steps
    bundled = next(s for s in LoginSteps.default().steps if s.name == "login")
    assert [s.name for s in derived] == ["login"]
    assert (derived[0].match, derived[0].fill) == (bundled.match, bundled.fill)
