"""The sandbox as the stack runs it: a child process over TLS, its mutants switched by ``--mutant``."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx

from conformance.reference._service import StackContext
from conformance.reference.platform import services
from conformance.reference.stack import running_stack


def test_services_spec_passes_only_its_own_mutants(tmp_path: Path) -> None:
    ctx = StackContext(
        data_dir=tmp_path,
        ca_file=tmp_path / "ca.pem",
        cert_file=tmp_path / "cert.pem",
        key_file=tmp_path / "key.pem",
        mutants=frozenset({"wrong-bidding-default", "a-mutant-of-another-service"}),
    )
    (spec,) = services(ctx)
    assert spec.argv[1:3] == ["-m", "conformance.reference.platform"]
    assert spec.argv[-2:] == ["--mutant", "wrong-bidding-default"]
    assert spec.health_url.startswith("https://127.0.0.1:") and spec.health_url.endswith("/healthz")
    assert spec.settings["CONFORMANCE_PLATFORM_URL"] == spec.health_url.removesuffix("/healthz")


def test_child_process_over_tls_with_a_mutant(tmp_path: Path) -> None:
    with running_stack(services=["platform"], mutants=["wrong-bidding-default"], data_dir=tmp_path) as stack:
        settings = stack.settings
        verify = ssl.create_default_context(cafile=str(stack.ca_file))
        auth = {"Authorization": f"Bearer {settings['CONFORMANCE_PLATFORM_API_KEY']}"}
        with httpx.Client(base_url=settings["CONFORMANCE_PLATFORM_URL"], headers=auth, verify=verify) as client:
            body = {"name": "over TLS", "status": "paused", "budget": {"lifetime_spend_limit_micros": 1_000_000}}
            campaign = client.post("/v1/campaigns", json=body).json()
    assert campaign["bidding_type"] == "clicks"  # the mutant's defect
    assert (tmp_path / "platform" / "platform.sqlite3").is_file()
