"""What both ends of a hook call agree on: the host's event JSON (parsed), the host's
expected output (rendered), the messages an event carries, and the socket between the
hook command and the warm daemon (JSON lines). Standard library only: the hook command
imports this on its fast path."""

from __future__ import annotations

import hashlib
import os
import socket
import stat
from pathlib import Path
from typing import Any

CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


def socket_path(store: Path) -> Path:
    """`<store>/hook.sock`, or a short path in a private folder of /tmp when that is too long
    for AF_UNIX (`/tmp/lore-<uid>/`, 0700: a name another user could take first in /tmp
    itself would let them pose as the daemon and read every hook event)."""
    path = store / "hook.sock"
    if len(str(path)) < 100:
        return path
    digest = hashlib.sha1(str(store.resolve()).encode()).hexdigest()[:16]
    return Path("/tmp") / f"lore-{os.getuid()}" / f"{digest}.sock"


def private_socket_dir(path: Path, *, create: bool) -> bool:
    """Whether the socket's folder is safe to use: the store itself, or the /tmp folder made
    (when `create`) 0700 and owned by this user — never a folder someone else made or opened."""
    folder = path.parent
    if folder.parent != Path("/tmp"):
        return True  # inside the store: the store's own permissions apply
    if create:
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def store_dir_of(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("LORE_STORE_DIR"):
        return Path(os.environ["LORE_STORE_DIR"]).expanduser()
    from lore_sidecar.settings import default_store_dir

    return default_store_dir()


def recv_line(s: socket.socket) -> bytes:
    """One newline-terminated message (both ends of the hook socket speak JSON lines)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def event_of(request: dict[str, Any]) -> tuple[str, dict[str, Any], str, str, str]:
    """(event, payload, session id, cwd, harness) of a hook request; refused without a session."""
    p = request["payload"]
    session_id = str(p.get("session_id") or p.get("sessionId") or "")
    if not session_id:
        raise ValueError("the hook input has no session_id")
    return request["event"], p, session_id, request["cwd"], str(p.get("harness") or "claude-code")


def host_output(event: str, context: str | None, harness: str = "claude-code") -> dict[str, Any] | None:
    """The context in the shape the host reads. Copilot CLI takes Claude Code's hook schema but
    reads a flat `additionalContext` for these events (its wrapper is honoured only for
    PreToolUse): the wrapped shape would be dropped silently."""
    if event in CONTEXT_EVENTS and context:
        if harness == "copilot":
            return {"additionalContext": context}
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    return None
