"""What both ends of a hook call agree on: the host's event JSON (parsed), the host's
expected output (rendered), the messages an event carries, and the socket between the
hook command and the warm daemon (JSON lines). Standard library only: the hook command
imports this on its fast path."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path
from typing import Any

CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


def socket_path(store: Path) -> Path:
    """`<store>/hook.sock`, or a short path in /tmp when that is too long for AF_UNIX."""
    path = store / "hook.sock"
    if len(str(path)) < 100:
        return path
    digest = hashlib.sha1(str(store.resolve()).encode()).hexdigest()[:16]
    return Path("/tmp") / f"lore-{os.getuid()}-{digest}.sock"


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


def host_output(event: str, context: str | None) -> dict[str, Any] | None:
    if event in CONTEXT_EVENTS and context:
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    return None
