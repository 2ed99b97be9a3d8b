"""The messages a host event carries (a prompt, a tool call's output), as `lore/recordMessages`
items: used by the daemon and the degraded path, never by the hook command's fast path."""

from __future__ import annotations

import json
from typing import Any

from lore_sidecar.engine.capture.transcripts import prompt_id


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
