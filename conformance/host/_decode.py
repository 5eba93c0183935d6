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
from collections.abc import Iterable, Iterator
from typing import Protocol

from conformance.core._exceptions import ResponseTooLarge

ACCEPT_ENCODING = "gzip, deflate"  # what every host client offers: the codings decoded under the cap below
_BOUNDED = frozenset({"gzip", "x-gzip", "deflate"})


STEP = 256 * 1024  # the most a decoder hands on at once: what a bomb costs beyond the cap, per layer


class _Inflater(Protocol):
    """What a ``zlib.decompressobj()`` is to the decoder."""

    @property
    def unconsumed_tail(self) -> bytes: ...

    def decompress(self, data: bytes, max_length: int = 0, /) -> bytes: ...


class _Layer:
    """One zlib-based coding (gzip, or deflate with or without its zlib wrapper, as browsers accept)."""

    def __init__(self, coding: str) -> None:
        gzip = coding != "deflate"
        self._inflater: _Inflater | None = zlib.decompressobj(zlib.MAX_WBITS | 16) if gzip else None
        self._first = b""

    def pieces(self, inputs: Iterable[bytes]) -> Iterator[bytes]:
        """The decoded bytes of ``inputs``, in pieces of at most :data:`STEP` bytes, as they are asked for: nothing
        is decoded ahead of what the reader takes (it stops at the cap)."""
        for data in inputs:
            if self._inflater is None:  # deflate: a zlib stream, or raw deflate; told apart by its first bytes
                self._first += data
                if len(self._first) < 2:
                    continue
                data, self._first = self._first, b""
                header_ok = (data[0] & 0x0F) == 8 and (data[0] << 8 | data[1]) % 31 == 0
                self._inflater = zlib.decompressobj(zlib.MAX_WBITS if header_ok else -zlib.MAX_WBITS)
            while True:
                piece = self._inflater.decompress(data, STEP)
                if piece:
                    yield piece
                data = self._inflater.unconsumed_tail
                if not data and len(piece) < STEP:  # all input taken and nothing held back
                    break


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
        pieces: Iterable[bytes] = (chunk,)
        for layer in self._layers:  # the outermost coding first
            pieces = layer.pieces(pieces)
        for piece in pieces:
            if len(self.body) + len(piece) > self.limit:
                raise ResponseTooLarge(f"response body exceeds {self.limit} bytes")
            self.body.extend(piece)


__all__ = ["ACCEPT_ENCODING", "BoundedBody"]
