"""The gateway's private reading of a streamed answer (gateway/sessions.py `sse_events`), for
usage feedback. The SSE format lets a server end its lines with CRLF, LF or CR (WHATWG HTML,
"Server-sent events", parsing an event stream); a proxy or a provider that writes CRLF must be
read like one that writes LF. The reference is the LF form of the same stream, fed in the same
chunks; the control is that the LF form does give its events (hunt7a)."""

from __future__ import annotations

import json

import pytest

from lore_sidecar.gateway.sessions import sse_events, usage_from_events

EVENTS = [("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 120,
                                                                          "cache_read_input_tokens": 3000}}}),
          (None, ": keep-alive comment"),
          ("ping", {"type": "ping"}),
          ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 42}})]


def stream(newline: bytes) -> bytes:
    out = b""
    for name, data in EVENTS:
        if name is None:
            out += data.encode() + newline + newline
            continue
        out += b"event: " + name.encode() + newline + b"data: " + json.dumps(data).encode() + newline + newline
    return out + (b"\n" if newline == b"\r" else b"")


def read(data: bytes, size: int) -> list[dict]:
    """Fed `size` bytes at a time, as the gateway feeds its chunks."""
    events, tail = [], b""
    for i in range(0, len(data), size):
        found, tail = sse_events(tail + data[i:i + size])
        events += found
    return events


@pytest.mark.parametrize("size", [1, 7, 64, 100_000])
@pytest.mark.parametrize("newline", [b"\r\n", b"\r"], ids=["crlf", "cr"])
def test_a_stream_with_crlf_or_cr_line_ends_gives_the_events_and_usage_of_its_lf_form(newline, size):
    """CR alone: a CR that ends the whole stream waits for a next chunk that never comes, so
    the CR form ends with one more LF here (a stream's last event is followed by more in
    practice: the connection's end is not a line end)."""
    reference = read(stream(b"\n"), size)
    assert [e["type"] for e in reference] == ["message_start", "ping", "message_delta"]  # control
    assert read(stream(newline), size) == reference
    usage = usage_from_events("anthropic-messages", read(stream(newline), size))
    assert usage == {"input_tokens": 120, "cache_read_input_tokens": 3000, "output_tokens": 42}


def test_the_decoded_copy_reads_every_gzip_member_however_the_chunks_fall():
    """Members whole in one chunk, a member split across chunks, and junk after the last
    member (what was decoded before it is kept); deflate is one stream, its tail not read."""
    import gzip
    import zlib

    from lore_sidecar.gateway.decoding import Decoder

    parts = [b"event: a\n\n", b"data: {\"usage\": 1}\n\n", b"data: last\n\n"]
    body = b"".join(gzip.compress(p, mtime=0) for p in parts)
    whole = b"".join(parts)
    for cuts in ([len(body)], [7, 30, len(body)], list(range(1, len(body) + 1))):
        d, at, out = Decoder("gzip"), 0, []
        for end in cuts:
            out.append(d.feed(body[at:end]))
            at = end
        assert b"".join(out) == whole, cuts
    d = Decoder("gzip")
    assert d.feed(body + b"\x00junk") == whole and not d.readable
    assert d.feed(gzip.compress(b"more")) == b""  # once broken, nothing more is read
    d = Decoder("deflate")
    assert d.feed(zlib.compress(b"one") + zlib.compress(b"two")) == b"one"


@pytest.mark.parametrize("name", ["x-gzip", "X-GZIP", " gzip "])
def test_x_gzip_and_any_spelling_of_gzip_read_every_member(name):
    """`x-gzip` is gzip (RFC 9110 8.4.1.3), and a coding name is case-insensitive: a body of
    several members reads whole under each spelling, as under `gzip` (the control)."""
    import gzip

    from lore_sidecar.gateway.decoding import Decoder

    parts = [b"event: a\n\n", b"data: {\"usage\": 1}\n\n"]
    body = b"".join(gzip.compress(p, mtime=0) for p in parts)
    assert Decoder("gzip").feed(body) == b"".join(parts)  # control
    assert Decoder(name).feed(body) == b"".join(parts), name
