"""Which session a proxied request belongs to, and what usage its answer reported. Pure."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

# /v1/codex/responses: what the Codex CLI calls when it is signed in with ChatGPT (its backend's
# `codex/responses`); the same Responses dialect, so the same assembly.
API_OF_PATH = {"/v1/messages": "anthropic-messages", "/v1/chat/completions": "openai-chat",
               "/v1/responses": "openai-responses", "/v1/codex/responses": "openai-responses"}
CLAUDE_SESSION = re.compile(r"session_([0-9a-f-]{8,})")


def session_of(api: str, headers: Mapping[str, str], body: dict[str, Any]) -> str:
    """The harness's own conversation id where it sends one; else a hash of how the
    conversation began (stable for the conversation, distinct between conversations)."""
    explicit = headers.get("x-lore-session") or headers.get("session_id") or headers.get("conversation_id")
    if explicit:
        return str(explicit)[:200]
    user = str((body.get("metadata") or {}).get("user_id") or "")
    try:  # Claude Code: a JSON object with its session_id
        named = json.loads(user).get("session_id") if user.startswith("{") else None
    except ValueError:
        named = None
    if named:
        return str(named)[:200]
    found = CLAUDE_SESSION.search(user)  # older Claude Code: "user_..._session_<uuid>"
    if found:
        return found.group(1)
    if body.get("prompt_cache_key"):
        return str(body["prompt_cache_key"])[:200]
    conv = body.get("input") if api == "openai-responses" else body.get("messages")
    first = conv[0] if isinstance(conv, list) and conv else conv
    seed = json.dumps([body.get("system") or body.get("instructions"), first], sort_keys=True, default=str)
    return "gw-" + hashlib.sha256(seed.encode()).hexdigest()[:20]


def usage_from_events(api: str, events: list[dict[str, Any]]) -> dict[str, int] | None:
    """Anthropic's usage fields from a streamed (or whole) answer, in any of the three APIs."""
    usage: dict[str, int] = {}
    for e in events:
        kind = e.get("type")
        if api == "anthropic-messages":
            if kind == "message_start":
                usage.update(_anthropic((e.get("message") or {}).get("usage") or {}))
            elif kind == "message_delta":
                usage.update({k: v for k, v in _anthropic(e.get("usage") or {}).items() if v})
            elif kind == "message":  # a whole (non-streamed) answer
                usage.update(_anthropic(e.get("usage") or {}))
        elif api == "openai-chat" and e.get("usage"):
            usage.update(_openai(e["usage"], "prompt_tokens", "completion_tokens", "prompt_tokens_details"))
        elif api == "openai-responses" and kind in ("response.completed", "response") and \
                ((e.get("response") or e).get("usage")):
            usage.update(_openai((e.get("response") or e)["usage"], "input_tokens", "output_tokens", "input_tokens_details"))
    return usage or None


def _anthropic(u: dict[str, Any]) -> dict[str, int]:
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    return {k: int(u.get(k) or 0) for k in keys if k in u}


def _openai(u: dict[str, Any], inp: str, out: str, details: str) -> dict[str, int]:
    cached = int(((u.get(details) or {}).get("cached_tokens")) or 0)
    return {"input_tokens": max(0, int(u.get(inp) or 0) - cached), "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": 0, "output_tokens": int(u.get(out) or 0)}


def sse_events(data: bytes) -> tuple[list[dict[str, Any]], bytes]:
    """Complete `data:` JSON events in `data`, and the unfinished rest.

    Trigger: a server or proxy that ends its lines with CRLF (or CR), as the SSE format
    allows. Why: split on LF alone, such a stream has no complete event, and its usage is
    never read. Outcome: line ends are read as LF; a CR that ends `data` waits for the next
    chunk (it may be the first half of a CRLF)."""
    held = b""
    if data.endswith(b"\r"):
        data, held = data[:-1], b"\r"
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    events = []
    *whole, rest = data.split(b"\n\n")
    for chunk in whole:
        for line in chunk.split(b"\n"):
            if line.startswith(b"data:"):
                payload = line[5:].strip()
                if payload and payload != b"[DONE]":
                    try:
                        events.append(json.loads(payload))
                    except ValueError:
                        pass
    return events, rest + held
