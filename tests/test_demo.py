"""The README's main job: `conformance demo` certifies the embedded reference stack."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

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
    # Every pass says what it checked (the document, the cases, the exchanges): none is an empty line.
    silent = [r["rule"] for r in report["results"] if r["status"] == "passed" and not r["message"].strip()]
    assert silent == []
    # A rule judged on a document a session fixture fetched (the metadata, the tool listing, a profile result)
    # holds the exchange that fetched it, whichever check fetched it first.
    on_documents = {
        *("AUTH-PRM-02", "AUTH-PRM-03", "AUTH-PRM-04", "AUTH-ASM-02", "AUTH-ASM-03", "AUTH-ASM-05", "AUTH-ASM-06"),
        *("AUTH-TOOL-01", "AUTH-TOOL-02", "AUTH-TOOL-06", "PROF-01", "PROF-02", "PROF-05", "PROF-06", "PROF-07"),
    }
    assert [r["rule"] for r in report["results"] if r["rule"] in on_documents and not r["evidence"]] == []


def test_demo_certifies_each_target_in_a_run_of_its_own(demo_run: tuple[int, Path, str]) -> None:
    """Each kind of target is certified by a pytest run of its own (checks that read counters before and after,
    IMG-CNT-* and RL-*, meet no other run's requests to their target): the output shows each run whole, with its
    suites' checks only, and the joined report holds every part's results, exchanges and test cases."""
    code, report_dir, output = demo_run
    headings = re.findall(r"^# the .+ \(([a-z, ]+)\): exit (\d+)$", output, re.MULTILINE)
    assert sorted(headings) == [("auth, profile", "0"), ("compression", "0"), ("platform, campaigns", "0")], output
    blocks = re.split(r"^# the .+ \([a-z, ]+\): exit \d+$", output, flags=re.MULTILINE)[1:]
    for (suites, _), block in zip(headings, blocks, strict=True):
        ran = set(re.findall(r"conformance/suites/([a-z]+)/test_\w+\.py::", block))
        assert ran == set(suites.split(", ")), block[-3000:]
    report = json.loads((report_dir / "report.json").read_text())
    problems = [f"{r['rule']}: {r['status']} {r['message']}" for r in report["results"] if r["status"] != "passed"]
    assert problems == ["RL-06: skipped " + _message(report, "RL-06")], output[-3000:]
    assert code == 0
    # RL-03 waited Retry-After (1 s) of the throttled key in the platform's run: the joined report has it.
    assert report["throttle"]["waited_s"] >= 1.0 and report["throttle"]["blocked_checks"] == 0
    parts = {kind: report_dir / kind for kind in ("tool_server", "platform", "compression")}
    entries = json.loads((report_dir / "report.har").read_text())["log"]["entries"]
    assert len(entries) == sum(
        len(json.loads((part / "report.har").read_text())["log"]["entries"]) for part in parts.values()
    )
    cases = list(ET.parse(report_dir / "junit.xml").getroot().iter("testcase"))
    ran = [int(n) for n in re.findall(r"^=+ (\d+) passed in ", output, re.MULTILINE)]
    assert len(ran) == 3 and len(cases) == sum(ran), output[-3000:]


def _message(report: dict[str, Any], rule_id: str) -> str:
    return next(r["message"] for r in report["results"] if r["rule"] == rule_id)


def test_a_stack_that_never_comes_up_fails_the_demo_cleanly(tmp_path: Path) -> None:
    """The IdP cannot start (Node is told to load a module that is not there): the demo, whose pytest run started
    while the services did, says which service and where its log is in one line, exits 2, writes no report and
    leaves no process of the run or of the stack behind."""
    import os
    import subprocess
    import sys

    report_dir = tmp_path / "reports"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    env["NODE_OPTIONS"] = f"--require={tmp_path / 'missing.js'}"
    completed = subprocess.run(
        [sys.executable, "-m", "conformance", "demo", "--suite", "auth", "--report-dir", str(report_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert re.fullmatch(r"conformance: service idp exited with \d+ while starting; its log: \S+\n", completed.stderr), (
        completed.stderr
    )
    assert completed.stdout.startswith("$ ")  # the run had started: it was stopped before any check
    assert not report_dir.exists() or list(report_dir.iterdir()) == []
    # The run's controller named the report directory on its command line.
    left = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and str(tmp_path).encode() in _cmdline(p)]
    assert left == []


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return b""
