"""The README's main job: `conformance demo` certifies the embedded reference stack."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.report.json_writer import validate_report


def test_demo_certifies_the_reference(demo_run: tuple[int, Path, str]) -> None:
    code, report_dir, output = demo_run
    report = json.loads((report_dir / "report.json").read_text())
    validate_report(report)
    problems = [
        f"{r['rule']}: {r['status']} {r['message']}"
        for r in report["results"]
        if r["status"] not in ("passed", "skipped")
    ]
    assert problems == [], output[-3000:]
    assert code == 0 and report["verdict"]["accepted"] is True
    assert set(report["targets"]) == {"tool_server", "platform", "compression"}
    for name in ("report.html", "junit.xml"):
        assert (report_dir / name).stat().st_size > 0
    # Skips on the reference are only rules without a check yet or needs the stack cannot meet.
    for result in report["results"]:
        if result["status"] == "skipped":
            assert result["need"], result
