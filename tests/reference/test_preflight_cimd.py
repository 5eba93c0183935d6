"""The preflight against the reference authorization stack: discovery parses, and the CIMD probe sees the IdP
fetch the host's probe document (and says so when the document's origin is out of the IdP's reach)."""

from __future__ import annotations

import pytest

from conformance.config import resolve
from conformance.reference.stack import Stack
from conformance.suites.preflight import preflight


@pytest.fixture
def env(auth_stack: Stack, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name, value in auth_stack.settings.items():  # the login steps read the test account from the environment
        monkeypatch.setenv(name, value)
    return monkeypatch


def _findings(**extra: str) -> list[str]:
    import os

    return [f.line() for f in preflight(resolve(env={**os.environ, **extra}, cli={"suite": ["auth"]}))]


def test_preflight_is_ready_against_the_reference(env: pytest.MonkeyPatch) -> None:
    lines = _findings()
    assert not [line for line in lines if line.startswith("PROBLEM")], lines
    assert any("authorization server fetched the probe document" in line for line in lines)


def test_cimd_probe_reports_an_unreachable_publisher(env: pytest.MonkeyPatch) -> None:
    lines = _findings(CONFORMANCE_CLIENT_METADATA_URL="https://127.0.0.1:9")
    problems = [line for line in lines if line.startswith("PROBLEM")]
    assert len(problems) == 1, lines
    assert "never fetched https://127.0.0.1:9/oauth/client.json" in problems[0]


def test_no_cimd_probe_with_dcr(env: pytest.MonkeyPatch) -> None:
    lines = _findings(CONFORMANCE_CLIENT_REGISTRATION="dcr")
    assert not any("probe" in line for line in lines), lines
