"""``conformance replay``: the recorded requests of a case, sent again with credentials from the environment.

End to end: a run against a platform sandbox with a mutant fails TOK-07's "unknown content part type" case; its
replay against the same mutant reproduces the failure (exit 0), against a sandbox without the mutant the answer
differs and the case now passes (exit 1). The same against a tool server with a mutant and a reference one, the
replay linking an account for its own access token. The filling of redaction markers is proven on recorded
exchanges.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli._main import main
from conformance.cli.replay import ACCESS_TOKEN_ENV, Credentials, Request, _request
from conformance.config import resolve
from tests._forked import forked_harness, forked_stack
from tests.reference.platform.live import serving

CASE = "unknown content part type"
MUTANT = "unknown-part-ignored"


def _credentials(target: str, origin: str, env: dict[str, str]) -> Credentials:
    return Credentials(target, origin, env, resolve(env=env))


def _exchange(url: str, headers: dict[str, str], body: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"method": "POST", "url": url, "request_headers": headers, "request_body": body, "status": 200, **extra}


def test_the_platform_key_fills_its_bearer_marker() -> None:
    env = {"CONFORMANCE_PLATFORM_API_KEY": "sk-fresh-1234"}
    recorded = _exchange(
        "https://p.example/v1/responses/input_tokens",
        {"host": "p.example", "content-length": "9", "authorization": "Bearer [REDACTED]"},
        '{"input": "hi"}',
    )
    request = _request(recorded, _credentials("platform", "https://p.example", env), None)
    assert isinstance(request, Request)
    assert request.headers == {"authorization": "Bearer sk-fresh-1234"}  # host and length are the client's
    assert request.body == b'{"input": "hi"}'
    assert request.variables == ["CONFORMANCE_PLATFORM_API_KEY"]


def test_the_compression_key_fills_its_basic_marker() -> None:
    env = {"CONFORMANCE_COMPRESSION_API_KEY": "ckey-5678"}
    recorded = _exchange("https://c.example/shrink", {"Authorization": "Basic [REDACTED]"})
    request = _request(recorded, _credentials("compression", "https://c.example", env), None)
    assert isinstance(request, Request)
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"api:ckey-5678").decode()


def test_the_tool_server_bearer_comes_from_the_access_token_variable() -> None:
    recorded = _exchange("https://t.example/mcp", {"authorization": "Bearer [REDACTED]"}, "{}")
    missing = _request(recorded, _credentials("tool_server", "https://t.example", {}), None)
    assert missing == (
        f"a redacted value in it needs {ACCESS_TOKEN_ENV}: set it in the environment to replay this exchange"
    )
    request = _request(recorded, _credentials("tool_server", "https://t.example", {ACCESS_TOKEN_ENV: "tok-9"}), None)
    assert isinstance(request, Request) and request.headers["authorization"] == "Bearer tok-9"


def test_other_markers_take_the_variables_the_curl_reproducer_names() -> None:
    """The authorization server's token endpoint is not the target: its markers are the reproducer's ${NAME}s."""
    recorded = _exchange(
        "https://as.example/token?code=[REDACTED]",
        {"authorization": "Basic [REDACTED]"},
        '{"client_secret": "[REDACTED]", "grant_type": "authorization_code"}',
    )
    credentials = _credentials("tool_server", "https://t.example", {})
    assert "BASIC_CREDENTIALS" in str(_request(recorded, credentials, None))
    env = {"CODE": "c0de", "BASIC_CREDENTIALS": "dTpw", "CLIENT_SECRET": "s3cret"}
    request = _request(recorded, _credentials("tool_server", "https://t.example", env), None)
    assert isinstance(request, Request)
    assert request.url == "https://as.example/token?code=c0de"
    assert request.headers["authorization"] == "Basic dTpw"
    assert request.body is not None and b'"client_secret": "s3cret"' in request.body
    assert request.variables == ["CODE", "BASIC_CREDENTIALS", "CLIENT_SECRET"]


def test_the_key_under_another_scheme_is_the_key_itself() -> None:
    """TOK-07's "the real key under the Basic scheme" and "... without a scheme" sent the key as it is (not crafted)."""
    env = {"CONFORMANCE_PLATFORM_API_KEY": "sk-fresh-1234"}
    credentials = _credentials("platform", "https://p.example", env)
    for recorded, sent in (("Basic [REDACTED]", "Basic sk-fresh-1234"), ("[REDACTED]", "sk-fresh-1234")):
        request = _request(_exchange("https://p.example/v1/x", {"authorization": recorded}), credentials, None)
        assert isinstance(request, Request) and request.headers["authorization"] == sent


def test_a_crafted_credential_is_not_refilled_from_the_real_one() -> None:
    """TOK-07's "the real key with characters appended" carried no copy of the key: the replay refuses it."""
    env = {"CONFORMANCE_PLATFORM_API_KEY": "sk-fresh-1234"}
    recorded = _exchange("https://p.example/v1/x", {"authorization": "Bearer [REDACTED:crafted]"})
    refusal = _request(recorded, _credentials("platform", "https://p.example", env), None)
    assert isinstance(refusal, str) and "a credential the run crafted for the case" in refusal


def test_a_signed_request_is_not_sent_again() -> None:
    headers = {"authorization": "[REDACTED]", "x-amz-date": "20261128T140000Z", "x-amz-content-sha256": "e3b0"}
    recorded = _exchange("https://s3.example/bucket/key", headers)
    refusal = _request(recorded, _credentials("compression", "https://c.example", {}), None)
    assert isinstance(refusal, str) and "AWS Signature V4" in refusal


def test_the_curl_reproducer_names_a_crafted_credential_as_such() -> None:
    from conformance.report.html import curl_command

    command = curl_command(_exchange("https://p.example/v1/x", {"authorization": "Bearer [REDACTED:crafted]"}))
    assert command.startswith("# set CRAFTED_ACCESS_TOKEN first")


@pytest.mark.parametrize(
    ("extra", "body", "why"),
    [
        ({"direction": "inbound"}, None, "inbound"),
        ({"client": "raw socket"}, None, "another client (raw socket)"),
        ({}, "<binary body: 2048 bytes, image/png>", "binary"),
        ({}, '{"a": "xxx… [12 more characters]', "cut in the report"),
        ({"omitted": {"reason": "run body budget spent"}}, None, "the report keeps its metadata only"),
    ],
)
def test_what_the_report_cannot_send_again_is_refused(extra: dict[str, Any], body: str | None, why: str) -> None:
    recorded = _exchange("https://p.example/v1/x", {}, body, **extra)
    refusal = _request(recorded, _credentials("platform", "https://p.example", {}), None)
    assert isinstance(refusal, str) and why in refusal


def test_a_moved_target_gets_the_requests_and_its_credential() -> None:
    env = {"CONFORMANCE_PLATFORM_API_KEY": "sk-fresh-1234"}
    recorded = _exchange("http://127.0.0.1:1/v1/x?a=1", {"authorization": "Bearer [REDACTED]"})
    credentials = _credentials("platform", "http://127.0.0.1:2", env)
    request = _request(recorded, credentials, ("http://127.0.0.1:1", "http://127.0.0.1:2"))
    assert isinstance(request, Request)
    assert request.url == "http://127.0.0.1:2/v1/x?a=1"
    assert request.headers["authorization"] == "Bearer sk-fresh-1234"


def test_moving_the_target_keeps_other_origins_and_port_boundaries() -> None:
    from conformance.cli.replay import _moved

    recorded, target = "https://old.example:8443/mcp", "https://new.example/v2/mcp"
    assert _moved("https://old.example:8443/mcp", recorded, target) == target
    assert _moved("https://old.example:8443/mcp?x=1", recorded, target) == target + "?x=1"
    assert _moved("https://old.example:8443/.well-known/oauth-protected-resource/mcp", recorded, target) == (
        "https://new.example/.well-known/oauth-protected-resource/mcp"
    )
    assert _moved("https://old.example:8443/mcp2", recorded, target) == "https://new.example/mcp2"  # not under /mcp
    assert _moved("https://old.example:9443/mcp", recorded, target) == "https://old.example:9443/mcp"
    assert _moved("https://as.example/token", recorded, target) == "https://as.example/token"


def test_a_fleet_report_needs_the_named_target() -> None:
    from types import SimpleNamespace

    from conformance.cli.replay import _recorded_url, _select_result
    from conformance.core._exceptions import ConformanceError

    results = [SimpleNamespace(rule="TOK-07", target="platform", target_name=n, target_url=None) for n in "ab"]
    report = SimpleNamespace(results=results, targets={"a/platform": "https://a.example", "b/platform": "https://b"})
    with pytest.raises(ConformanceError, match=r"a result per named target \(a, b\); choose one with --target-name"):
        _select_result(report, "tok-07", None)
    chosen = _select_result(report, "TOK-07", "b")
    assert chosen is results[1] and _recorded_url(report, chosen) == "https://b"
    with pytest.raises(ConformanceError, match="no result for TOK-07 on the target named c"):
        _select_result(report, "TOK-07", "c")


# -- end to end -----------------------------------------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    for name in list(os.environ):
        if name.startswith("CONFORMANCE_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no conformance.toml of the checkout
    yield monkeypatch


def _replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["replay", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_replay_reproduces_a_mutants_failed_case_and_a_fixed_servers_pass(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    with serving(tmp_path / "mutant", mutants=frozenset({MUTANT})) as mutant:
        run = forked_harness(
            ["--suite", "platform", "-k", "TOK-07", "-q", "-p", "no:xdist"], report.parent, env=mutant.settings
        )
        tok07 = next(r for r in run.report["results"] if r["rule"] == "TOK-07")
        case = next(c for c in tok07["cases"] if c["case"] == CASE)
        assert (tok07["status"], case["outcome"]) == ("failed", "failed"), tok07["message"]
        key = mutant.settings["CONFORMANCE_PLATFORM_API_KEY"]

        # Without the key the exchange is not sent, and the variable is named.
        code, out = _replay(capsys, str(report), "TOK-07", CASE)
        assert code == 3, out
        assert "needs CONFORMANCE_PLATFORM_API_KEY" in out

        for name, value in mutant.settings.items():
            clean_env.setenv(name, value)
        code, out = _replay(capsys, str(report), "TOK-07", CASE)
        assert code == 0, out
        assert f"case '{CASE}' (expected: refused): recorded failed, now failed" in out
        assert "same: 2xx recorded, 2xx now" in out
        assert "[filled from CONFORMANCE_PLATFORM_API_KEY]" in out
        assert key not in out

        # The HTML's case table says how to send its first failed case again.
        from conformance.report.html import write_html
        from conformance.report.json_writer import read_report

        write_html(read_report(report), tmp_path / "report.html")
        page = (tmp_path / "report.html").read_text(encoding="utf-8")
        assert "conformance replay report.json TOK-07 &#39;unknown content part type&#39;" in page

        # A case whose request carried an altered key is recorded as crafted and not sent again.
        appended = next(c for c in tok07["cases"] if c["case"] == "the real key with characters appended")
        [number] = appended["exchanges"]
        assert tok07["evidence"][number - 1]["request_headers"]["authorization"] == "Bearer [REDACTED:crafted]"
        code, out = _replay(capsys, str(report), "TOK-07", appended["case"])
        assert code == 3 and "a credential the run crafted for the case" in out, out

    with serving(tmp_path / "fixed") as fixed:
        code, out = _replay(capsys, str(report), "TOK-07", CASE, "--target-url", fixed.base_url, "--json")
        assert code == 1, out
        replayed = json.loads(out)
        assert replayed["verdict"] == "differs"
        assert replayed["cases"] == [{"case": CASE, "expected": "refused", "recorded": "failed", "now": "passed"}]
        [exchange] = replayed["exchanges"]
        assert exchange["now"]["url"].startswith(fixed.base_url)
        assert (exchange["recorded"]["status"], exchange["now"]["status"]) == (200, 400)
        assert exchange["now"]["request_headers"]["authorization"] == "Bearer [REDACTED]"
        assert key not in out

    code, out = _replay(capsys, str(report), "TOK-07", "no such case")
    assert code == 2 and "has no case 'no such case'" in out
    code, out = _replay(capsys, str(report), "CAMP-99")
    assert code == 2 and "no result for rule CAMP-99" in out


TOOL_CASE = "the real token under another scheme (Token)"
TOOL_MUTANT = "ts-any-auth-scheme"


def _use_only(env: pytest.MonkeyPatch, settings: dict[str, str]) -> None:
    for name in list(os.environ):
        if name.startswith("CONFORMANCE_"):
            env.delenv(name)
    for name, value in settings.items():
        env.setenv(name, value)


def test_replay_of_a_tool_server_case_links_an_account_for_its_token(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No hand-set token: the replay links test account 1 as a run does, with the settings the environment gives
    (the test account, the host's client), and says what is missing when linking cannot. Against the mutant the
    failed case is reproduced; against a reference tool server it now passes. The stacks' Python services and the
    run are forked from the fork server (tests/_forked.py): how they start is not what is judged here."""
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    with forked_stack(services=["toolserver"], data_dir=tmp_path / "mutant", mutants=[TOOL_MUTANT]) as mutant:
        args = ["--suite", "auth", "-k", "test_missing_or_malformed_authorization", "-q", "-p", "no:xdist"]
        run = forked_harness([*args, "--report-formats", "json"], report.parent, env=mutant.settings)
        tok02 = next(r for r in run.report["results"] if r["rule"] == "AUTH-TOK-02")
        case = next(c for c in tok02["cases"] if c["case"] == TOOL_CASE)
        assert (tok02["status"], case["outcome"]) == ("failed", "failed"), tok02["message"]
        recorded = tok02["evidence"][case["exchanges"][-1] - 1]
        assert recorded["request_headers"]["authorization"] == "Token [REDACTED]"  # the run's token, not crafted

        # The stack's trust and network only: linking needs the test account or the host's client, and says so.
        trust = ("CONFORMANCE_CA_BUNDLE", "CONFORMANCE_ALLOW_PRIVATE_NETWORK")
        _use_only(clean_env, {name: mutant.settings[name] for name in trust})
        code, out = _replay(capsys, str(report), "AUTH-TOK-02", TOOL_CASE)
        assert code == 3, out
        assert f"needs {ACCESS_TOKEN_ENV}: set it in the environment, or supply what linking an account needs" in out
        assert "(needs " in out, out

        _use_only(clean_env, mutant.settings)
        code, out = _replay(capsys, str(report), "AUTH-TOK-02", TOOL_CASE)
        assert code == 0, out
        assert f"case '{TOOL_CASE}' (expected: refused): recorded failed, now failed" in out
        assert "[filled from a fresh access token (test account 1 linked)]" in out
        assert mutant.settings["CONFORMANCE_TEST_PASSWORD"] not in out

    with forked_stack(services=["toolserver"], data_dir=tmp_path / "fixed") as fixed:
        _use_only(clean_env, fixed.settings)
        url = fixed.settings["CONFORMANCE_TARGET_URL"]
        code, out = _replay(capsys, str(report), "AUTH-TOK-02", TOOL_CASE, "--target-url", url, "--json")
        assert code == 1, out
        replayed = json.loads(out)
        assert replayed["cases"] == [{"case": TOOL_CASE, "expected": "refused", "recorded": "failed", "now": "passed"}]
        [exchange] = replayed["exchanges"]
        now = exchange["now"]
        assert (now["status"], now["request_headers"]["authorization"]) == (401, "Token [REDACTED]")


def _judged_now(status: int, body: str, content_type: str = "application/json") -> str:
    from types import SimpleNamespace

    from conformance.cli.replay import Replayed, _judge_cases

    record = {"case": "a forged token", "expected": "refused", "outcome": "failed", "exchanges": [1]}
    now = {"status": status, "response_headers": {"Content-Type": content_type}, "response_body": body}
    done = [Replayed(number=1, recorded={}, case="a forged token", now=now)]
    (verdict,) = _judge_cases(SimpleNamespace(cases=[record]), record, done)
    return verdict.now


def test_an_error_result_in_a_2xx_answer_is_a_refusal() -> None:
    """A tool server may refuse in band: a JSON-RPC error, or an isError result (with its challenge), under 200."""
    error_result = {"jsonrpc": "2.0", "id": 1, "result": {"isError": True, "content": [], "_meta": {}}}
    assert _judged_now(200, json.dumps(error_result)) == "passed"
    assert _judged_now(200, json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001}})) == "passed"
    sse = "event: message\ndata: " + json.dumps(error_result) + "\n\n"
    assert _judged_now(200, sse, "text/event-stream") == "passed"


def test_a_2xx_answer_with_data_is_not_a_refusal() -> None:
    data = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hello"}]}}
    assert _judged_now(200, json.dumps(data)) == "failed"
    assert _judged_now(200, json.dumps({"id": "cmp_1", "status": "active"})) == "failed"  # a platform's JSON
    assert _judged_now(401, "") == "passed"
