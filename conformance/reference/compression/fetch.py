"""Fetching ``{source: {url}}`` uploads: size cap, timeout, content check, and a private-address guard.

The guard resolves the host and refuses loopback, private, link-local, reserved and multicast addresses (the usual
server-side request forgery targets, cloud metadata included). The test stack relaxes it for loopback only, so
the harness can serve its own image on 127.0.0.1. Redirects are followed by hand so every hop is guarded. The
check happens at resolution time; a DNS server that answers differently on the connection's own lookup could
still race it, which a production service would close by connecting to the checked address.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from conformance.host.addresses import is_internal, unmapped

from ._tls import client_context
from .engine import sniff

MAX_SOURCE_BYTES = 25 * 1024 * 1024
MAX_REDIRECTS = 3


class SourceError(Exception):
    """The source URL cannot be used; the message is safe to show the client."""


@dataclass(frozen=True)
class SourcePolicy:
    allow_loopback: bool = False
    timeout_s: float = 10.0
    max_bytes: int = MAX_SOURCE_BYTES
    ca_file: str | None = None  # extra trust for https sources (the stack's CA)


def _check_address(host: str, port: int, policy: SourcePolicy) -> None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise SourceError("the source host does not resolve") from exc
    for info in infos:
        address = unmapped(ipaddress.ip_address(info[4][0]))
        if address.is_loopback and policy.allow_loopback:
            continue
        if is_internal(address):
            raise SourceError("the source URL points to a private or loopback address")


def fetch_source(url: object, policy: SourcePolicy) -> bytes:
    """The image bytes at ``url``, or SourceError."""
    if not isinstance(url, str) or len(url) > 2048:
        raise SourceError("source.url must be a URL string")
    verify = client_context(policy.ca_file)
    with httpx.Client(timeout=policy.timeout_s, verify=verify, follow_redirects=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                parts = urlsplit(url)
                host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
            except ValueError as exc:  # bad IPv6 literal, bad port
                raise SourceError("source.url is not a valid URL") from exc
            if parts.scheme not in ("http", "https") or not host:
                raise SourceError("source.url must be an http or https URL")
            _check_address(host, port, policy)
            try:
                with client.stream("GET", url, headers={"Accept": "image/png, image/jpeg"}) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code != 200:
                        raise SourceError(f"the source answered {response.status_code}")
                    declared = response.headers.get("content-length")
                    if declared and declared.isdigit() and int(declared) > policy.max_bytes:
                        raise SourceError("the source is too large")
                    body = bytearray()
                    for chunk in response.iter_bytes():
                        body += chunk
                        if len(body) > policy.max_bytes:
                            raise SourceError("the source is too large")
            except httpx.HTTPError as exc:
                raise SourceError("the source could not be fetched") from exc
            if sniff(bytes(body)) is None:
                raise SourceError("the source is not a PNG or JPEG image")
            return bytes(body)
    raise SourceError("too many redirects")
