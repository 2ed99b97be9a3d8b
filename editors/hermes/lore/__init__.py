"""lore-sidecar as a Hermes Agent memory provider (`memory.provider: lore`).

Placed in `$HERMES_HOME/plugins/lore/` by `lore-sidecar install hermes`. It runs inside
Hermes' own Python, so it imports only the standard library and talks to lore through
lore's hook command (`lore-sidecar hook --harness hermes <event>`, JSON on stdin): that
command hands the event to the store's warm hook daemon, or serves it degraded (durable
capture, lexical recall) while one starts, and never takes longer than its own timeout.

- initialize -> SessionStart: lore's guidance, shown through `system_prompt_block`.
- prefetch -> UserPromptSubmit: the `<recall>` block of leads for this prompt (the prompt is
  captured too). Bounded: Hermes waits for it before the model call.
- sync_turn -> the turn's new messages (user, assistant, tool results), in the background.
- on_session_end -> the whole conversation (already-captured messages are duplicates).
- on_pre_compress -> the conversation, then a distillation, before Hermes compacts.
The tools (lore_recall, lore_get_node, ...) come from lore's MCP server (`mcp_servers.lore`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import threading
from typing import Any

try:
    from agent.memory_provider import MemoryProvider
except ImportError:  # outside Hermes (lore's own checks import this file)
    MemoryProvider = object  # type: ignore[assignment,misc]

LORE_COMMAND = ["lore-sidecar"]
PREFETCH_TIMEOUT_S = 4.0  # the hook command gives up after LORE_HOOK_TIMEOUT_MS (2 s) itself
WRITE_TIMEOUT_S = 20.0
log = logging.getLogger(__name__)


def call(event: str, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The hook command's answer to one event ({} when it said nothing or failed)."""
    try:
        done = subprocess.run([*LORE_COMMAND, "hook", "--harness", "hermes", event], input=json.dumps(payload),
                              capture_output=True, text=True, timeout=timeout, env=os.environ.copy())
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("lore %s: %s", event, exc)
        return {}
    try:
        out = json.loads(done.stdout) if done.stdout.strip() else {}
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def context_of(answer: dict[str, Any]) -> str:
    inner = answer.get("hookSpecificOutput")
    return str((inner if isinstance(inner, dict) else answer).get("additionalContext") or "")


def as_transcript(session_id: str, messages: list[dict[str, Any]], start: int = 0) -> list[dict[str, Any]]:
    """OpenAI-style messages as lore's plain messages, with ids stable across calls: a user
    prompt's id comes from its text (as the prompt capture's), an assistant reply's from the
    prompt it answers (see reply_id), a tool result's from its call id."""
    names = {}
    for m in messages:
        for c in m.get("tool_calls") or [] if isinstance(m, dict) else []:
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict):
                names[c.get("id")] = fn.get("name")
    out = []
    for i, m in enumerate(messages[start:], start):
        if not isinstance(m, dict) or m.get("content") in (None, "", []):
            continue
        role = m.get("role")
        if role == "user":
            out.append({"role": "user", "content": m["content"]})
        elif role == "assistant":
            out.append({"role": "assistant", "content": m["content"], "id": reply_id(session_id, messages, i)})
        elif role == "tool" and m.get("tool_call_id"):
            call_id = str(m["tool_call_id"])
            out.append({"role": "tool", "content": m["content"], "id": f"tool-{call_id}", "toolCallId": call_id,
                        "toolName": names.get(call_id)})
    return out


def reply_id(session_id: str, messages: list[dict[str, Any]], i: int) -> str:
    """An assistant reply's id: its text, the prompt it answers and how far after it, never its
    place in the conversation alone. Trigger: Hermes' /undo truncates the conversation and an
    in-place compaction shortens it, both keeping the session id. Why: the next reply then sits
    where an earlier one sat, and a place-only id made it a duplicate (dropped). Outcome: a
    reply handed over again (on_session_end, after a compaction too) is still a duplicate."""
    asked, after = "", i
    for j in range(i - 1, -1, -1):
        m = messages[j]
        if isinstance(m, dict) and m.get("role") == "user":
            asked, after = m.get("content"), i - j
            break
    key = json.dumps([asked, after, messages[i].get("content")], sort_keys=True, ensure_ascii=False, default=str)
    return f"hermes-{session_id}-" + hashlib.sha1(key.encode()).hexdigest()[:20]


class LoreMemoryProvider(MemoryProvider):
    def __init__(self) -> None:
        self._session = ""
        self._writes = True
        self._guidance = ""
        self._last: tuple[str, str] = ("", "")  # (query, block): prefetch runs before each model call
        self._sent = 0  # messages already handed over by sync_turn
        self._threads: list[threading.Thread] = []

    @property
    def name(self) -> str:
        return "lore"

    def is_available(self) -> bool:
        """lore-sidecar can be started (no network: Hermes asks this at start-up)."""
        exe = LORE_COMMAND[0]
        return os.path.exists(exe) if os.path.isabs(exe) else shutil.which(exe) is not None

    def _payload(self, **extra: Any) -> dict[str, Any]:
        return {"session_id": self._session, "cwd": os.getcwd(), **extra}

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._session = session_id or self._session
        # Subagents, cron jobs and flushes are not the user's conversation: read, never write.
        self._writes = kwargs.get("agent_context", "primary") == "primary"
        if self._writes:
            self._guidance = context_of(call("SessionStart", self._payload(source="startup"), PREFETCH_TIMEOUT_S))

    def system_prompt_block(self) -> str:
        return self._guidance

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []  # lore's tools come from its MCP server (mcp_servers.lore in config.yaml)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        # In CLI mode Hermes passes no session id here: the one from initialize stands.
        if not query.strip() or not self._writes:
            return ""
        if self._last[0] == query:
            return self._last[1]
        block = context_of(call("UserPromptSubmit", self._payload(prompt=query), PREFETCH_TIMEOUT_S))
        self._last = (query, block)
        return block

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        if not self._writes:
            return
        if messages:
            items = as_transcript(self._session, messages, self._sent)
            self._sent = len(messages)
        else:
            items = [m for m in ({"role": "user", "content": user_content},
                                 {"role": "assistant", "content": assistant_content}) if m["content"]]
        if items:
            self._background("Stop", self._payload(transcript=items))

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._join()
        if self._writes and messages:
            call("SessionEnd", self._payload(transcript=as_transcript(self._session, messages)), WRITE_TIMEOUT_S)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        self._join()
        if self._writes and messages:
            call("PreCompact", self._payload(transcript=as_transcript(self._session, messages)), WRITE_TIMEOUT_S)
        return ""

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self._join()
        self._session, self._sent, self._last = new_session_id, 0, ("", "")

    def shutdown(self) -> None:
        self._join()

    def _background(self, event: str, payload: dict[str, Any]) -> None:
        t = threading.Thread(target=call, args=(event, payload, WRITE_TIMEOUT_S), name="lore-capture", daemon=True)
        t.start()
        self._threads = [x for x in self._threads if x.is_alive()] + [t]

    def _join(self) -> None:
        for t in self._threads:
            t.join(WRITE_TIMEOUT_S)
        self._threads = []


def register(ctx: Any) -> None:
    ctx.register_memory_provider(LoreMemoryProvider())
