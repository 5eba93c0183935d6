"""The URL guard: which URLs the host is willing to fetch.

HTTPS only, except plain HTTP to loopback when ``--allow-insecure-loopback`` is set. URLs the host did not get from
its configuration (metadata documents, challenges, redirects) must not lead it into private or link-local networks
unless ``--allow-private-network`` is set or the address belongs to a configured target's host.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from conformance.core._exceptions import UrlRefused
from conformance.host.addresses import is_internal

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def is_loopback_host(host: str) -> bool:
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    if is_loopback_host(host):
        return [ipaddress.ip_address("127.0.0.1")]
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []  # unresolvable: the request itself will fail with a clear error
    found = []
    for info in infos:
        try:
            found.append(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]))
        except ValueError:
            continue
    return found


class UrlGuard:
    def __init__(
        self,
        *,
        allow_insecure_loopback: bool = False,
        allow_private_network: bool = False,
        trusted_hosts: set[str] | None = None,
    ) -> None:
        self.allow_insecure_loopback = allow_insecure_loopback
        self.allow_private_network = allow_private_network
        self.trusted_hosts = {h.lower() for h in (trusted_hosts or set())}

    def check(self, url: str, *, metadata_driven: bool = False) -> None:
        """Raise :class:`UrlRefused` when the host must not fetch ``url``."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        if scheme not in ("http", "https") or not host:
            raise UrlRefused(f"refused to fetch {url!r}: only absolute https URLs are fetched")
        if scheme == "http" and not (self.allow_insecure_loopback and is_loopback_host(host)):
            hint = " (use --allow-insecure-loopback for a local target)" if is_loopback_host(host) else ""
            raise UrlRefused(f"refused to fetch {url!r}: plain HTTP is not allowed{hint}")
        if not metadata_driven or self.allow_private_network or host in self.trusted_hosts:
            return
        if is_loopback_host(host) and self.allow_insecure_loopback:
            return
        internal = [str(a) for a in _addresses(host) if is_internal(a)]
        if internal:
            raise UrlRefused(
                f"refused to fetch {url!r}: a URL taken from a target's answer points to an internal address "
                f"({', '.join(sorted(set(internal)))}); use --allow-private-network to allow it"
            )
