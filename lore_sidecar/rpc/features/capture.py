"""`lore/*` handlers for capture and the session lifecycle: messages in, context blocks out."""

from __future__ import annotations

from typing import Any

from lore_sidecar.rpc.calls import Calls
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure


def handlers(c: Calls) -> dict[str, Any]:
    async def record_messages(params: Any) -> dict[str, Any]:
        p = structure(params, t.RecordMessagesParams)
        messages = [
            {
                "role": m.role,
                "content": m.content,
                "msg_id": m.id,
                "created_at": m.created_at,
                "tool_name": m.tool_name,
                "tool_call_id": m.tool_call_id,
            }
            for m in p.messages
        ]
        return await c.write("capture.record_messages", project=p.project, session_id=p.session_id, harness=p.harness,
                           messages=messages)

    async def prompt_submit(params: Any) -> dict[str, Any]:
        p = structure(params, t.PromptSubmitParams)
        return await c.read("sessions.prompt", session_id=p.session_id, prompt=p.prompt, harness=p.harness,
                          project=p.project, budget_tokens=p.budget_tokens)

    async def session_start(params: Any) -> dict[str, Any]:
        p = structure(params, t.SessionStartParams)
        return await c.read("sessions.start", session_id=p.session_id, harness=p.harness, cwd=p.cwd, repo=p.repo,
                          budget_tokens=p.budget_tokens)

    async def session_end(params: Any) -> dict[str, Any]:
        p = structure(params, t.SessionEndParams)
        return await c.write("sessions.end", session_id=p.session_id, harness=p.harness, project=p.project,
                           transcript=p.transcript, transcript_path=p.transcript_path)

    return {
        "lore/recordMessages": record_messages,
        "lore/promptSubmit": prompt_submit,
        "lore/sessionStart": session_start,
        "lore/sessionEnd": session_end,
    }
