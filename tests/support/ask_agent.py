"""A scripted model for codebase questions: given a request body (Anthropic Messages, or the
Chat Completions translation), it acts like a small diligent agent — Grep for the question's
key word, Read the first file that matches, `remember` where it lives, then answer quoting
the line it read. Every step depends on what the tools returned, so an answer that quotes a
line proves the tool results reached the model.

Also: the request as a prompt cache sees it (blocks in cache order, breakpoints), for
`engine/context/cache_sim.py`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

HIT = re.compile(r"^([\w./-]+\.\w+):(\d+):(.*)$", re.M)
QUESTION = re.compile(r"Question: (.*)$", re.S)
KEY = re.compile(r"`([^`]+)`")


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    c = message.get("content")
    return c if isinstance(c, list) else [{"type": "text", "text": c or ""}]


def _text(block: dict[str, Any]) -> str:
    c = block.get("content", block.get("text", ""))
    return "".join(b.get("text", "") for b in c) if isinstance(c, list) else str(c)


def state(messages: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """(this question, the tool results since it was asked, oldest first)."""
    results: list[str] = []
    for m in reversed(messages):
        blocks = _blocks(m)
        if m["role"] == "user":
            texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
            q = next((QUESTION.search(t) for t in texts if QUESTION.search(t)), None)
            if q:
                return q.group(1).strip(), list(reversed(results))
            results += [_text(b) for b in blocks if b.get("type") == "tool_result"]
        elif m["role"] == "tool":
            results.append(str(m.get("content") or ""))
    return "", []


def next_step(question: str, results: list[str]) -> Any:
    """The scripted agent's next move: a list of (tool, input) calls, or the answer text."""
    m = KEY.search(question)
    key = m.group(1) if m else question.split()[-1].strip("?")
    if "commit" in question.lower():
        if not results:
            return [("git_search", {"query": key})]
        return f"The commit: {results[0].strip().splitlines()[0] if results[0].strip() else 'none'}"
    if not results:
        return [("Grep", {"pattern": rf"\b{re.escape(key)}\b", "glob": "*.py"})]
    hit = HIT.search(results[0])
    if hit is None:
        return f"`{key}` does not appear in the code."
    path, line, text = hit.group(1), hit.group(2), hit.group(3).strip()
    if len(results) == 1:
        return [("Read", {"path": path})]
    if len(results) == 2:
        return [("remember", {"fact": f"`{key}` is defined in {path} at line {line}.", "paths": [path]})]
    return f"`{key}` is defined in {path}:{line} — `{text}`."


def anthropic_responder(body: dict[str, Any]) -> Any:
    question, results = state(body.get("messages") or [])
    if not question:
        return "ok"  # a keep-warm ping
    step = next_step(question, results)
    return step if isinstance(step, str) else {"tool_use": step}


def chat_responder(api: str, body: dict[str, Any]) -> Any:
    """For tests.support.fake_models (non-streaming Chat Completions)."""
    question, results = state([m for m in body.get("messages") or [] if m["role"] != "system"])
    step = next_step(question, results) if question else "ok"
    return step if isinstance(step, str) else {"tool_calls": [{"name": n, "arguments": a} for n, a in step]}


def cache_blocks(body: dict[str, Any]) -> tuple[list[tuple[str, int]], list[int]]:
    """The request in the order a prompt cache reads it (tools, system, messages), as
    (hash, tokens) per block with cache markers stripped, and the breakpoints."""
    out: list[tuple[str, int]] = []
    marks: list[int] = []

    def add(obj: Any) -> None:
        if isinstance(obj, dict) and "cache_control" in obj:
            marks.append(len(out))
            obj = {k: v for k, v in obj.items() if k != "cache_control"}
        text = json.dumps(obj, sort_keys=True, ensure_ascii=False)
        out.append((hashlib.sha1(text.encode()).hexdigest(), len(text) // 4 + 1))

    for tool in body.get("tools") or []:
        add(tool)
    for block in body.get("system") or []:
        add(block)
    for m in body.get("messages") or []:
        for block in _blocks(m):
            add({"role": m["role"], **block})
    return out, marks
