"""A private decoded copy of an answer the harness receives encoded.

The gateway passes the provider's bytes and `Content-Encoding` to the harness untouched (it
asked for that encoding itself); only the copy it reads for usage feedback is decoded here.
gzip and deflate (zlib-wrapped or raw, as servers send both) are decoded with the standard
library; anything else (br, zstd) is passed through and simply not read: no usage is
recorded for it, the harness is unaffected.
"""

from __future__ import annotations

import zlib

GZIP = ("gzip", "x-gzip")  # gzip's two names (RFC 9110 8.4.1.3)


class Decoder:
    """Feed encoded chunks, get decoded bytes; never raises (a broken stream reads as nothing)."""

    def __init__(self, encoding: str | None):
        name = (encoding or "identity").strip().lower()
        self.readable = name in ("", "identity", *GZIP, "deflate")
        self._identity = name in ("", "identity")
        self._name = name
        self._z = None  # made at the first chunk: deflate's flavour is read from its first bytes

    @staticmethod
    def _wbits(name: str, first: bytes | None) -> int:
        if name in GZIP:
            return 16 + zlib.MAX_WBITS
        # deflate: RFC 9110 means zlib-wrapped, but raw deflate is common; a zlib header's first
        # byte has 8 as its low nibble (CM=8) and the 16-bit header is a multiple of 31.
        if first is not None and len(first) >= 2 and first[0] & 0x0F == 8 and int.from_bytes(first[:2], "big") % 31 == 0:
            return zlib.MAX_WBITS
        return -zlib.MAX_WBITS

    def feed(self, chunk: bytes) -> bytes:
        if self._identity:
            return chunk
        if not self.readable or not chunk:
            return b""
        out: list[bytes] = []
        try:
            while chunk:
                if self._z is None:
                    self._z = zlib.decompressobj(self._wbits(self._name, chunk))
                out.append(self._z.decompress(chunk))
                if not self._z.eof:
                    break
                # A gzip body may be several members one after another (RFC 1952 2.2), as a
                # server that compresses each flushed event gives: the next member starts in
                # what this one left over, or in the next chunk. deflate is one stream.
                if self._name not in GZIP:
                    break  # what follows its end is not read
                chunk, self._z = self._z.unused_data, None
        except zlib.error:
            self.readable = False
        return b"".join(out)
