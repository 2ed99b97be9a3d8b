"""The three request dialects as one list of conversation items. Pure functions.

Anthropic Messages (`messages`, top-level `system`), OpenAI Chat Completions (`messages`
with system/developer entries) and OpenAI Responses (`input` items: messages, function calls
and their outputs). Everything not in the conversation list (system, tools, model, params)
is never rewritten.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lore_sidecar.engine.capture.messages import render_content

ANTHROPIC, CHAT, RESPONSES = "anthropic-messages", "openai-chat", "openai-responses"
APIS = (ANTHROPIC, CHAT, RESPONSES)
MARK = {"type": "ephemeral"}
MARK_1H = {"type": "ephemeral", "ttl": "1h"}  # a system prompt worth caching for an hour (gradient.hour_pays)


def items(api: str, body: dict[str, Any]) -> list[Any]:
    if api == RESPONSES:
        given = body.get("input")
        if isinstance(given, str):
            return [{"type": "message", "role": "user", "content": given}]
        return list(given or [])
    return list(body.get("messages") or [])


# Where each dialect puts the answer's length limit: Anthropic's `max_tokens`; OpenAI's Chat
# Completions `max_completion_tokens` (its older `max_tokens` still accepted); the Responses
# API's `max_output_tokens`.
OUTPUT_LIMIT_KEYS = {ANTHROPIC: ("max_tokens",), CHAT: ("max_completion_tokens", "max_tokens"),
                     RESPONSES: ("max_output_tokens",)}
DEFAULT_MAX_OUTPUT = 16_000  # a body that names no limit (the provider's own default applies)


def max_output(api: str, body: dict[str, Any]) -> int:
    """The tokens the answer may take, as this dialect's body says; the provider counts them
    against the same context window as the prompt. A missing or unusable value (not a
    positive whole number) gives DEFAULT_MAX_OUTPUT: the body is the harness's, passed on
    as it is, and the provider judges it."""
    for key in OUTPUT_LIMIT_KEYS[api]:
        value = body.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            continue
        if value >= 1 and float(value).is_integer():
            return int(value)
    return DEFAULT_MAX_OUTPUT


def with_items(api: str, body: dict[str, Any], new: list[Any]) -> dict[str, Any]:
    out = dict(body)
    out["input" if api == RESPONSES else "messages"] = new
    return out


def canonical(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def item_id(index: int, item: Any) -> str:
    """An item's capture id: its position and its content (the same history sent twice
    records nothing new; an edited message at a position is a new one)."""
    return f"ctx-{index}-{hashlib.sha256(canonical(item).encode()).hexdigest()[:12]}"


def role_of(api: str, item: Any) -> str:
    if not isinstance(item, dict):
        return "user"
    if api == RESPONSES:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role", "user")
            return "system" if role in ("system", "developer") else role
        return "tool" if kind.endswith("_output") else "assistant"
    role = item.get("role", "user")
    if role in ("system", "developer"):
        return "system"
    if api == ANTHROPIC and role == "user" and _blocks(item) and all(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in _blocks(item)):
        return "tool"
    return role


def _blocks(item: dict[str, Any]) -> list[Any]:
    content = item.get("content")
    return content if isinstance(content, list) else []


def turn_starts(api: str, conv: list[Any]) -> list[int]:
    """A user's own messages (no tool results in them)."""
    out = []
    for i, item in enumerate(conv):
        if not isinstance(item, dict) or role_of(api, item) != "user":
            continue
        if api == ANTHROPIC and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in _blocks(item)):
            continue
        out.append(i)
    return out


def cut_points(api: str, conv: list[Any]) -> list[int]:
    """Where a raw window may begin without parting a tool call from its result: at a user's
    own message, or at the first output of a model call (an assistant message or function
    call right after the input it answered). Everything before the cut is evicted together."""
    out = set(turn_starts(api, conv))
    for i in range(1, len(conv)):
        if role_of(api, conv[i]) == "assistant" and role_of(api, conv[i - 1]) != "assistant":
            out.add(i)
    return sorted(out)


def leading_system(api: str, conv: list[Any]) -> list[Any]:
    """The system/developer entries a conversation list starts with (OpenAI's system
    messages; Claude Code also sends one inside `messages`): never evicted."""
    out = []
    for item in conv:
        if role_of(api, item) != "system":
            break
        out.append(item)
    return out


# How a harness opens the summary it writes in place of its history when it compacts it
# (Claude Code; Pi). Public: Claude Code's transcripts mark the message `isCompactSummary`.
SUMMARY_OPENINGS = ("This session is being continued from a previous conversation",
                    "The conversation history before this point was compacted into the following summary")


def leading_summary(api: str, conv: list[Any]) -> int | None:
    """Where the harness's own compaction summary sits when the conversation opens with it
    (after any system entries), else None.

    Why: it is what the agent knows of everything before its compaction, already distilled;
    cut to a digest's one line per request, the agent would lose it at lore's first window
    move. Outcome: the prefix carries it whole (requests.py), and the digest leaves it out."""
    for i, item in enumerate(conv):
        role = role_of(api, item)
        if role == "system":
            continue
        # Any of its text blocks may open with it: a harness can put a reminder block first.
        texts = [x.get("text", "") if isinstance(x, dict) else str(x) for x in _blocks(item)] \
            if isinstance(item, dict) and isinstance(item.get("content"), list) else [text_of(api, item)]
        if role == "user" and any(str(t).lstrip().startswith(SUMMARY_OPENINGS) for t in texts):
            return i
        return None
    return None


def opens_with_user(api: str, item: Any) -> bool:
    """A window starting here follows the prefix with an acknowledgement (roles alternate)."""
    return role_of(api, item) != "assistant"


def text_of(api: str, item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    if api == CHAT and item.get("tool_calls"):
        calls = [f"[tool call {c.get('function', {}).get('name', '?')}] {c.get('function', {}).get('arguments', '')}"
                 for c in item["tool_calls"] if isinstance(c, dict)]
        return "\n".join([render_content(item.get("content")), *calls]).strip()
    if api == RESPONSES and item.get("type", "message") != "message":
        return render_content(item)
    return render_content(item.get("content"))


def capture_rows(api: str, conv: list[Any], offset: int = 0) -> list[dict[str, Any]]:
    """The conversation (from position `offset` on) as `recordMessages` rows; system entries
    are the harness's, not kept."""
    rows = []
    for i, item in enumerate(conv, offset):
        role = role_of(api, item)
        if role == "system":
            continue
        call_id = item.get("tool_call_id") or item.get("call_id") if isinstance(item, dict) else None
        rows.append({"role": role, "content": text_of(api, item), "msg_id": item_id(i, item), "created_at": None,
                     "tool_name": item.get("name") if isinstance(item, dict) and role == "tool" else None,
                     "tool_call_id": call_id})
    return rows


def stub_tool_outputs(api: str, item: Any, stub: Any) -> Any:
    """`item` with each tool output replaced by `stub(text)` (others returned as they are)."""
    if not isinstance(item, dict):
        return item
    if api == ANTHROPIC and role_of(api, item) == "tool":
        blocks = [{**b, "content": stub(render_content(b.get("content")))} if b.get("type") == "tool_result" else b
                  for b in _blocks(item)]
        return {**item, "content": blocks}
    if api == CHAT and item.get("role") == "tool":
        return {**item, "content": stub(render_content(item.get("content")))}
    if api == RESPONSES and item.get("type") == "function_call_output":
        return {**item, "output": stub(render_content(item.get("output")))}
    return item


def is_tool_output(api: str, item: Any) -> bool:
    return role_of(api, item) == "tool"


def strip_marks(obj: Any) -> Any:
    """A copy without `cache_control` anywhere (what L0 may differ by)."""
    if isinstance(obj, dict):
        return {k: strip_marks(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip_marks(v) for v in obj]
    return obj


def count_marks(obj: Any) -> int:
    if isinstance(obj, dict):
        return ("cache_control" in obj) + sum(count_marks(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(count_marks(v) for v in obj)
    return 0


def mark_last_block(item: Any) -> Any:
    """`item` with a breakpoint on its last content block (only block lists can carry one)."""
    if not isinstance(item, dict) or not _blocks(item):
        return item
    blocks = list(item["content"])
    if isinstance(blocks[-1], dict):
        blocks[-1] = {**blocks[-1], "cache_control": MARK}
    return {**item, "content": blocks}


def prefix_message(api: str, parts: str | list[str]) -> Any:
    """The distilled prefix as the first conversation item (a user message), one content
    block per digest part where the dialect has blocks (a later part appends a block and
    leaves the earlier ones byte-identical)."""
    parts = [parts] if isinstance(parts, str) else parts
    if api == RESPONSES:
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t} for t in parts]}
    if api == ANTHROPIC:
        return {"role": "user", "content": [{"type": "text", "text": t} for t in parts]}
    return {"role": "user", "content": "\n".join(parts)}


def prefix_ack(api: str) -> Any:
    """An assistant turn after the prefix, so roles keep alternating."""
    text = "Understood; I will use that summary of the earlier conversation."
    if api == RESPONSES:
        return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    if api == ANTHROPIC:
        return {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"role": "assistant", "content": text}
