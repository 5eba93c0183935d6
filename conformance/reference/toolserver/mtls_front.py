"""The mTLS front of the reference tool server: a TLS listener that requires the host's client certificate and
forwards the connection to the tool server's own port.

What it checks, as the contract's "Authentication" item 5 asks: the client certificate is present and chains to
the configured connector intermediate (the intermediate is the trust anchor: partial-chain verification, so a
leaf of any other CA fails the handshake); it is valid for client authentication (OpenSSL checks the clientAuth
purpose of client certificates on the server side); and its SAN dnsName equals the configured name (checked once
the handshake is done: a mismatch closes the connection before any byte is forwarded). No leaf pinning: every leaf
of the intermediate with that name passes (leaves rotate).

It runs in the tool server's process and event loop (``python -m conformance.reference.toolserver --mtls-port``):
no extra process, and it is listening once the tool server answers its health check.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ssl
from dataclasses import dataclass, field

CHUNK = 64 * 1024
X509_PURPOSE_ANY = 7  # OpenSSL's x509v3.h
SSL_VERIFY_PEER_REQUIRED = 3  # SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT (ssl.CERT_REQUIRED)


@dataclass
class MtlsFront:
    certfile: str  # the front's own server certificate (the stack's)
    keyfile: str
    trust_file: str  # the connector intermediate CA the client leaf must chain to
    dns_name: str  # the SAN dnsName the client certificate must carry
    upstream_host: str
    upstream_port: int
    upstream_ca: str | None = None  # CA of the tool server's TLS certificate
    check_san: bool = True  # False: the ts-mtls-accept-wrong-san mutant
    san_prefix: bool = False  # True: the ts-mtls-san-prefix mutant (a SAN that starts with the name passes)
    pin_first_leaf: bool = False  # True: the ts-mtls-pin-first-leaf mutant (only the first leaf seen passes)
    any_purpose: bool = False  # True: the ts-mtls-accept-server-eku mutant (the clientAuth purpose is not checked)
    _pinned: bytes | None = field(default=None, init=False, repr=False)

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certfile, self.keyfile)
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(self.trust_file)
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # trust anchor = the intermediate itself
        if self.any_purpose:
            _accept_any_purpose(context)
        return context

    def upstream_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.upstream_ca)

    async def start(self, host: str, port: int) -> asyncio.Server:
        self._upstream_ssl = self.upstream_context()
        return await asyncio.start_server(self._handle, host, port, ssl=self.server_context())

    def san_ok(self, writer: asyncio.StreamWriter) -> bool:
        ssl_object = writer.get_extra_info("ssl_object")
        peer = ssl_object.getpeercert() if ssl_object is not None else None
        names = [value for kind, value in (peer or {}).get("subjectAltName", ()) if kind == "DNS"]
        if self.pin_first_leaf and ssl_object is not None:
            # Trust on first use: the first leaf's DER is remembered, and only it passes afterwards.
            leaf = ssl_object.getpeercert(binary_form=True)
            if self._pinned is None:
                self._pinned = leaf
            elif leaf != self._pinned:
                return False
        if self.san_prefix and any(name.startswith(self.dns_name) for name in names):
            return True
        return self.dns_name in names or (not self.check_san and bool(peer))

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not self.san_ok(writer):
                return
            up_reader, up_writer = await asyncio.open_connection(
                self.upstream_host, self.upstream_port, ssl=self._upstream_ssl, server_hostname=self.upstream_host
            )
            pipes = [asyncio.create_task(_pipe(reader, up_writer)), asyncio.create_task(_pipe(up_reader, writer))]
            try:
                # TLS has no half-close: when either side is done, the exchange is over.
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in pipes:
                    task.cancel()
                up_writer.close()
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError):
            return  # a client or the upstream went away: nothing to report to anyone
        finally:
            writer.close()


def _accept_any_purpose(context: ssl.SSLContext) -> None:
    """Verify client certificates for any purpose (OpenSSL's ``SSL_CTX_set_purpose``), so that a leaf without the
    clientAuth EKU passes. Python's ssl module has no API for it: the function is called through the libssl the
    ``_ssl`` extension itself uses, on the ``SSL_CTX`` the context object holds first after its object header (checked
    by reading its verify mode back before anything is changed)."""
    from conformance.core._shortcuts import ssl_extension_file

    extension = ssl_extension_file()
    if extension is None:
        raise RuntimeError("this Python's ssl module has no extension file to reach OpenSSL through")
    library = ctypes.CDLL(extension)
    try:
        get_mode, set_purpose = library.SSL_CTX_get_verify_mode, library.SSL_CTX_set_purpose
    except AttributeError:
        raise RuntimeError("this Python's ssl module does not expose OpenSSL's SSL_CTX_set_purpose") from None
    get_mode.argtypes, get_mode.restype = [ctypes.c_void_p], ctypes.c_int
    set_purpose.argtypes, set_purpose.restype = [ctypes.c_void_p, ctypes.c_int], ctypes.c_int
    pointer = ctypes.c_void_p.from_address(id(context) + object.__basicsize__).value
    if context.verify_mode != ssl.CERT_REQUIRED or get_mode(pointer) != SSL_VERIFY_PEER_REQUIRED:
        raise RuntimeError("could not reach the SSL_CTX of the front's TLS context")
    if set_purpose(pointer, X509_PURPOSE_ANY) != 1:
        raise RuntimeError("SSL_CTX_set_purpose failed")


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, ssl.SSLError):
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
