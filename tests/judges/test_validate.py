"""``conformance validate`` and the ``conformance.judges`` API: the exit codes of a live run, JSON output, kind
sniffing, and the live checks' own messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import judges
from conformance.cli._main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_conforming_document_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "validate",
            str(FIXTURES / "auth/as-metadata/oauth-authorization-server.json"),
            "--issuer",
            "https://auth.example.com",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "PASSED   AUTH-ASM-08 [SHOULD]" in out


def test_failed_must_exits_1_with_the_live_message(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", str(FIXTURES / "auth/prm/scopes-supported-string.json")])
    out = capsys.readouterr().out
    assert code == 1
    # The exact text the live AUTH-PRM-04 check fails with (both call validate.auth.prm_optional_field_problems).
    assert (
        "FAILED   AUTH-PRM-04 [MUST]: `scopes_supported` must be an array of strings, got 'files:read files:write'"
        in out
    )


def test_should_warns_and_strict_fails(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "auth/challenge/no-scope.txt")
    assert main(["validate", path]) == 0
    assert "WARNING  AUTH-PRM-06 [SHOULD]" in capsys.readouterr().out
    assert main(["validate", path, "--strict"]) == 1


def test_json_format_and_context_options(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "auth/prm/conforming.json")
    context = json.dumps({"issuers": {"https://auth.example.com": "https://auth.example.com"}})
    code = main(
        ["validate", path, "--format", "json", "--resource", "https://tools.example.com/mcp", "--context", context]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["exit_code"] == 0
    (document,) = report["documents"]
    assert document["kind"] == "prm"
    assert {v["rule"]: v["status"] for v in document["verdicts"]} == {
        "AUTH-PRM-02": "passed",
        "AUTH-PRM-03": "passed",
        "AUTH-PRM-04": "passed",
    }


def test_without_context_a_rule_is_skipped_not_passed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(FIXTURES / "auth/prm/conforming.json"), "--format", "json"]) == 0
    verdicts = json.loads(capsys.readouterr().out)["documents"][0]["verdicts"]
    assert {v["rule"]: v["status"] for v in verdicts}["AUTH-PRM-02"] == "skipped"


def test_unknown_kind_and_unreadable_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prose = tmp_path / "notes.md"
    prose.write_text("# Notes\n\nNot a document of any kind.\n")
    assert main(["validate", str(prose)]) == 2
    assert "pass --kind" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "missing.json")]) == 2


def test_text_and_bytes_of_no_kind_are_not_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line of prose is no challenge and random bytes are no image: the command says it cannot tell (exit 2) and
    still judges the other files."""
    prose = tmp_path / "note.txt"
    prose.write_text("hello world\n")
    noise = tmp_path / "noise.bin"
    noise.write_bytes(bytes(range(7, 250)))
    challenge = str(FIXTURES / "auth/challenge/no-scope.txt")
    assert judges.sniff("hello world") is None and judges.sniff(bytes(range(7, 250))) is None
    assert judges.sniff('Bearer resource_metadata="https://x"') == "challenge"
    assert main(["validate", str(prose), str(noise), challenge]) == 2
    captured = capsys.readouterr()
    assert "note.txt: cannot tell" in captured.err and "noise.bin: cannot tell" in captured.err
    assert "PASSED   AUTH-PRM-05" in captured.out
    assert "FAILED" not in captured.out


@pytest.mark.parametrize(("context", "said"), [("[1,2]", "must be a JSON object"), ("{x", "is not JSON")])
def test_malformed_context_is_a_usage_error(context: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--context", context, str(FIXTURES / "auth/challenge/no-scope.txt")]) == 2
    err = capsys.readouterr().err
    assert f"--context {said}" in err and "no-scope.txt" not in err


def test_kind_can_be_forced(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "profile/result/nested-profile.json")
    assert main(["validate", path, "--kind", "profile"]) == 1
    assert "FAILED   PROF-06" in capsys.readouterr().out


def test_python_api_tools_list() -> None:
    doc = json.loads((FIXTURES / "auth/tools/hint-not-boolean.json").read_text())
    verdicts = {v.rule: v for v in judges.tools_list(doc)}
    assert verdicts["AUTH-TOOL-01"].status == "failed"
    assert "readOnlyHint" in verdicts["AUTH-TOOL-01"].message
    assert verdicts["AUTH-TOOL-02"].status == "passed"
    assert judges.exit_code(verdicts.values()) == 1


def test_image_upload_kind() -> None:
    assert judges.sniff((FIXTURES / "compression/truncated.jpg").read_bytes()) == "image"
    (verdict,) = judges.image((FIXTURES / "compression/fake.png").read_bytes())
    assert verdict.rule == "IMG-SHRINK-03" and verdict.status == "failed"
    # a truncated image may be refused or compressed: it passes, and says so
    (verdict,) = judges.image((FIXTURES / "compression/truncated.jpg").read_bytes())
    assert verdict.status == "passed" and "truncated" in verdict.message


def test_a_larger_output_passes_with_a_warning_note() -> None:
    manifest = FIXTURES / "compression/photo-inflated.output.json"
    kind, verdicts = judges.judge_file(manifest)
    shrink = next(v for v in verdicts if v.rule == "IMG-SHRINK-04")
    assert kind == "image-output" and shrink.status == "passed" and shrink.message.startswith("warning:")


def test_the_html_report_shows_a_passing_example_beside_a_failed_rule() -> None:
    from conformance.report.html import render_html

    def result(rule: str, status: str) -> dict[str, object]:
        return {
            "rule": rule, "target": "tool_server", "suite": "auth", "level": "MUST", "status": status,
            "title": rule, "text": "", "source": "A", "message": "", "baseline": None, "checks": [],
            "duration_s": 0.0, "evidence": [],
        }  # fmt: skip

    from conformance.report.model import RunReport
    from tests.report.report_factory import build_report

    report = {**build_report(), "results": [result("AUTH-PRM-04", "failed"), result("AUTH-ASM-03", "passed")]}
    html = render_html(RunReport.from_json(report))
    assert "What passes: <code>fixtures/auth/prm/conforming.json</code>" in html
    assert "&#34;scopes_supported&#34;" in html  # the excerpt itself, embedded (the report stays self-contained)
    assert "fixtures/auth/as-metadata" not in html  # a passed rule needs no example


def test_authorization_response_options(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "auth/authorization-response/success-without-iss.txt")
    assert main(["validate", path, "--issuer", "https://auth.example.com"]) == 1
    assert "FAILED   AUTH-ISS-01" in capsys.readouterr().out
    assert main(["validate", path, "--issuer", "https://auth.example.com", "--iss-not-advertised"]) == 0
    assert "SKIPPED  AUTH-ISS-01" in capsys.readouterr().out


def test_an_unparseable_challenge_is_not_called_absent() -> None:
    """A Bearer challenge that is there but does not parse: both rules say so, neither says "no Bearer challenge"."""
    value = (FIXTURES / "auth/challenge/unterminated-quote.txt").read_text(encoding="utf-8")
    from conformance.judges.auth import challenge_problems

    prm05, prm06 = challenge_problems(value.strip())
    assert prm05 and prm05[0].startswith("no parseable Bearer challenge (")
    assert prm06[0].startswith("the Bearer challenge does not parse ("), prm06


def test_verdicts_speak_the_verdict_layer_s_words() -> None:
    """A document verdict's status is the report's ``Status`` and its level the catalog's ``Level``: no second
    vocabulary. An unknown rule (a vendor's, before it is registered) is judged at MUST."""
    from conformance.core.rules import Level, Status
    from conformance.judges._core import judged, level_of

    verdicts = judges.challenge('Bearer resource_metadata="https://t.example/.well-known/oauth-protected-resource"')
    assert {v.rule: (v.status, v.level) for v in verdicts} == {
        "AUTH-PRM-05": (Status.PASSED, Level.MUST),
        "AUTH-PRM-06": (Status.WARNING, Level.SHOULD),
    }
    assert all(type(v.status) is Status and type(v.level) is Level for v in verdicts)
    assert level_of("X-ACME-01") is Level.MUST and judged("X-ACME-01", ["broken"]).status is Status.FAILED


def test_problems_carry_the_rule_they_break() -> None:
    document = {"resource": "https://t.example/mcp", "authorization_servers": [], "scopes_supported": "a b"}
    found = judges.problems("prm", document, resource="https://t.example/mcp")
    assert [(p.rule, str(p)) for p in found] == [
        ("AUTH-PRM-03", "`authorization_servers` must be a non-empty array of strings, got []"),
        ("AUTH-PRM-04", "`scopes_supported` must be an array of strings, got 'a b'"),
    ]
