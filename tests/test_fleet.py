"""Fleets ("fleets" in conformance/config.py): the targets file, each named target's settings and secrets, the checks
parametrized per named target, the scheduling per named target, and the redactor knowing every target's secrets."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from conformance.config import resolve
from conformance.core._exceptions import ConfigError
from conformance.host import redactor_for
from conformance.pytest._session import SUITES_DIR
from conformance.pytest._xdist import busy_targets, fleet_name, target_scope

FLEET = """
[[target]]
name = "acme"
env_prefix = "ACME_"
platform_url = "https://platform.acme.example/v1"
compression_url = "https://img.acme.example"
[target.settings]
platform_model = "acme-model"

[[target]]
name = "beta"
platform_url = "https://platform.beta.example/v1"
"""


def _targets(tmp_path: Path, text: str = FLEET) -> Path:
    path = tmp_path / "targets.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_each_named_target_has_its_urls_settings_and_secrets_from_its_prefix(tmp_path: Path) -> None:
    env = {
        "CONFORMANCE_TARGETS_FILE": str(_targets(tmp_path)),
        "CONFORMANCE_PLATFORM_MODEL": "run-model",
        "CONFORMANCE_PLATFORM_API_KEY": "sk-run-wide-never-inherited",
        "ACME_PLATFORM_API_KEY": "sk-acme-platform-1234567890",
        "ACME_COMPRESSION_API_KEY": "acme-compression-secret-42",
        "BETA_PLATFORM_API_KEY": "sk-beta-platform-0987654321",
    }
    settings = resolve(env=env)
    assert list(settings.fleet) == ["acme", "beta"]
    acme, beta = settings.fleet["acme"], settings.fleet["beta"]
    platform = acme.target("platform")
    assert platform is not None and platform.base_url == "https://platform.acme.example/v1"
    assert platform.api_key == "sk-acme-platform-1234567890"
    assert acme.target("compression") is not None and acme.target("tool_server") is None
    assert acme.get("platform_model") == "acme-model" and beta.get("platform_model") == "run-model"
    beta_platform = beta.target("platform")
    assert beta_platform is not None and beta_platform.api_key == "sk-beta-platform-0987654321"  # default BETA_
    assert beta.target("compression") is None
    assert acme.origins["platform_api_key"] == "ACME_PLATFORM_API_KEY"
    # the run itself has no target of its own: every one is a named target's
    assert settings.target("platform") is None
    assert set(settings.targets()) == {"acme/platform", "acme/compression", "beta/platform"}
    # every target's secrets reach the redactor
    redactor = redactor_for(settings)
    text = "keys sk-acme-platform-1234567890 acme-compression-secret-42 sk-beta-platform-0987654321"
    scrubbed = redactor.scrub(text)
    assert "sk-acme" not in scrubbed and "acme-compression-secret" not in scrubbed and "sk-beta" not in scrubbed


def test_target_names_select_some_targets_of_the_file(tmp_path: Path) -> None:
    settings = resolve(cli={"targets_file": str(_targets(tmp_path)), "target_names": "beta"}, env={})
    assert list(settings.fleet) == ["beta"]
    with pytest.raises(ConfigError, match=r"target_names: \['gamma'\] not in"):
        resolve(cli={"targets_file": str(_targets(tmp_path)), "target_names": "gamma"}, env={})
    with pytest.raises(ConfigError, match="names targets of a targets file"):
        resolve(cli={"target_names": "beta"}, env={})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[target]]\nname = "a"\nplatform_url = "https://a.example"\n' * 2, "listed twice"),
        ('[[target]]\nname = "a-b"\nplatform_url = "https://a.example"\n', "is not letters, digits and _"),
        ('[[target]]\nname = "a"\n', "no URL"),
        (
            '[[target]]\nname = "a"\nplatform_url = "https://a.example"\nplatform_api_key = "sk-x"\n',
            "platform_api_key is a secret: set A_PLATFORM_API_KEY in the environment",
        ),
        ('[[target]]\nname = "a"\nplatform_url = "https://a.example"\ncolour = "blue"\n', "unknown key"),
        (
            '[[target]]\nname = "a"\nplatform_url = "https://a.example"\n[target.settings]\nplatform_api_key = "k"\n',
            "is a secret: set A_PLATFORM_API_KEY in the environment",
        ),
        (
            '[[target]]\nname = "a"\nplatform_url = "https://a.example"\n[target.settings]\nreport_dir = "x"\n',
            "one setting for the whole run",
        ),
        (
            '[[target]]\nname = "a"\nplatform_url = "https://a.example"\n[target.settings]\nreport_formats = "json"\n',
            "report_formats is one setting for the whole run",
        ),
        (
            '[[target]]\nname = "a"\nplatform_url = "https://a.example"\n[target.settings]\nplatform_rl_budget = "x"\n',
            "platform_rl_budget from .*\\[target a\\]: cannot read",
        ),
        ('[[target]]\nname = "a"\nplatform_url = "ftp://a.example"\n', "expected an absolute https:// URL"),
        ('[[target]]\nname = "a"\nenv_prefix = "A B"\nplatform_url = "https://a.example"\n', "env_prefix"),
        ("[fleet]\nx = 1\n", "unknown table"),
        ("", "no \\[\\[target\\]\\] entries"),
        ("[[target\n", "cannot read"),
    ],
)
def test_a_wrong_targets_file_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        resolve(cli={"targets_file": str(_targets(tmp_path, text))}, env={})
    assert "\n" not in str(caught.value) and "sk-x" not in str(caught.value)


def test_a_targets_file_and_a_target_url_of_the_run_conflict(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="give every URL in the targets file"):
        resolve(cli={"targets_file": str(_targets(tmp_path)), "platform_url": "https://x.example"}, env={})


def test_fleet_checks_are_scheduled_per_named_target() -> None:
    bases = [SUITES_DIR]
    names = ["acme", "beta"]
    assert fleet_name("platform/test_tokens.py::test_x[acme]", names) == "acme"
    assert fleet_name("platform/test_tokens.py::test_x[case_1-beta]", names) == "beta"
    assert fleet_name("platform/test_tokens.py::test_x", names) is None
    scope = target_scope("platform/test_tokens.py::test_string_input_is_counted[acme]", bases, names)
    assert scope == "target:acme/platform"
    assert target_scope("campaigns/test_pagination.py::test_y[acme]", bases, names) == "target:acme/platform"
    assert target_scope("platform/test_tokens.py::test_string_input_is_counted[beta]", bases, names) != scope
    # outside a fleet: the target kind's scope alone
    assert target_scope("platform/test_tokens.py::test_string_input_is_counted", bases) == "target:platform"


def test_workers_for_a_fleet_count_each_named_target(tmp_path: Path) -> None:
    settings = resolve(cli={"targets_file": str(_targets(tmp_path))}, env={})
    assert busy_targets(settings) == 3  # acme: platform and compression; beta: platform
    settings = resolve(cli={"targets_file": str(_targets(tmp_path)), "suite": "platform"}, env={})
    assert busy_targets(settings) == 2


def test_every_check_is_collected_once_per_named_target(pytester: pytest.Pytester) -> None:
    targets = pytester.path / "targets.toml"
    targets.write_text(textwrap.dedent(FLEET), encoding="utf-8")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--collect-only", "-q", "--suite", "platform", "--targets-file", str(targets)
    )
    ids = [line for line in result.outlines if "::" in line]
    assert ids, result.outlines
    acme = sorted(i.removesuffix("[acme]") for i in ids if i.endswith("[acme]"))
    beta = sorted(i.removesuffix("[beta]") for i in ids if i.endswith("[beta]"))
    assert acme and acme == beta and len(acme) + len(beta) == len(ids)
    assert all(i.startswith("platform/") for i in ids)


def test_doctor_checks_every_named_target_with_its_own_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.cli._main import main
    from tests.reference.platform.live import serving

    with serving(tmp_path / "sandbox") as sandbox:
        targets = _targets(
            tmp_path,
            f'[[target]]\nname = "good"\nplatform_url = "{sandbox.base_url}"\n\n'
            f'[[target]]\nname = "nokey"\nplatform_url = "{sandbox.base_url}"\n',
        )
        for name in [n for n in os.environ if n.startswith("CONFORMANCE_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("GOOD_PLATFORM_API_KEY", sandbox.settings["CONFORMANCE_PLATFORM_API_KEY"])
        monkeypatch.chdir(tmp_path)
        code = main(["doctor", "--targets-file", str(targets), "--suite", "platform", "--allow-insecure-loopback"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "ok      good/platform: reachable, API key accepted" in out, out
    assert "PROBLEM nokey/platform: no API key: set NOKEY_PLATFORM_API_KEY" in out, out
    assert sandbox.settings["CONFORMANCE_PLATFORM_API_KEY"] not in out


def test_a_named_target_without_its_key_is_incomplete_naming_its_variable(tmp_path: Path) -> None:
    from tests._forked import forked_harness

    targets = _targets(tmp_path, '[[target]]\nname = "nokey"\nplatform_url = "https://127.0.0.1:1/v1"\n')
    result = forked_harness(["--suite", "platform", "--targets-file", str(targets)], tmp_path / "out", cwd=tmp_path)
    assert result.exit_code == 1, result.stdout[-2000:]
    row = result.report["fleet"][0]
    assert row["name"] == "nokey" and row["verdict"]["status"] == "INCOMPLETE", row
    options = {r["option"] for r in result.report["results"] if r["incomplete"]}
    assert options == {"NOKEY_PLATFORM_API_KEY"}, options


def test_mcp_era_both_is_a_fleet_of_the_tool_server_once_per_era() -> None:
    env = {"CONFORMANCE_TEST_PASSWORD": "pw-secret"}
    cli = {"target_url": "https://mcp.example/mcp", "platform_url": "https://api.example/v1", "mcp_era": "both"}
    settings = resolve(cli=cli, env=env)
    assert list(settings.fleet) == ["legacy", "modern"]
    legacy, modern = settings.fleet["legacy"], settings.fleet["modern"]
    assert (legacy.get("mcp_era"), modern.get("mcp_era")) == ("legacy", "modern")
    assert set(legacy.targets()) == {"tool_server"} and set(modern.targets()) == {"platform", "tool_server"}
    assert legacy.get("test_password") == modern.get("test_password") == "pw-secret"
    assert resolve(cli={"platform_url": "https://api.example/v1", "mcp_era": "both"}, env={}).fleet == {}


def test_mcp_era_both_and_a_targets_file_conflict(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mcp_era both with a targets file"):
        resolve(cli={"targets_file": str(_targets(tmp_path)), "mcp_era": "both"}, env={})
