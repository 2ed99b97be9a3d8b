"""The hook's degraded path, when no daemon is warm: durable capture through the spool and
lexical recall from the published index, read-only. No writer lock, no embedder, no watcher:
whatever this process does, the writer (the daemon just started, or any sidecar) applies.
The user's settings hold here as everywhere (recall weights, the store)."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture import messages as capture
from lore_sidecar.engine.capture import transcripts
from lore_sidecar.engine.lifecycle import blocks as lifecycle
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.engine.recall.query import MAX_QUERY_CHARS
from lore_sidecar.engine.writes.path import new_op_id
from lore_sidecar.hook.events import event_of, host_output
from lore_sidecar.hook.messages import prompt_message, tool_message
from lore_sidecar.store.filesystem import make_store_dir
from lore_sidecar.store.spool import store_spool


def degraded(store: Path, request: dict[str, Any], *, deadline: float) -> dict[str, Any]:
    """Capture first, then recall if time is left. Trigger: a loaded machine (a slow start,
    a hung daemon eating most of the timeout). Why: the host stops waiting at the deadline
    and this process dies with it; recall opened the record and the text index before the
    prompt was spooled, so under load the prompt was lost. Outcome: the spool write comes
    before any heavy import or open, and only recall is given up when time runs out."""
    event, p, session_id, cwd, harness = event_of(request)
    root = canonical_root(cwd)
    if not (store / "lore.db").exists():
        make_store_dir(store)
    context = None
    messages: list[dict[str, Any]] = []
    if event == "UserPromptSubmit":
        prompt = str(p.get("prompt") or "")
        if prompt.strip():
            messages.append(prompt_message(prompt))
    elif event == "PostToolUse":
        message = tool_message(p, session_id)
        if message is not None:
            messages.append(message)
    elif event == "SessionStart":
        context = lifecycle.DEFAULT_GUIDANCE
    elif isinstance(p.get("transcript"), list):  # Stop / SessionEnd / PreCompact with the messages inline
        messages += [m for m in (transcripts.from_item(item, i) for i, item in enumerate(p["transcript"])) if m]
    # Stop / SessionEnd: the daemon starting now captures the transcript at the next event.
    _spool(store_spool(store), root, session_id, harness, messages)
    if event == "UserPromptSubmit" and (store / "lore.db").exists() and time.monotonic() < deadline:
        from lore_sidecar.app import degraded_reader
        from lore_sidecar.settings import load_settings

        settings, _ = load_settings(workspace_root=Path(cwd), cli={"storeDir": str(store)})
        with degraded_reader(settings) as (records, recaller, _):
            context = _recall_block(records, recaller, root, session_id, str(p.get("prompt") or ""))
    return {"output": host_output(event, context, harness)}


def _spool(spool: Any, root: str, session_id: str, harness: str, messages: list[dict[str, Any]]) -> None:
    if messages:
        normalised = [asdict(capture.normalise(session_id=session_id, harness=harness, **m)) for m in messages]
        spool.put({"opId": new_op_id(), "kind": "recordMessages", "project": root, "messages": normalised})


def _recall_block(records: Any, recaller: Any, root: str, session_id: str, prompt: str) -> str:
    project = records.find_project(root)
    if project is None or not prompt.strip():
        return ""
    result = recaller.recall(prompt[:MAX_QUERY_CHARS], project_ids=[project.id], sources=["messages", "facts", "files"],
                             limit=12, lexical_only=True)
    hits = [h for h in result.hits if h.session_id != session_id][:8]
    return lifecycle.recall_block(session_id, result.query_id, hits)
