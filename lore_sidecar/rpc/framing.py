"""LSP base-protocol framing that survives hostile input.

Stock pygls trusts its input: invalid JSON goes unanswered, one bad header swallows the next
frame, and `Content-Length: 1000000000000` makes it try to read a terabyte. This parser is
incremental and bounded: it caps header lines and bodies, reports what it had to skip, and
resynchronises on the next `Content-Length:` header.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_BODY = 64 * 1024 * 1024
MAX_HEADER_LINE = 8 * 1024
MAX_HEADERS = 32
_CL = re.compile(rb"^content-length:[ \t]*(\d{1,20})[ \t]*$", re.I)
_HEADER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*:")
_MARK = b"content-length:"


@dataclass(frozen=True, slots=True)
class Frame:
    body: bytes


@dataclass(frozen=True, slots=True)
class Skipped:
    """Bytes that were not a well-formed frame. `request_id` is set when the skipped bytes
    still parse as a request, so its sender can get an error instead of waiting forever."""

    reason: str
    request_id: int | str | None = None


Event = Frame | Skipped


def _find_mark(buf: bytearray, start: int = 0) -> int:
    """Offset of the next `Content-Length:` at or after `start`, or -1. Frames follow each
    other with no separator (`...}Content-Length: ...`), so the marker may start anywhere.
    Only `buf[start:]` is copied and lowered: a resync searches each byte about once."""
    pos = bytes(buf[start:]).lower().find(_MARK)
    return pos + start if pos >= 0 else -1


MAX_DEPTH = 128  # nesting a request may have; LSP's deepest real messages use a dozen
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')
_BRACKETS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Nested deeper than `limit`? Linear, without recursion: strings are cut out by one
    regex pass, and only the brackets left are walked."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for ch in _NOT_BRACKET.sub(b"", _STRING.sub(b"", body)).translate(_BRACKETS):
        depth += 1 if ch == 1 else -1
        if depth > limit:
            return True
    return False


def top_level_id(body: bytes) -> int | str | None:
    """The request id of a body that cannot be parsed whole (too deep), when it stands at
    the top level of the object: found by a bounded scan, never by parsing the nesting."""
    head = body[:65536]
    depth, i, n = 0, 0, len(head)
    while i < n:
        ch = head[i]
        if ch == 0x22:  # a string: the key "id" at depth 1?
            m = _STRING.match(head, i)
            if m is None:
                return None
            if depth == 1 and m.group(0) == b'"id"':
                v = re.match(rb'\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")', head[m.end():])
                if v:
                    try:
                        value = json.loads(v.group(1))
                    except ValueError:
                        return None
                    return value
            i = m.end()
            continue
        if ch in b"[{":
            depth += 1
        elif ch in b"]}":
            depth -= 1
        i += 1
    return None


def _id_of(junk: bytes) -> int | str | None:
    text = junk.strip()
    if not text.startswith(b"{"):
        return None
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(obj, dict) and "method" in obj:
        rid = obj.get("id")
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return rid
    return None


class FrameParser:
    def __init__(self, *, max_body: int = MAX_BODY):
        self.max_body = max_body
        self._buf = bytearray()
        self._length: int | None = None  # declared length of the header block being read
        self._headers = 0
        self._body_len: int | None = None  # set while reading a body
        self._resync = False
        self._resync_reason = ""
        # While resynchronising: how much of the buffer was searched for the marker and did
        # not hold it. Trigger: junk written to stdin (a log line, then data with no header)
        # was searched whole at every read, quadratic: 4 MB of it kept the reader busy 12 s,
        # 64 MB some minutes, no frame read meanwhile (rev9). Outcome: each read searches
        # only what it added, plus a marker's length less one (a marker split across reads).
        self._searched = 0

    def feed(self, data: bytes) -> list[Event]:
        self._buf += data
        out: list[Event] = []
        while True:
            if self._resync:
                pos = _find_mark(self._buf, max(0, self._searched - len(_MARK) + 1))
                if pos < 0:
                    # Keep a tail in case the marker is split across reads.
                    if len(self._buf) > MAX_BODY:
                        del self._buf[: -len(_MARK)]
                    self._searched = len(self._buf)
                    return out
                out.append(Skipped(self._resync_reason, _id_of(bytes(self._buf[:pos]))))
                del self._buf[:pos]
                self._resync, self._searched = False, 0
                continue
            if self._body_len is not None:
                if len(self._buf) < self._body_len:
                    return out
                body = bytes(self._buf[: self._body_len])
                del self._buf[: self._body_len]
                self._body_len = None
                out.extend(self._body(body))
                continue
            nl = self._buf.find(b"\n")
            if nl < 0:
                if len(self._buf) > MAX_HEADER_LINE:
                    self._bad("header line too long")
                    continue
                return out
            line = bytes(self._buf[:nl]).rstrip(b"\r")
            del self._buf[: nl + 1]
            if not line.strip():
                if self._length is not None:
                    self._body_len, self._length, self._headers = self._length, None, 0
                elif self._headers:
                    self._bad("header block without Content-Length")
                continue  # blank lines between frames are tolerated
            m = _CL.match(line)
            if m:
                n = int(m.group(1))
                if n > self.max_body:
                    self._bad(f"frame of {n} bytes exceeds the {self.max_body}-byte limit")
                    continue
                self._length = n
                self._headers += 1
            elif _HEADER.match(line) and self._headers < MAX_HEADERS:
                self._headers += 1  # Content-Type and friends: accepted, ignored
            else:
                self._bad("malformed header")
        return out

    def _body(self, body: bytes) -> list[Event]:
        """A body of the declared length. If it does not parse but contains the start of
        another frame, the declared length was wrong: keep the rest for the next round."""
        if too_deep(body):
            return [Frame(body)]  # the dispatcher refuses it, with its id when one can be read
        try:
            json.loads(body)
            return [Frame(body)]
        except (ValueError, UnicodeDecodeError, RecursionError):
            pass
        pos = _find_mark(bytearray(body), 1)
        if pos > 0:
            self._buf[:0] = body[pos:]
            return [Skipped("body shorter than its Content-Length", _id_of(body[:pos]))]
        return [Frame(body)]  # unparsable: the caller answers -32700

    def _bad(self, reason: str) -> None:
        self._length, self._headers, self._body_len = None, 0, None
        self._resync, self._resync_reason, self._searched = True, reason, 0

    def finish(self) -> list[Event]:
        """End of input: report anything left half-read."""
        rest = bytes(self._buf).strip()
        self._buf.clear()
        if self._resync or self._body_len is not None or self._length is not None or rest:
            return [Skipped(self._resync_reason or "truncated frame at end of input", _id_of(rest))]
        return []


def encode(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
