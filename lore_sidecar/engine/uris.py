"""URI forms for recall hits and nodes (see PROTOCOL.md). Pure."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from lore_sidecar.errors import LoreError

_LINES = re.compile(r"^L(\d{1,9})-L(\d{1,9})$")
MAX_LINES = 10_000


def message_uri(session_id: str, msg_id: str) -> str:
    return f"session://{quote(session_id, safe='')}/{quote(msg_id, safe='')}"


def chunk_uri(project_root: str, rel_path: str, start: int, end: int) -> str:
    return f"{(Path(project_root) / rel_path).as_uri()}#L{start}-L{end}"


def file_path(uri: str) -> str:
    """The path of a `file://` URI as a client sends it (percent-decoded)."""
    return unquote(urlsplit(uri).path)


def is_memory_uri(uri: str) -> bool:
    """A distillation, entity or knowledge-node URI (anything but session/fact/file)."""
    return "://" in uri and not uri.startswith(("session://", "fact://", "file://"))


def parse(uri: str) -> tuple[str, tuple]:
    """("messages", (session_id, msg_id)), ("facts", (fact_id,)) or ("files", (abs_path, start, end))."""
    if uri.startswith("session://"):
        rest = uri[len("session://") :]
        sid, sep, mid = rest.partition("/")
        if not sep or not sid or not mid or "/" in mid:
            raise _bad(uri)
        return "messages", (unquote(sid), unquote(mid))
    if uri.startswith("fact://"):
        fid = uri[len("fact://") :]
        if not fid or "/" in fid:
            raise _bad(uri)
        return "facts", (unquote(fid),)
    if uri.startswith("file://"):
        parts = urlsplit(uri)
        m = _LINES.match(parts.fragment)
        if not parts.path or not m:
            raise _bad(uri)
        start, end = int(m.group(1)), int(m.group(2))
        if start < 1 or end < start or end - start >= MAX_LINES:
            raise LoreError("invalidUri", f"line range must be L<start>-L<end> with 1 <= start <= end and at most "
                            f"{MAX_LINES} lines: {uri[:200]!r}", uri=uri[:200])
        return "files", (unquote(parts.path), start, end)
    raise _bad(uri)


def _bad(uri: str) -> LoreError:
    return LoreError("invalidUri", f"not a URI this server knows: {uri[:200]!r}", uri=uri[:200])
