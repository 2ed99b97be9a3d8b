"""The messages a host event carries (a prompt, a tool call's output), as `lore/recordMessages`
items: used by the daemon and the degraded path, never by the hook command's fast path."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lore_sidecar.engine.capture.transcripts import prompt_id


def prompt_message(prompt: str) -> dict[str, Any]:
    return {"role": "user", "content": prompt, "msg_id": prompt_id(prompt), "created_at": None,
            "tool_name": None, "tool_call_id": None}


def tool_message(p: dict[str, Any], session_id: str = "") -> dict[str, Any] | None:
    response = p.get("tool_response")
    call_id = str(p.get("tool_use_id") or "")
    result = p.get("tool_result")
    if response is None and isinstance(result, dict) and isinstance(result.get("text_result_for_llm"), str):
        # Copilot CLI: the text it hands the model, and no call id. The id is made from what
        # identifies this one call (session, time, tool, input), so a hook retried with the same
        # event is a duplicate while the same command run twice is two messages.
        response = result["text_result_for_llm"]
        key = json.dumps([session_id, p.get("timestamp"), p.get("tool_name"), p.get("tool_input")], sort_keys=True,
                         default=str)
        call_id = "copilot-" + hashlib.sha1(key.encode()).hexdigest()[:20]
    if response is None or not call_id:
        return None
    text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
    return {"role": "tool", "content": text[:200_000], "msg_id": f"tool-{call_id}", "created_at": None,
            "tool_name": p.get("tool_name"), "tool_call_id": call_id}
