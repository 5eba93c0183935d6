"""The table of targets and suites (conformance/core/targets.py) is the one description: what reads it agrees
with it."""

from __future__ import annotations

from pathlib import Path

import pytest

import conformance.suites
from conformance.config import CORE_OPTIONS, resolve
from conformance.core import targets
from conformance.core.rules import RULES
from conformance.core.targets import SUITE_NAMES, SUITES, TARGETS, TIMEOUTS

SUITES_DIR = Path(conformance.suites.__file__).parent


def test_every_suite_package_is_in_the_table_and_every_suite_has_a_package() -> None:
    packages = {p.name for p in SUITES_DIR.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(SUITE_NAMES)


def test_every_rule_belongs_to_a_suite_of_the_table() -> None:
    assert {rule.suite for rule in RULES.values()} == set(SUITE_NAMES)


def test_every_target_kind_is_certified_by_some_suite() -> None:
    assert {s.target.name for s in SUITES} == set(TARGETS)


def test_the_settings_of_each_target_are_declared_with_the_table_s_option_and_variable() -> None:
    specs = {spec.name: spec for spec in CORE_OPTIONS}
    for kind in TARGETS.values():
        url = specs[kind.url_setting]
        assert (url.kind, url.cli_flag, url.env_var) == ("url", kind.flag, kind.env)
        assert targets.TARGET_OPTION[kind.name] == (kind.flag, kind.env)
        if kind.api_key_setting:
            key = specs[kind.api_key_setting]
            assert key.secret and key.env_var == kind.api_key_env == targets.API_KEY_OPTION[kind.name]


@pytest.mark.parametrize("kind", list(TARGETS.values()), ids=list(TARGETS))
def test_settings_build_each_target_from_its_table_row(kind: targets.TargetKind) -> None:
    env = {kind.env: "https://target.example/base"}
    if kind.api_key_env:
        env[kind.api_key_env] = "k-123"
    settings = resolve(cli={}, env=env, files=[], ini={})
    target = settings.target(kind.name)
    assert target is not None and target.base_url == "https://target.example/base"
    assert target.api_key == ("k-123" if kind.api_key_env else None)
    assert target.scheme == kind.key_scheme
    assert list(settings.targets()) == [kind.name]
    assert resolve(cli={}, env={}, files=[], ini={}).target(kind.name) is None


def test_timeout_defaults_come_from_the_table() -> None:
    settings = resolve(cli={}, env={}, files=[], ini={})
    assert (settings.connect_timeout, settings.read_timeout, settings.total_timeout) == (
        TIMEOUTS.connect,
        TIMEOUTS.read,
        TIMEOUTS.total,
    )


def test_suite_services_are_reference_service_packages() -> None:
    from conformance.reference.mutants import SERVICE_PACKAGES

    for suite in SUITES:
        assert suite.target.service in suite.services
        assert set(suite.services) <= set(SERVICE_PACKAGES)


def test_suites_of_and_rank_read_the_table() -> None:
    assert targets.suites_of("tool_server") == {"auth", "profile"}
    assert sorted(["compression", "zzz", "auth", "campaigns"], key=targets.suite_rank) == [
        "auth",
        "campaigns",
        "compression",
        "zzz",
    ]


def test_every_reader_is_generated_from_the_table() -> None:
    """The plugin's fixtures, the CLI's URL flags, the preflight's probes and the reference stack's services are the
    table's rows, not lists of their own."""
    import conformance.pytest.plugin as plugin
    from conformance.cli._main import build_parser
    from conformance.reference import mutants, stack

    for kind in TARGETS.values():
        assert getattr(plugin, kind.fixture, None) is not None
        assert (kind.probe is None) == (kind.api_key_setting is None)  # keyed targets are probed with their key
        for command in ("init", "doctor"):
            args = build_parser(validate_arguments=False).parse_args([command, kind.flag, "https://t.example"])
            assert getattr(args, kind.url_setting) == "https://t.example"
    assert mutants.SERVICE_PACKAGES == targets.SERVICE_PACKAGES
    assert {kind.service for kind in TARGETS.values()} <= set(targets.SERVICE_PACKAGES)
    assert stack._select_packages(["toolserver"]) == ["toolserver", "idp"]


def test_a_new_row_of_the_table_reaches_every_reader() -> None:
    """In a fresh interpreter the table gains a target kind, its suite and its reference service; the settings, the
    plugin, the CLI, `conformance init`, the preflight and the reference stack all show it."""
    import subprocess
    import sys

    script = Path(__file__).with_name("_with_a_new_target.py")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the new row reached every reader" in done.stdout
