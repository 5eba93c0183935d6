"""Settings precedence: command line > environment > conformance.toml > [tool.conformance] > ini > default."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import ConfigError
from conformance.config import CORE_OPTIONS, read_config_files, resolve


def test_command_line_wins_over_everything() -> None:
    settings = resolve(
        cli={"target_url": "https://cli.example/mcp"},
        env={"CONFORMANCE_TARGET_URL": "https://env.example/mcp"},
        files=[("conformance.toml", {"target_url": "https://file.example/mcp"})],
        ini={"target_url": "https://ini.example/mcp"},
    )
    assert settings.target_url == "https://cli.example/mcp"
    assert settings.origins["target_url"] == "--target-url"


def test_environment_wins_over_files_and_ini() -> None:
    settings = resolve(
        cli={},
        env={"CONFORMANCE_TARGET_URL": "https://env.example/mcp"},
        files=[("conformance.toml", {"target_url": "https://file.example/mcp"})],
        ini={"target_url": "https://ini.example/mcp"},
    )
    assert settings.target_url == "https://env.example/mcp"


def test_files_in_order_then_ini_then_default() -> None:
    files = [
        ("conformance.toml", {"read_timeout": 3}),
        ("pyproject", {"read_timeout": 4, "connect_timeout": 2}),
    ]
    settings = resolve(cli={}, env={}, files=files, ini={"connect_timeout": "9", "total_timeout": "11"})
    assert settings.read_timeout == 3.0
    assert settings.connect_timeout == 2.0
    assert settings.total_timeout == 11.0
    assert settings.max_response_bytes == 16 * 1024 * 1024
    assert settings.origins["max_response_bytes"] == "default"


def test_secrets_have_no_command_line_option_and_come_from_env() -> None:
    secret_specs = [o for o in CORE_OPTIONS if o.secret]
    assert secret_specs and all(o.cli_flag is None for o in secret_specs)
    settings = resolve(cli={"platform_api_key": "from-cli"}, env={"CONFORMANCE_PLATFORM_API_KEY": "sk-env-1234"})
    assert settings.platform_api_key == "sk-env-1234"
    assert settings.public()["platform_api_key"] == "<set>"
    assert "sk-env-1234" in settings.secrets()


def test_bad_values_are_clear_errors_without_secret_values() -> None:
    with pytest.raises(ConfigError, match="connect_timeout"):
        resolve(cli={}, env={"CONFORMANCE_CONNECT_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="unknown setting"):
        resolve(cli={}, env={}, files=[("conformance.toml", {"no_such_setting": 1})])
    with pytest.raises(ConfigError, match="unknown suite"):
        _ = resolve(cli={"suite": "auth,nope"}, env={}).selected_suites


@pytest.mark.parametrize("url", ["not a url", "ftp://host/x", "127.0.0.1:8443", "https://", "/mcp"])
def test_target_urls_must_be_absolute_http_urls(url: str) -> None:
    with pytest.raises(ConfigError, match=r"target_url from --target-url: cannot read .* as url"):
        resolve(cli={"target_url": url}, env={})
    with pytest.raises(ConfigError, match="compression_url from CONFORMANCE_COMPRESSION_URL"):
        resolve(cli={}, env={"CONFORMANCE_COMPRESSION_URL": url})


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("https://127.0.0.1:99999/mcp", "port '99999' is outside 1-65535"),
        ("https://127.0.0.1:0/mcp", "port '0' is outside 1-65535"),
        ("https://host.example:http/mcp", "outside 1-65535"),
        ("https://tools example/mcp", "without spaces"),
        ("https://tools.example/m cp", "without spaces"),
        ("https://tools.example/mcp\tx", "without spaces"),
        ("wss://tools.example/mcp", "scheme http or https"),
    ],
)
def test_malformed_urls_are_configuration_errors(url: str, words: str) -> None:
    with pytest.raises(ConfigError, match="target_url from --target-url: cannot read") as caught:
        resolve(cli={"target_url": url}, env={})
    assert words in str(caught.value)
    for option in ("alt_resource", "client_metadata_url"):  # the auth suite's URL options are checked alike
        with pytest.raises(ConfigError, match=f"{option} from --{option.replace('_', '-')}"):
            resolve(cli={"target_url": "https://tools.example/mcp", option: url}, env={})


def test_target_urls_keep_their_path() -> None:
    settings = resolve(cli={"target_url": " https://127.0.0.1:8443/mcp "}, env={})
    assert settings.get("target_url") == "https://127.0.0.1:8443/mcp"


def test_config_files_are_found_in_rootdir(tmp_path: Path) -> None:
    (tmp_path / "conformance.toml").write_text('target_url = "https://a.example/mcp"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.conformance]\ntarget_url = "https://b.example/mcp"\n')
    tables = read_config_files(tmp_path)
    settings = resolve(cli={}, env={}, files=tables)
    assert settings.target_url == "https://a.example/mcp"
    with pytest.raises(ConfigError, match="does not exist"):
        read_config_files(tmp_path, tmp_path / "missing.toml")


def test_targets_and_auth_headers() -> None:
    settings = resolve(
        cli={"platform_url": "https://p.example", "compression_url": "https://c.example"},
        env={"CONFORMANCE_PLATFORM_API_KEY": "sk-1234", "CONFORMANCE_COMPRESSION_API_KEY": "key-5678"},
    )
    targets = settings.targets()
    assert set(targets) == {"platform", "compression"}
    assert targets["platform"].auth == {"Authorization": "Bearer sk-1234"}
    assert targets["compression"].auth["Authorization"].startswith("Basic ")
    assert targets["platform"].url("/v1/campaigns") == "https://p.example/v1/campaigns"


def test_suites_may_share_an_option_but_not_redefine_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import config
    from conformance.config import OptionSpec

    shared = OptionSpec("shared_thing", "used by two suites")
    monkeypatch.setattr(config, "suite_options", lambda: [shared, OptionSpec("shared_thing", "used by two suites")])
    assert [o.name for o in config.all_options()].count("shared_thing") == 1
    monkeypatch.setattr(config, "suite_options", lambda: [shared, OptionSpec("shared_thing", "other", kind="int")])
    with pytest.raises(ConfigError, match="shared_thing"):
        config.all_options()


def test_a_bad_url_with_credentials_is_reported_without_them() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve(cli={"target_url": "ftp://user:pw-in-url-1234@host.example/mcp?api_key=key-in-url-5678"}, env={})
    message = str(caught.value)
    assert "target_url" in message and "host.example" in message
    assert "pw-in-url-1234" not in message and "key-in-url-5678" not in message


@pytest.mark.parametrize(("given", "read"), [(None, "auto"), ("auto", "auto"), (" AUTO ", "auto"), ("8", 8), (1, 1)])
def test_concurrency_is_a_number_or_auto(given: object, read: object) -> None:
    env = {} if given is None else {"CONFORMANCE_CONCURRENCY": str(given)}
    assert resolve(cli={}, env=env).concurrency == read


@pytest.mark.parametrize(("given", "words"), [("0", "between 1 and 32"), ("33", "between 1 and 32"), ("many", "many")])
def test_a_concurrency_neither_a_number_in_range_nor_auto_is_a_clear_error(given: str, words: str) -> None:
    with pytest.raises(ConfigError, match=f"concurrency.*{words}"):
        resolve(cli={}, env={"CONFORMANCE_CONCURRENCY": given})
