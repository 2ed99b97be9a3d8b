"""Reading a host's transcript into messages (for `lore/sessionEnd`). Pure.

Four shapes are understood: Claude Code's JSONL (`{"type": "user" | "assistant", "uuid",
"timestamp", "message": {"role", "content"}}`), Codex's rollout JSONL (`{"timestamp",
"type": "response_item", "payload": {"type": "message", "role", "content": [...]}}`),
Copilot CLI's `events.jsonl` (`{"type": "user.message" | "assistant.message", "id",
"timestamp", "data": {"content", "messageId"}}`; its tool output comes from the PostToolUse
hook), and plain message objects as `lore/recordMessages` takes them. Message ids are stable, so
capturing the same transcript again (or a prompt the UserPromptSubmit hook already
recorded) adds nothing: a user prompt's id is derived from its text, exactly as the hook
derives it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

ROLES = ("user", "assistant", "tool", "system")
COPILOT_TYPES = {"user.message": "user", "assistant.message": "assistant"}


def prompt_id(text: str) -> str:
    return "prompt-" + hashlib.sha1(text.strip().encode()).hexdigest()[:16]


def parse_lines(lines: Iterable[str]) -> list[dict[str, Any]]:
    """Messages from JSONL text; lines that are not messages (titles, tool metadata,
    summaries, broken JSON) are skipped."""
    out: list[dict[str, Any]] = []
    for n, line in enumerate(lines):
        line = line.strip()
        if not line:
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        msg = from_item(item, n)
        if msg is not None:
            out.append(msg)
    return out


def from_item(item: Any, n: int = 0) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if item.get("type") in ("user", "assistant") and isinstance(item.get("message"), dict):  # Claude Code
        m = item["message"]
        return _message(m.get("role") or item["type"], m.get("content"), item.get("uuid"), item.get("timestamp"))
    if item.get("type") == "response_item" and isinstance(item.get("payload"), dict):  # Codex rollout
        p = item["payload"]
        if p.get("type") != "message" or p.get("role") not in ("user", "assistant"):
            return None
        text = "".join(b.get("text", "") for b in p.get("content") or [] if isinstance(b, dict))
        if text.startswith("<environment_context>") or text.startswith("<user_instructions>"):
            return None  # the host's own preamble, not the conversation
        return _message(p["role"], text, None, item.get("timestamp"), salt=str(n))
    if item.get("type") in COPILOT_TYPES and isinstance(item.get("data"), dict):  # Copilot CLI events.jsonl
        d = item["data"]
        # A user message's id comes from its text (as the prompt hook's); `content` is what the
        # user typed, `transformedContent` what the model got (with our own context in it).
        return _message(COPILOT_TYPES[item["type"]], d.get("content"), d.get("messageId") or item.get("id"),
                        item.get("timestamp"))
    if item.get("role") in ROLES and "content" in item:  # already a message: its id is kept
        return _message(item["role"], item["content"], item.get("id"), item.get("createdAt"),
                        tool_name=item.get("toolName"), tool_call_id=item.get("toolCallId"), keep_id=True)
    return None


def _message(role: str, content: Any, msg_id: str | None, created_at: str | None, *, salt: str = "",
             tool_name: str | None = None, tool_call_id: str | None = None, keep_id: bool = False) -> dict[str, Any] | None:
    if role not in ROLES or content in (None, "", []):
        return None
    if role == "user" and isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        role = "tool"  # Claude Code sends tool results as user turns
    if role == "user" and isinstance(content, str) and not (keep_id and msg_id):
        msg_id = prompt_id(content)  # the same id the prompt hook gave it
    elif not msg_id:
        body = json.dumps(content, sort_keys=True, ensure_ascii=False)
        msg_id = "t-" + hashlib.sha1(f"{role}\0{created_at}\0{salt}\0{body}".encode()).hexdigest()[:20]
    return {"role": role, "content": content, "msg_id": str(msg_id), "created_at": created_at,
            "tool_name": tool_name, "tool_call_id": tool_call_id}
