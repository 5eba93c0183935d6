"""action.yml: it parses, every command it runs exists, and its steps (the very scripts the runner executes) run
a certification, write the job summary and exit with the verdict."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli._main import build_parser
from conformance.core.targets import TARGETS

ROOT = Path(__file__).parents[2]
ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


def _steps(action: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {step.get("id") or step["name"]: step for step in action["runs"]["steps"]}


def test_action_is_a_composite_with_the_documented_inputs(action: dict[str, Any]) -> None:
    assert action["runs"]["using"] == "composite"
    assert {"suite", "report-dir"} <= set(action["inputs"])
    text = ACTION.read_text()
    for kind in TARGETS.values():  # the table's targets, each URL input handed to the run as the URL's variable
        assert kind.input in action["inputs"], kind.input
        assert f"{kind.env}: ${{{{ inputs.{kind.input} }}}}" in text, kind.env
    for name in action["inputs"]:  # each input is used somewhere
        assert f"inputs.{name}" in text, name
    assert "secrets." not in text.split("runs:")[1]  # secrets come from the caller's environment only
    uses = [s["uses"] for s in action["runs"]["steps"] if "uses" in s]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    for step in action["runs"]["steps"]:
        assert "run" not in step or "shell" in step  # composite run steps must name their shell
        if "run" in step:  # inputs reach scripts through env, never spliced into the script text
            assert "inputs." not in step["run"], step["name"]


def test_every_conformance_command_the_action_runs_exists(action: dict[str, Any]) -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    known = set(subparsers.choices)  # type: ignore[arg-type]
    scripts = "\n".join(s.get("run", "") for s in action["runs"]["steps"])
    used = re.findall(r"\bconformance (\w[\w-]*)", scripts)
    assert "summary" in used
    assert set(used) <= known
    summary = subparsers.choices["summary"]  # type: ignore[index]
    for fmt in re.findall(r"conformance summary \S+ --format (\w+)", scripts):
        assert summary.parse_args(["x.json", "--format", fmt]).format == fmt


def _substitute(value: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    def replace(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        step, _, name = expression.removeprefix("steps.").partition(".outputs.")
        return outputs.get(step, {}).get(name, "")

    return EXPRESSION.sub(replace, value)


def _run_step(
    step: dict[str, Any], inputs: dict[str, str], outputs: dict[str, dict[str, str]], workspace: Path, summary: Path
) -> int:
    output_file = workspace / f"output-{step.get('id', 'x')}"
    output_file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    env.update({k: _substitute(str(v), inputs, outputs) for k, v in (step.get("env") or {}).items()})
    env.update(
        GITHUB_OUTPUT=str(output_file),
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_ACTION_PATH=str(ROOT),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",  # `python` and `conformance` of this venv
    )
    cwd = workspace / _substitute(step.get("working-directory", "."), inputs, outputs)
    # GitHub runs `shell: bash` steps as `bash --noprofile --norc -eo pipefail {0}`.
    script = workspace / "step.sh"
    script.write_text(step["run"])
    completed = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=env, timeout=120, check=False
    )
    for line in output_file.read_text().splitlines():
        name, _, value = line.partition("=")
        outputs.setdefault(step.get("id", ""), {})[name] = value
    return completed.returncode


def test_the_action_steps_certify_summarize_and_exit_with_the_verdict(action: dict[str, Any], tmp_path: Path) -> None:
    """The run, summary and exit steps as the runner executes them, against a compression target that refuses
    connections and no API key: the harness reports INCOMPLETE, the job summary says so, the job fails."""
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update({"compression-url": "https://127.0.0.1:1", "suite": "compression", "report-dir": "out"})
    steps = _steps(action)
    summary = tmp_path / "summary.md"
    outputs: dict[str, dict[str, str]] = {}
    assert _run_step(steps["run"], inputs, outputs, tmp_path, summary) == 0  # the run step itself never fails
    assert outputs["run"]["exit-code"] == "1"
    assert (tmp_path / "out" / "report.json").is_file()
    assert _run_step(steps["summary"], inputs, outputs, tmp_path, summary) == 0
    text = summary.read_text()
    assert text.startswith("## ⚠️ Conformance: INCOMPLETE")
    assert "| **compression** (https://127.0.0.1:1) |" in text
    assert outputs["summary"]["verdict"] == "INCOMPLETE"
    assert _run_step(steps["Exit with the verdict"], inputs, outputs, tmp_path, summary) == 1


def test_the_summary_step_without_a_report_says_so(action: dict[str, Any], tmp_path: Path) -> None:
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    summary = tmp_path / "summary.md"
    outputs: dict[str, dict[str, str]] = {}
    assert _run_step(_steps(action)["summary"], inputs, outputs, tmp_path, summary) == 0
    assert "no report" in summary.read_text()
    assert _run_step(_steps(action)["Exit with the verdict"], inputs, outputs, tmp_path, summary) == 1


def test_the_preflight_input_stops_the_run_before_any_check(action: dict[str, Any], tmp_path: Path) -> None:
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update({"compression-url": "https://127.0.0.1:1", "suite": "compression", "preflight": "true"})
    steps = _steps(action)
    summary = tmp_path / "summary.md"
    outputs: dict[str, dict[str, str]] = {}
    assert _run_step(steps["run"], inputs, outputs, tmp_path, summary) == 0
    assert outputs["run"]["exit-code"] == "4"  # stopped by the preflight (no API key, target unreachable)
    assert not (tmp_path / "reports" / "report.json").exists()
    assert _run_step(steps["summary"], inputs, outputs, tmp_path, summary) == 0
    assert "no report" in summary.read_text()
    assert _run_step(steps["Exit with the verdict"], inputs, outputs, tmp_path, summary) == 4


def test_code_scanning_and_attest_inputs_write_sarif_and_the_predicate(action: dict[str, Any], tmp_path: Path) -> None:
    """code-scanning: the run writes report.sarif and names it for the upload step; attest: the predicate step
    writes the test-result predicate the signing step hands to actions/attest."""
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update({"compression-url": "https://127.0.0.1:1", "suite": "compression", "report-dir": "out"})
    inputs.update({"code-scanning": "true", "attest": "true"})
    steps = _steps(action)
    summary = tmp_path / "summary.md"
    outputs: dict[str, dict[str, str]] = {}
    assert _run_step(steps["run"], inputs, outputs, tmp_path, summary) == 0
    assert outputs["run"]["sarif"] == "out/report.sarif" and (tmp_path / "out" / "report.sarif").is_file()
    assert _run_step(steps["summary"], inputs, outputs, tmp_path, summary) == 0
    assert _run_step(steps["predicate"], inputs, outputs, tmp_path, summary) == 0
    predicate = (tmp_path / outputs["predicate"]["path"]).read_text(encoding="utf-8")
    assert '"result": "FAILED"' in predicate  # INCOMPLETE is no pass
    uses = {s["name"]: s.get("uses", "") for s in action["runs"]["steps"]}
    assert uses["Upload report.sarif to code scanning"].startswith("github/codeql-action/upload-sarif@")
    assert uses["Sign the verdict"].startswith("actions/attest@")
