"""`lore-sidecar hook <event>`: a short-lived command for hosts that run hook commands.

It reads the host's JSON event on stdin (Claude Code's shape: `session_id`, `cwd`,
`prompt`, `hook_event_name`; Codex sends the same keys), talks to the store — joining the
running writer through the spool, or becoming the writer if none runs — and prints what the
host expects on stdout: `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`.
It fails open: on any problem it prints nothing and exits 0, so memory never blocks work.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, TextIO

log = logging.getLogger(__name__)
CONTEXT_EVENTS = {"SessionStart", "UserPromptSubmit"}


def run_hook(event: str, stdin: TextIO, stdout: TextIO, *, store_dir: str | None = None) -> int:
    try:
        payload = json.loads(stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        out = handle(event, payload, store_dir=store_dir)
        if out is not None:
            stdout.write(json.dumps(out))
            stdout.flush()
    except Exception:  # fail open: the host carries on without memory
        log.exception("hook %s failed; the host continues without memory", event)
    return 0


def handle(event: str, payload: dict[str, Any], *, store_dir: str | None) -> dict[str, Any] | None:
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    session_id = str(payload.get("session_id") or payload.get("sessionId") or "")
    cwd = str(payload.get("cwd") or Path.cwd())
    if not session_id:
        raise ValueError("the hook input has no session_id")
    settings, _ = load_settings(workspace_root=Path(cwd), cli={"storeDir": store_dir} if store_dir else {})
    engine = open_engine(settings, [cwd], start_indexer=True)
    try:
        harness = str(payload.get("harness") or "claude-code")
        if event == "UserPromptSubmit":
            prompt = str(payload.get("prompt") or "")
            result = engine.prompt_submit(session_id=session_id, prompt=prompt, harness=harness, project=cwd)
            if prompt.strip():  # capture the prompt itself, idempotently per prompt text
                import hashlib

                msg_id = "prompt-" + hashlib.sha1(prompt.encode()).hexdigest()[:16]
                engine.record_messages(project=cwd, session_id=session_id, harness=harness, messages=[
                    {"role": "user", "content": prompt, "msg_id": msg_id, "created_at": None, "tool_name": None, "tool_call_id": None}
                ])
        elif event == "SessionStart":
            result = engine.session_start(session_id=session_id, harness=harness, cwd=cwd)
        else:
            return None  # Stop / SessionEnd: nothing to inject
        if event in CONTEXT_EVENTS and result.get("context"):
            return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": result["context"]}}
        return None
    finally:
        engine.close()
