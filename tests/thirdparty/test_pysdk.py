"""A tool server built as the Python MCP SDK documents it (``pysdk_server.py``): the SDK's auth routes over an
in-memory provider with a sign-in page, ``AuthSettings``, and an introspecting ``TokenVerifier``; over TLS on
127.0.0.1 with a throwaway CA. Dynamic client registration is its only client identity.

Configurations: ``validate_token_resource=True`` (audience checked) and the SDK's default (unset: no check), both
with the host registering itself by DCR; and ``predefined``: the audience-checking server with a client the vendor
registered beforehand (here through the same /register endpoint, as an admin console would), given to the harness
with --client-registration predefined, --client-id and CONFORMANCE_CLIENT_SECRET; and ``short-tokens``: the
audience-checking server issuing 8-second access tokens, so that AUTH-TOK-05 waits one out (on a throwaway token)
while every other check keeps a usable session (refresh, else a new link); and ``local``: the audience-checking
server over plain HTTP on loopback, certified with --allow-insecure-loopback (PASSED LOCALLY at best); and
``session-cookie``: the audience-checking server whose sign-in page leaves a session cookie and whose back-channel
endpoints refuse a POST carrying a cookie without an Origin (a CSRF guard, as better-auth has): a host whose backend
never holds the browser's cookies certifies it as cleanly as ``audience``.
"""

from __future__ import annotations

import json
import ssl
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.thirdparty._support import (
    HERE,
    TEST_PASSWORD,
    TEST_USER,
    HarnessRun,
    Pki,
    assert_pinned,
    assert_spoken,
    free_port,
    run_harness,
    running,
)
from tests.thirdparty.verdicts import (
    PYSDK_AUDIENCE,
    PYSDK_DEFAULT,
    PYSDK_LOCAL,
    PYSDK_PREDEFINED,
    PYSDK_SHORT_TOKENS,
)

TABLES = {
    "audience": PYSDK_AUDIENCE,
    "default": PYSDK_DEFAULT,
    "predefined": PYSDK_PREDEFINED,
    "short-tokens": PYSDK_SHORT_TOKENS,
    "local": PYSDK_LOCAL,
    "session-cookie": PYSDK_AUDIENCE,
}


# The redirect URIs the harness uses for a predefined client without a publisher (README: "predefined client"):
# stable, and callback-specific with the fixed callback id.
PREDEFINED_REDIRECTS = ["http://127.0.0.1/oauth/callback", "http://127.0.0.1/oauth/callback/conformance"]


@dataclass(frozen=True)
class PySdkTarget:
    url: str
    issuer: str
    alt_resource: str
    config: str


@pytest.fixture(scope="module", params=["audience", "default", "predefined", "short-tokens", "local", "session-cookie"])
def pysdk_target(
    request: pytest.FixtureRequest, pki: Pki, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PySdkTarget]:
    as_port, rs_port, other_port = free_port(), free_port(), free_port()
    scheme = "http" if request.param == "local" else "https"
    url, alt = f"{scheme}://127.0.0.1:{rs_port}/mcp", f"{scheme}://127.0.0.1:{other_port}/mcp"
    argv = [sys.executable, str(HERE / "pysdk_server.py"), "--as-port", str(as_port), "--rs-port", str(rs_port)]
    argv += ["--resource", url, "--resource", alt]
    argv += ["--certfile", str(pki.cert), "--keyfile", str(pki.key), "--cafile", str(pki.ca)]
    if request.param != "default":
        argv.append("--check-audience")
    if request.param == "short-tokens":
        argv += ["--access-ttl", "8"]
    if request.param == "local":
        argv.append("--plain-http")
    if request.param == "session-cookie":
        argv.append("--session-cookie")
    env = {"VENDOR_USER": TEST_USER, "VENDOR_PASSWORD": TEST_PASSWORD}
    log = tmp_path_factory.mktemp("pysdk") / "server.log"
    with running(argv, ports=[as_port, rs_port], log=log, env=env, module="tests.thirdparty.pysdk_server"):
        yield PySdkTarget(url, f"{scheme}://127.0.0.1:{as_port}", alt, request.param)


def register_client(issuer: str, ca_file: Path) -> tuple[str, str]:
    """What a vendor does once for a predefined client: register it with the host's redirect URIs."""
    metadata = {
        "client_name": "Assistant host (predefined)",
        "redirect_uris": PREDEFINED_REDIRECTS,
        "token_endpoint_auth_method": "client_secret_post",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": "mcp:tools",
    }
    request = urllib.request.Request(
        f"{issuer}/register", json.dumps(metadata).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    context = ssl.create_default_context(cafile=str(ca_file))
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        client = json.loads(answer.read())
    return str(client["client_id"]), str(client["client_secret"])


# The SDK's server speaks both MCP eras: the host certifies it on its modern side (README, "MCP eras"); the legacy
# side of the audience-checking server gets the same verdicts.
SPOKEN = {"auto": ["modern (2026-07-28)"], "legacy": ["legacy (2025-06-18)"]}


def test_python_sdk_server_verdicts(pysdk_target: PySdkTarget, pki: Pki, tmp_path: Path) -> None:
    run = _certify(pysdk_target, pki, tmp_path, "auto")
    assert_spoken(run, SPOKEN["auto"])
    assert_pinned(run, TABLES[pysdk_target.config])


@pytest.mark.parametrize("pysdk_target", ["audience"], indirect=True)
def test_the_legacy_side_gets_the_same_verdicts(pysdk_target: PySdkTarget, pki: Pki, tmp_path: Path) -> None:
    run = _certify(pysdk_target, pki, tmp_path, "legacy")
    assert_spoken(run, SPOKEN["legacy"])
    assert_pinned(run, TABLES[pysdk_target.config])


def _certify(pysdk_target: PySdkTarget, pki: Pki, tmp_path: Path, era: str) -> HarnessRun:
    extra: list[str] = ["--mcp-era", era]
    env: dict[str, str] = {}
    if pysdk_target.config == "predefined":
        client_id, secret = register_client(pysdk_target.issuer, pki.ca)
        extra += ["--client-registration", "predefined", f"--client-id={client_id}"]  # an id may start with "-"
        extra += ["--client-auth-method", "client_secret_post"]
        env = {"CONFORMANCE_CLIENT_SECRET": secret}
    if pysdk_target.config == "local":
        extra += ["--allow-insecure-loopback"]
    return run_harness(
        tmp_path,
        [
            "--target-url",
            pysdk_target.url,
            "--ca-bundle",
            str(pki.ca),
            "--login-steps",
            str(HERE / "pysdk_login.toml"),
            "--alt-resource",
            pysdk_target.alt_resource,
            *extra,
        ],
        env,
    )


@pytest.mark.parametrize("pysdk_target", ["audience"], indirect=True)
@pytest.mark.parametrize("mistake", ["no login steps", "wrong password"])
def test_a_login_the_harness_cannot_complete_is_incomplete_not_a_failure(
    pysdk_target: PySdkTarget, mistake: str, pki: Pki, tmp_path: Path
) -> None:
    """The vendor forgot --login-steps for its own sign-in page, or gave a wrong password: the harness stops at the
    sign-in page. That is the run's configuration (INCOMPLETE, naming the page), not AUTH-FLOW-01 failing."""
    args = ["--target-url", pysdk_target.url, "--ca-bundle", str(pki.ca)]
    env = {}
    if mistake == "wrong password":
        args += ["--login-steps", str(HERE / "pysdk_login.toml")]
        env = {"CONFORMANCE_TEST_PASSWORD": "not the password"}
    run = run_harness(tmp_path, args, env)
    verdict = run.report["verdict"]
    assert verdict["status"] == "INCOMPLETE" and run.exit_code != 0, verdict
    assert "sign-in page" in verdict["reason"], verdict
    statuses = run.verdicts()
    assert "failed" not in statuses.values(), run.explain([r for r, s in statuses.items() if s == "failed"])
    assert statuses["AUTH-FLOW-01"] == "skipped"
