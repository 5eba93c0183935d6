"""Response bodies decoded as they arrive, never past the response size cap.

A client that reads a body and decodes it afterwards (or hands each raw chunk to an unbounded decoder, as httpx
does) lets a one-megabyte gzip answer inflate to a gigabyte before any size check runs. :class:`BoundedBody` is
fed the raw bytes off the wire and decodes each layer of ``Content-Encoding`` with zlib's ``max_length``, so no
decoded byte past ``limit`` is ever produced: the answer is refused as too large the moment it would exceed it.

The host offers only the encodings it can decode this way (:data:`ACCEPT_ENCODING`). An encoding it did not offer
and cannot bound (br, zstd, anything else) is not decoded: the body stays as sent, and the response keeps its
``Content-Encoding`` so that a check sees what came.
"""

from __future__ import annotations

import zlib

from conformance._exceptions import ResponseTooLarge

ACCEPT_ENCODING = "gzip, deflate"  # what every host client offers: the codings decoded under the cap below
_BOUNDED = frozenset({"gzip", "x-gzip", "deflate"})


class _Layer:
    """One zlib-based coding (gzip, or deflate with or without its zlib wrapper, as browsers accept)."""

    def __init__(self, coding: str) -> None:
        self.gzip = coding != "deflate"
        self._inflater: zlib._Decompress | None = zlib.decompressobj(zlib.MAX_WBITS | 16) if self.gzip else None
        self._first = b""

    def feed(self, data: bytes, room: int) -> bytes:
        """At most ``room + 1`` decoded bytes of ``data`` (one more than fits says the body is too large)."""
        if self._inflater is None:  # deflate: a zlib stream, or raw deflate; told apart by its first bytes
            self._first += data
            if len(self._first) < 2:
                return b""
            data, self._first = self._first, b""
            header_ok = (data[0] & 0x0F) == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self._inflater = zlib.decompressobj(zlib.MAX_WBITS if header_ok else -zlib.MAX_WBITS)
        # Without its max_length reached, zlib holds nothing back: every decoded byte of ``data`` is returned.
        return self._inflater.decompress(data, room + 1)


class BoundedBody:
    """A response body read under ``limit`` decoded bytes. ``feed`` each raw chunk as it arrives; ``body`` is the
    body (decoded) read so far; ``decoded`` says whether it was decoded (its ``Content-Encoding`` no longer holds).

    Raises :class:`ResponseTooLarge` before the decoded body passes ``limit``, and :class:`zlib.error` for a body
    its coding does not decode."""

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        self.limit = limit
        self.body = bytearray()
        codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        # Decoded only when every layer can be bounded; otherwise kept as sent (see the module's note).
        self.decoded = bool(codings) and all(c in _BOUNDED for c in codings)
        self._layers = [_Layer(c) for c in reversed(codings)] if self.decoded else []

    def feed(self, chunk: bytes) -> None:
        for layer in self._layers:
            if not chunk:
                return
            chunk = layer.feed(chunk, self._room())
            self._check(len(chunk))
        self._check(len(chunk))
        self.body.extend(chunk)

    def _room(self) -> int:
        return max(self.limit - len(self.body), 0)

    def _check(self, more: int) -> None:
        if len(self.body) + more > self.limit:
            raise ResponseTooLarge(f"response body exceeds {self.limit} bytes")


__all__ = ["ACCEPT_ENCODING", "BoundedBody"]
