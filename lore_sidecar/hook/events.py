"""What both ends of a hook call agree on: the host's event JSON (parsed), the host's
expected output (rendered), the messages an event carries, and the socket between the
hook command and the warm daemon (JSON lines). Standard library only: the hook command
imports this on its fast path."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture.transcripts import prompt_id

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


def prompt_message(prompt: str) -> dict[str, Any]:
    return {"role": "user", "content": prompt, "msg_id": prompt_id(prompt), "created_at": None,
            "tool_name": None, "tool_call_id": None}


def tool_message(p: dict[str, Any]) -> dict[str, Any] | None:
    response = p.get("tool_response")
    if response is None:
        return None
    text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
    call_id = str(p.get("tool_use_id") or "")
    if not call_id:
        return None
    return {"role": "tool", "content": text[:200_000], "msg_id": f"tool-{call_id}", "created_at": None,
            "tool_name": p.get("tool_name"), "tool_call_id": call_id}
