"""The shortcuts into other projects' internals (conformance.core._shortcuts): the kill switch turns them off, a
missing or reshaped internal makes each take the public way, and a run works either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.core import _shortcuts
from conformance.core._shortcuts import ENV, SHORTCUTS, enabled
from conformance.testing import run_harness
from tests._forked import forked_stack


@pytest.mark.parametrize(
    ("value", "on"),
    [
        (None, set(SHORTCUTS)),
        ("", set(SHORTCUTS)),
        ("0", set(SHORTCUTS)),
        ("1", set()),
        ("all", set()),
        ("rewrite", set(SHORTCUTS) - {"rewrite"}),
        ("rewrite, mcp-inits", set(SHORTCUTS) - {"rewrite", "mcp-inits"}),
    ],
)
def test_the_kill_switch_turns_off_every_shortcut_or_the_named_ones(
    value: str | None, on: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    assert {name for name in SHORTCUTS if enabled(name)} == on


class _Hook:
    def __init__(self, marked: Any) -> None:
        self._must_rewrite = marked


def test_unmarking_touches_only_a_set_of_names() -> None:
    hook = _Hook({"conformance", "other"})
    _shortcuts.unmark_for_rewrite(hook, "conformance")
    assert hook._must_rewrite == {"other"}
    for reshaped in (["conformance"], {"conformance": 1}, None):
        hook = _Hook(reshaped)
        _shortcuts.unmark_for_rewrite(hook, "conformance")  # another shape: left alone, no error
        assert hook._must_rewrite == reshaped
    _shortcuts.unmark_for_rewrite(object(), "conformance")  # no such attribute at all
    _shortcuts.unmark_for_rewrite(None, "conformance")


def test_hypothesis_rewriting_is_left_alone_with_the_switch_on(monkeypatch: pytest.MonkeyPatch) -> None:
    hook = _Hook({"hypothesis"})
    config = SimpleNamespace(pluginmanager=SimpleNamespace(rewrite_hook=hook))
    monkeypatch.delitem(sys.modules, "hypothesis", raising=False)
    monkeypatch.setenv(ENV, "1")
    _shortcuts.keep_hypothesis_compiled(config)
    assert hook._must_rewrite == {"hypothesis"}
    monkeypatch.delenv(ENV)
    _shortcuts.keep_hypothesis_compiled(config)
    assert hook._must_rewrite == set()


class _PluginManager:
    def __init__(self, plugins: dict[str, Any]) -> None:
        self.plugins = plugins
        self.unregistered: list[Any] = []

    def get_plugin(self, name: str) -> Any:
        return self.plugins.get(name)

    def unregister(self, plugin: Any) -> None:
        self.unregistered.append(plugin)


def _summary_config(plugin: Any) -> Any:
    manager = _PluginManager({"hypothesispytest": plugin, "terminalreporter": SimpleNamespace(stats={"passed": []})})
    return SimpleNamespace(pluginmanager=manager, getoption=lambda name, default=None: default)


def test_hypothesis_summary_is_dropped_only_when_the_plugin_has_the_expected_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "hypothesis", raising=False)
    monkeypatch.delenv(ENV, raising=False)
    plugin = SimpleNamespace(FAILING_EXAMPLES_KEY="_hypothesis_failing_examples")
    config = _summary_config(plugin)
    _shortcuts.drop_idle_hypothesis_summary(config)
    assert config.pluginmanager.unregistered == [plugin]
    reshaped = _summary_config(SimpleNamespace())  # a version without the key: its summary may have something
    _shortcuts.drop_idle_hypothesis_summary(reshaped)
    assert reshaped.pluginmanager.unregistered == []
    monkeypatch.setenv(ENV, "hypothesis-summary")
    switched = _summary_config(plugin)
    _shortcuts.drop_idle_hypothesis_summary(switched)
    assert switched.pluginmanager.unregistered == []


def test_xdist_without_the_scope_hook_gets_its_default_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.pytest import _xdist

    class NoScope:
        pass

    assert _shortcuts.scope_scheduling(NoScope) is None
    monkeypatch.setattr(_xdist, "_SCHEDULING", None)
    config = SimpleNamespace(getvalue=lambda name: "load")
    assert _xdist.make_scheduler(config, None) is None


def test_an_ini_default_is_set_only_in_a_cache_of_the_expected_shape() -> None:
    config = SimpleNamespace(_inicache={})
    _shortcuts.set_ini_default(config, "name", "value")
    assert config._inicache == {"name": "value"}
    _shortcuts.set_ini_default(SimpleNamespace(), "name", "value")  # no cache: nothing, no error
    _shortcuts.set_ini_default(SimpleNamespace(_inicache=None), "name", "value")


def test_the_ssl_extension_file_is_found() -> None:
    found = _shortcuts.ssl_extension_file()
    assert found is None or Path(found).is_file()


IMPORTS = """
import json, sys
import conformance.pytest.plugin, conformance.host._mcp_sdk
mcp = sys.modules["mcp"]
print(json.dumps({"httpx_cli": "httpx._main" in sys.modules, "mcp_init_ran": "__getattr__" not in vars(mcp),
                  "client": conformance.host._mcp_sdk.ClientSession.__module__}))
"""


@pytest.mark.parametrize("switch", [None, "1"])
def test_the_plugin_and_the_sdk_import_with_the_switch_on_and_off(switch: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if switch:
        env[ENV] = switch
    out = subprocess.run([sys.executable, "-c", IMPORTS], env=env, capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    assert seen["client"] == "mcp.client.session"
    # Off: httpx's command-line client and the mcp package __init__ are imported as without the harness.
    assert seen["httpx_cli"] is bool(switch) and seen["mcp_init_ran"] is bool(switch)


MISSING_INTERNALS = """
# Loaded with -p, before the plugin: the checks of the shortcuts that the run then makes find no internal to use.
from conformance.core import _shortcuts

_shortcuts._only_reexports = lambda source: False  # an MCP SDK whose package __init__ does more than re-export
"""


@pytest.fixture(scope="module")
def stack_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The reference tool server and its IdP, for the module's runs: each run certifies it from its own directory
    (what the runs differ in is the harness's shortcuts, not the target). Its Python services are forked from the
    fork server (tests/_forked.py): how the target's processes start is not what this module is about."""
    with forked_stack(services=["toolserver"], data_dir=tmp_path_factory.mktemp("stack")) as stack:
        yield dict(stack.settings)


@pytest.mark.parametrize("simulated", ["every shortcut off", "internals missing"])
def test_an_auth_and_profile_run_works_without_the_shortcuts(
    simulated: str, stack_settings: dict[str, str], tmp_path: Path
) -> None:
    report_dir = tmp_path / "report"
    report_dir.mkdir()
    (tmp_path / "_missing_internals.py").write_text(MISSING_INTERNALS)
    args = ["--suite", "auth,profile"]
    env = dict(stack_settings)
    if simulated == "every shortcut off":
        env[ENV] = "1"
    else:
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])
        args = ["-p", "_missing_internals", *args]
    result = run_harness(args, report_dir, env=env)
    assert result.exit_code == 0, result.stdout[-3000:]
    statuses = set(result.statuses().values())
    assert statuses <= {"passed", "skipped"} and "passed" in statuses
