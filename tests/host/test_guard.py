"""The URL guard: HTTPS only, loopback HTTP on request, no metadata-driven trips into internal networks."""

from __future__ import annotations

import pytest

from conformance import UrlRefused
from conformance.host._guard import UrlGuard


@pytest.mark.parametrize("url", ["http://example.com/x", "ftp://example.com/x", "file:///etc/passwd", "/relative"])
def test_only_https_by_default(url: str) -> None:
    with pytest.raises(UrlRefused):
        UrlGuard().check(url)


def test_loopback_http_needs_the_option() -> None:
    with pytest.raises(UrlRefused, match="allow-insecure-loopback"):
        UrlGuard().check("http://127.0.0.1:8000/mcp")
    for url in ("http://127.0.0.1:8000/mcp", "http://localhost:1/x", "http://[::1]:9/x"):
        UrlGuard(allow_insecure_loopback=True).check(url)
    with pytest.raises(UrlRefused):
        UrlGuard(allow_insecure_loopback=True).check("http://10.0.0.5/x")


@pytest.mark.parametrize(
    "url",
    [
        "https://169.254.169.254/latest/meta-data",
        "https://10.1.2.3/x",
        "https://192.168.1.1/x",
        "https://172.16.0.1/x",
        "https://[fe80::1]/x",
        "https://127.0.0.1/x",
        "https://localhost/x",
        "https://0.0.0.0/x",
        "https://[::ffff:169.254.169.254]/x",  # an IPv4-mapped address is judged as the IPv4 one it stands for
        "https://[::ffff:10.1.2.3]/x",
    ],
)
def test_metadata_driven_internal_addresses_are_refused(url: str) -> None:
    guard = UrlGuard()
    guard.check(url)  # configured by the user: allowed
    with pytest.raises(UrlRefused, match="allow-private-network"):
        guard.check(url, metadata_driven=True)
    UrlGuard(allow_private_network=True).check(url, metadata_driven=True)


def test_configured_target_hosts_are_trusted_for_metadata() -> None:
    UrlGuard(trusted_hosts={"10.1.2.3"}).check("https://10.1.2.3/.well-known/x", metadata_driven=True)


def test_loopback_target_allows_loopback_metadata() -> None:
    UrlGuard(allow_insecure_loopback=True).check("https://127.0.0.1:9/x", metadata_driven=True)


def test_public_address_literal_is_fine() -> None:
    UrlGuard().check("https://93.184.216.34/x", metadata_driven=True)
    UrlGuard().check("https://[::ffff:93.184.216.34]/x", metadata_driven=True)  # mapped: as the IPv4 address
