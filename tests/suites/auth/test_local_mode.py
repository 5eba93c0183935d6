"""Local mode: with --allow-insecure-loopback a development server over plain HTTP on loopback has its
transport-only requirements skipped ("transport not judged: loopback run"), every other part still judged, and the
run reads PASSED LOCALLY. Without the flag the same server fails them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from conformance.config import Target
from conformance.host.asmeta import AsMetadata
from conformance.host.discovery import PrmDiscovery
from conformance.suites._linking import host_refusal
from tests._checks_run import run_checks
from tests._serving import serve_http


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        documents: dict[str, Any] = {
            "/.well-known/oauth-protected-resource/mcp": {"resource": f"{base}/mcp", "authorization_servers": [base]},
            "/.well-known/oauth-authorization-server": {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "code_challenge_methods_supported": ["S256"],
            },
        }
        document = documents.get(self.path)
        body = json.dumps(document).encode() if document else b"{}"
        self.send_response(200 if document else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def plain_http_server() -> Iterator[str]:
    with serve_http(_Handler) as origin:
        yield f"{origin}/mcp"


CHECKS = """
from conformance.suites.auth.test_prm import test_metadata_is_served, test_resource_is_canonical
from conformance.suites.auth.test_asmeta import test_endpoints_are_https, test_s256_is_advertised
"""


def run(pytester: pytest.Pytester, url: str, *flags: str) -> tuple[int, dict[str, Any], str]:
    pytester.makepyfile(test_local=CHECKS)
    result = run_checks(pytester, "--target-url", url, "--allow-private-network", *flags, "test_local.py")
    return result.ret, result.report, result.stdout.str()


def test_loopback_run_skips_transport_and_passes_locally(pytester: pytest.Pytester, plain_http_server: str) -> None:
    code, report, out = run(pytester, plain_http_server, "--allow-insecure-loopback")
    by_rule = {r["rule"]: r for r in report["results"]}
    for rule in ("AUTH-PRM-01", "AUTH-PRM-02", "AUTH-ASM-04"):
        assert by_rule[rule]["status"] == "skipped", by_rule[rule]
        assert by_rule[rule]["message"].startswith("transport not judged: loopback run"), by_rule[rule]
    assert by_rule["AUTH-ASM-03"]["status"] == "passed"  # everything else is decided
    assert report["verdict"]["status"] == "PASSED LOCALLY" and code == 0, out[-2000:]


def test_without_the_flag_plain_http_is_judged(pytester: pytest.Pytester, plain_http_server: str) -> None:
    code, report, _ = run(pytester, plain_http_server)
    statuses = {r["rule"]: r["status"] for r in report["results"]}
    assert statuses["AUTH-PRM-01"] == "failed"
    assert report["verdict"]["status"] == "NOT ACCEPTED" and code == 1


def test_loopback_run_still_fails_what_is_not_transport(pytester: pytest.Pytester) -> None:
    """A resource that is not the URL the host connects to fails AUTH-PRM-02 even on a loopback run."""
    pytester.makeconftest(
        """
import pytest
from conformance.host.discovery import PrmDiscovery

@pytest.fixture(scope="session")
def prm_discovery():
    return PrmDiscovery(url="http://127.0.0.1:9/x", document={"resource": "http://127.0.0.1:9/other"},
                        via="root", challenge=None)

@pytest.fixture(scope="session")
def tool_server_target(conformance_settings):
    return conformance_settings.target("tool_server")  # nothing listens on port 9: only the documents are judged
"""
    )
    pytester.makepyfile(test_local="from conformance.suites.auth.test_prm import test_resource_is_canonical")
    result = run_checks(
        pytester, "--target-url", "http://127.0.0.1:9/mcp", "--allow-insecure-loopback", "test_local.py"
    )
    assert result.statuses()["AUTH-PRM-02"] == "failed"
    assert result.ret == 1


def test_a_host_does_not_refuse_plain_http_endpoints_on_a_loopback_run() -> None:
    base = "http://127.0.0.1:8080"
    prm = PrmDiscovery(url=f"{base}/.well-known", document={"resource": f"{base}/mcp"}, via="root", challenge=None)
    meta = AsMetadata(
        expected_issuer=base,
        url=f"{base}/.well-known/oauth-authorization-server",
        via="oauth",
        document={
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "code_challenge_methods_supported": ["S256"],
        },
    )
    target = Target("tool_server", f"{base}/mcp")
    refused = host_refusal(prm, meta, target)
    assert refused is not None and refused[0] == "AUTH-ASM-04"
    assert host_refusal(prm, meta, target, judged=lambda url: False) is None


def test_img_tls_is_not_judged_on_a_loopback_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_COMPRESSION_API_KEY", "conformance-test-key")
    pytester.makeconftest(
        """
import pytest
from conformance.suites.compression.client import Api

@pytest.fixture(scope="session")
def compression_target(conformance_settings):
    return conformance_settings.target("compression")  # nothing listens on port 9: the check sends no request

@pytest.fixture(scope="session")
def api(host_http, compression_target):
    return Api(host_http, compression_target)
"""
    )
    pytester.makepyfile(test_tls="from conformance.suites.compression.test_upload import test_plain_http_refused")
    url = "http://127.0.0.1:9/"
    args = ["--compression-url", url, "test_tls.py"]
    result = run_checks(pytester, *args, "--allow-insecure-loopback").by_rule["IMG-TLS-01"]
    assert result["status"] == "skipped" and result["message"].startswith("transport not judged"), result
    result = run_checks(pytester, *args).by_rule["IMG-TLS-01"]
    assert result["status"] == "failed", result  # MUST: judged (and broken) without the flag
