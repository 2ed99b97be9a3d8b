"""Real coding-agent sessions as the sequence of model requests they made (for
bench/context.py). Readers for Pi's session JSONL, Claude Code's project JSONL and a Codex
CLI rollout; each yields, per model call, the conversation the harness sent (as Anthropic
Messages, or Responses input items for Codex), the call's time and its recorded output size.

The logs do not record the system prompt or the tool definitions; the replay supplies a
fixed prefix of the size the first call's recorded usage implies (less the first messages).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass
class Call:
    at: float
    conversation: list[dict[str, Any]]
    output_tokens: int
    recorded_input: int  # input + cache read + cache write, as the provider billed it (0: unknown)


@dataclass
class Session:
    name: str
    harness: str
    api: str
    model: str
    calls: list[Call] = field(default_factory=list)


def ts(value: Any) -> float:
    if isinstance(value, int | float):
        return value / 1000 if value > 1e11 else float(value)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def merge(conv: list[dict[str, Any]], msg: dict[str, Any]) -> None:
    """Append, merging into the last message when the role repeats (the API's alternation)."""
    if conv and conv[-1]["role"] == msg["role"]:
        conv[-1] = {"role": msg["role"], "content": [*conv[-1]["content"], *msg["content"]]}
    else:
        conv.append(msg)


def blocks_of(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content or [] if isinstance(b, dict)]


# -- Pi ----------------------------------------------------------------------------------------------
def pi_blocks(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for b in content or []:
        if b.get("type") == "text" and b.get("text"):
            out.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "toolCall":
            out.append({"type": "tool_use", "id": b.get("id"), "name": b.get("name"), "input": b.get("arguments") or {}})
    return out


def load_pi(path: Path) -> Session:
    s = Session(path.stem, "pi", "anthropic-messages", "claude-sonnet-4-5")
    conv: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e.get("type") == "compaction":  # Pi replaced its history with a summary
            conv = [{"role": "user", "content": [{"type": "text", "text": str(e.get("summary", ""))}]}]
            continue
        if e.get("type") != "message":
            continue
        m = e["message"]
        role = m.get("role")
        if role == "user":
            merge(conv, {"role": "user", "content": blocks_of(m.get("content"))})
        elif role == "toolResult":
            text = "\n".join(b.get("text", "") for b in m.get("content") or [] if isinstance(b, dict))
            merge(conv, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": m.get("toolCallId"),
                                                      "content": text, **({"is_error": True} if m.get("isError") else {})}]})
        elif role == "assistant":
            u = m.get("usage") or {}
            blocks = pi_blocks(m.get("content"))
            if m.get("stopReason") in ("aborted", "error") or not blocks or not conv:
                continue
            s.calls.append(Call(ts(e["timestamp"]) - 1, [dict(x) for x in conv], int(u.get("output") or 0),
                                int(u.get("input") or 0) + int(u.get("cacheRead") or 0) + int(u.get("cacheWrite") or 0)))
            merge(conv, {"role": "assistant", "content": blocks})
    return s


# -- Claude Code ---------------------------------------------------------------------------------------
def load_claude(path: Path) -> Session:
    s = Session(path.stem[:8], "claude-code", "anthropic-messages", "claude-sonnet-4-5")
    conv: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e.get("isSidechain") or e.get("type") not in ("user", "assistant"):
            continue
        m = e.get("message") or {}
        if e["type"] == "user":
            blocks = [b for b in blocks_of(m.get("content")) if b.get("type") in ("text", "tool_result")]
            if e.get("isCompactSummary"):
                conv = []
            if blocks and not e.get("isMeta"):
                merge(conv, {"role": "user", "content": blocks})
            continue
        blocks = [b for b in blocks_of(m.get("content")) if b.get("type") in ("text", "tool_use")]
        mid = m.get("id") or e.get("uuid")
        if mid not in seen_ids and conv and conv[-1]["role"] == "user":
            u = m.get("usage") or {}
            recorded = sum(int(u.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                         "cache_creation_input_tokens"))
            s.calls.append(Call(ts(e["timestamp"]) - 1, [dict(x) for x in conv], int(u.get("output_tokens") or 0), recorded))
        seen_ids.add(mid)
        if blocks:
            merge(conv, {"role": "assistant", "content": blocks})
    return s


# -- Codex --------------------------------------------------------------------------------------------
def load_codex(path: Path) -> Session:
    s = Session("codex-rollout", "codex", "openai-responses", "gpt-5")
    items: list[dict[str, Any]] = []
    pending_output = False
    last_usage = 0
    for line in path.read_text().splitlines():
        e = json.loads(line)
        p = e.get("payload") or {}
        if e.get("type") == "event_msg" and p.get("type") == "token_count":
            info = (p.get("info") or {}).get("last_token_usage") or {}
            last_usage = int(info.get("input_tokens") or 0)
            continue
        if e.get("type") != "response_item":
            continue
        kind = p.get("type")
        if kind in ("reasoning", "ghost_snapshot"):
            continue
        if kind == "message" and p.get("role") in ("developer", "system"):
            continue  # the harness's own instructions: part of the fixed prefix
        output = kind in ("function_call", "custom_tool_call") or (kind == "message" and p.get("role") == "assistant")
        if output and not pending_output and items:
            s.calls.append(Call(ts(e["timestamp"]) - 1, [dict(x) for x in items], 200, last_usage))
        pending_output = output
        item = {k: v for k, v in p.items() if k in ("type", "role", "content", "name", "arguments", "call_id", "output",
                                                    "input")}
        if kind == "custom_tool_call":
            item = {"type": "function_call", "name": p.get("name"), "arguments": json.dumps(p.get("input")),
                    "call_id": p.get("call_id")}
        if kind == "custom_tool_call_output":
            item = {"type": "function_call_output", "call_id": p.get("call_id"), "output": p.get("output")}
        items.append(item)
    return s


def sessions(root: Path) -> list[Session]:
    out = []
    for p in sorted((root / "badlogic__pi-mono").glob("*.jsonl")):
        out.append(load_pi(p))
    for p in sorted((root / "marot__spotter").glob("*.jsonl")):
        out.append(load_claude(p))
    for p in sorted((root / "AcidicSoil__codex-session-view").glob("*.jsonl")):
        out.append(load_codex(p))
    return [s for s in out if s.calls]
