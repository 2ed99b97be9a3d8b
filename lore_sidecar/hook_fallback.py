"""The hook's degraded path, when no daemon is warm: durable capture through the spool and
lexical recall from the published index, read-only. No writer lock, no embedder, no watcher:
whatever this process does, the writer (the daemon just started, or any sidecar) applies."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture import messages as capture
from lore_sidecar.engine.lifecycle import blocks as lifecycle
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.hook import event_of, host_output
from lore_sidecar.hook_daemon import prompt_message, tool_message


def degraded(store: Path, request: dict[str, Any], *, deadline: float) -> dict[str, Any]:
    event, p, session_id, cwd, harness = event_of(request)
    root = canonical_root(cwd)
    context = None
    if event == "UserPromptSubmit":
        prompt = str(p.get("prompt") or "")
        if time.monotonic() < deadline:
            context = _recall_block(store, root, session_id, prompt)
        if prompt.strip():
            _spool(store, root, session_id, harness, prompt_message(prompt))
    elif event == "PostToolUse":
        message = tool_message(p)
        if message is not None:
            _spool(store, root, session_id, harness, message)
    elif event == "SessionStart":
        context = lifecycle.DEFAULT_GUIDANCE
    # Stop / SessionEnd: the daemon starting now captures the transcript at the next event.
    return {"output": host_output(event, context)}


def _spool(store: Path, root: str, session_id: str, harness: str, message: dict[str, Any]) -> None:
    from lore_sidecar.engine.service import new_op_id
    from lore_sidecar.store.spool import Spool

    m = capture.normalise(session_id=session_id, harness=harness, **message)
    Spool(store / "spool").put({"opId": new_op_id(), "kind": "recordMessages", "project": root,
                                "messages": [asdict(m)]})


def _recall_block(store: Path, root: str, session_id: str, prompt: str) -> str:
    db_path = store / "lore.db"
    if not db_path.exists() or not prompt.strip():
        return ""
    from lore_sidecar.app import read_only_store
    from lore_sidecar.engine.recall.recaller import Recaller
    from lore_sidecar.engine.service import MAX_QUERY_CHARS
    from lore_sidecar.settings import RecallSettings

    with read_only_store(store) as (records, text):
        project = records.find_project(root)
        if project is None:
            return ""
        result = Recaller(records, text, None, None, RecallSettings()).recall(
            prompt[:MAX_QUERY_CHARS], project_ids=[project.id], sources=["messages", "facts", "files"], limit=12, lexical_only=True)
    hits = [h for h in result.hits if h.session_id != session_id][:8]
    return lifecycle.recall_block(session_id, result.query_id, hits)
