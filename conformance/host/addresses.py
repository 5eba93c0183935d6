"""Which IP addresses are internal: the usual server-side request forgery targets (private, loopback, link-local,
reserved, multicast, unspecified; cloud metadata included). The one predicate of the host's URL guard (``_guard``)
and of the reference compression sandbox's source-URL guard; it imports nothing of the package, so ``reference/``
may use it (ARCHITECTURE.md, "Layers")."""

from __future__ import annotations

import ipaddress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def unmapped(address: Address) -> Address:
    """An IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) as the IPv4 address it stands for."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def is_internal(address: Address) -> bool:
    address = unmapped(address)
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
    )
