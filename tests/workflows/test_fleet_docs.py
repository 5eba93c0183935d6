"""docs/ci.md, "Fleets": the targets file it shows loads, the matrix workflow parses, hands the action only inputs
it has, and every `conformance` command of its merge job is one the CLI accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli._main import build_parser
from conformance.config import resolve

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
FLEET = DOC[DOC.index("## Fleets") :]


def _block(language: str, index: int = 0) -> str:
    return re.findall(rf"```{language}\n(.*?)```", FLEET, re.DOTALL)[index]


def test_the_documented_targets_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "targets.toml"
    path.write_text(_block("toml"), encoding="utf-8")
    settings = resolve(cli={"targets_file": str(path)}, env={"ACME_PLATFORM_API_KEY": "sk-acme-doc-example"})
    assert list(settings.fleet) == ["acme", "globex"]
    assert settings.fleet["acme"].get("client_id") == "conformance-harness"
    platform = settings.fleet["acme"].target("platform")
    assert platform is not None and platform.api_key == "sk-acme-doc-example"
    assert settings.fleet["globex"].env_prefix == "GLOBEX_"


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(_block("yaml"))
    return data


def test_the_matrix_jobs_use_inputs_the_action_has(workflow: dict[str, Any]) -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in workflow["jobs"]["certify"]["steps"] if str(s.get("uses", "")).startswith("OWNER/"))
    assert set(step["with"]) <= set(action["inputs"]), set(step["with"]) - set(action["inputs"])
    assert step["with"]["target-names"] == "${{ matrix.target }}"
    assert workflow["jobs"]["merge"]["needs"] == "certify"


def test_the_merge_job_runs_commands_the_cli_accepts(workflow: dict[str, Any]) -> None:
    commands = [
        s["run"] for s in workflow["jobs"]["merge"]["steps"] if "run" in s and s["run"].startswith("conformance ")
    ]
    assert any(" merge " in f" {c} " for c in commands), commands
    for command in commands:
        words = shlex.split(command.split(">", 1)[0])
        assert words[0] == "conformance"
        build_parser().parse_args(words[1:])  # SystemExit on an unknown command or option
