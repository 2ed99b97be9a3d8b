"""One question's agent loop: the model reads, calls tools, and answers — within a soft
deadline and at most `max_iterations` model turns.

Trigger / Why / Outcome of the three ways it ends early:
- the deadline: a model turn gets only the time left as its timeout; when it runs out the
  loop stops and returns the best answer so far (the last text the model wrote, else what
  it had read), never nothing;
- the iteration bound: likewise;
- a cold start (nothing learnt about this workspace yet) and an answer given without a
  single tool call: the answer is sent back once with "look first", because a model that has
  read nothing answers from its priors.

A model that misbehaves ends the question as a failure of that question, never as an
exception (requests.py then answers from retrieval and says why): no text and no tool call
(`emptyAnswer`), a `refusal` stop (`refused`). A turn's bad tool calls are tool errors the
model reads (toolspec.check); a repeated or missing tool-use id is made unique, so every
call gets its one result; past `CALLS_PER_TURN` calls are answered "skipped"; a call cut by a
`max_tokens` stop is answered "cut off" rather than run with half its arguments.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from lore_sidecar.engine.ask import toolspec, window
from lore_sidecar.engine.ask.tools import Tools
from lore_sidecar.errors import LoreError

LOOK_FIRST = ("You have not looked at the code yet, and nothing about this workspace is known. Use the tools "
              "(Grep, Read, find_paths, …) to check before you answer.")
MIN_TURN_S = 0.05
CALLS_PER_TURN = 10  # tool calls run from one model turn; the rest are answered "skipped"
ANSWER_CHARS = 100_000  # a model that writes more is cut, and the answer says so


@dataclass
class Outcome:
    answer: str = ""
    finished: str = "answered"  # answered | deadline | iterations | error
    turns: list[dict[str, Any]] = field(default_factory=list)  # this question's messages, in order
    read: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (sha256, lines)
    facts: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    tool_calls: int = 0
    requests: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"in": 0, "out": 0, "read": 0, "write": 0})
    model: str | None = None
    error: str | None = None
    texts: dict[str, str] = field(default_factory=dict)  # path -> text read (for file contexts)
    tool_ms: float = 0.0


def run(model: Any, fork: window.Fork, question: str, tools: Tools, *, deadline: float, max_iterations: int,
        max_tokens: int, on_request: Any = None) -> Outcome:
    out = Outcome(turns=[window.question_message(fork.deltas, question)])
    system = window.system_blocks(fork.frozen)
    history = list(fork.history)
    sent_back = False
    for _ in range(max_iterations):
        left = deadline - time.monotonic()
        if left < MIN_TURN_S:
            out.finished = "deadline"
            break
        messages = window.marked(history + out.turns, len(history))
        try:
            turn = model.converse(system=system, tools=toolspec.SPECS, messages=messages, max_tokens=max_tokens,
                                  timeout_s=left)
        except LoreError as exc:
            out.finished = "deadline" if exc.kind == "llmTimeout" else "error"
            out.error = f"{exc.kind}: {exc.message}"
            break
        finally:
            if on_request is not None:
                on_request()
        out.requests += 1
        out.model = turn.model
        for key, value in window.usage_of(turn.usage).items():
            out.usage[key] += value
        text = turn.text if isinstance(turn.text, str) else ""
        if len(text) > ANSWER_CHARS:
            text = text[:ANSWER_CHARS] + f"\n[the answer was cut at {ANSWER_CHARS} characters]"
        if text.strip():
            out.answer = text.strip()
        calls = _unique(turn.calls or [])
        if calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
            blocks += [{"type": "tool_use", "id": cid, "name": name, "input": args if isinstance(args, dict) else {}}
                       for cid, name, args in calls]
            out.turns.append({"role": "assistant", "content": blocks})
            out.turns.append({"role": "user", "content": [
                _result(out, tools, cid, name, args, deadline, skip=_skipped(i, len(calls), turn.stop))
                for i, (cid, name, args) in enumerate(calls)]})
            continue
        if turn.stop == "refusal" or not text.strip():
            out.finished = "refused" if turn.stop == "refusal" else "error"
            out.error = ("refusal: the model declined to answer" if turn.stop == "refusal"
                         else "emptyAnswer: the model returned no text and no tool call")
            if turn.stop != "refusal":
                out.answer = ""
            break
        if fork.cold and out.tool_calls == 0 and not sent_back:
            sent_back = True
            out.turns.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
            out.turns.append({"role": "user", "content": [{"type": "text", "text": LOOK_FIRST}]})
            continue
        out.turns.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
        out.finished = "answered"
        return out
    else:
        out.finished = "iterations"
    _close(out)
    return out


def _skipped(i: int, n: int, stop: str) -> str | None:
    """Why the i-th of a turn's n calls is not run, or None to run it."""
    if i >= CALLS_PER_TURN:
        return f"skipped: at most {CALLS_PER_TURN} tool calls run from one turn; call it again if you still need it"
    if stop == "max_tokens" and i == n - 1:
        return "cut off: your output reached max_tokens inside this call, so its arguments are incomplete; call it again"
    return None


def _unique(calls: list[Any]) -> list[tuple[str, Any, Any]]:
    """The turn's calls with an id each, none repeated (the API wants one result per id)."""
    out, seen = [], set()
    for i, call in enumerate(calls):
        cid, name, args = (list(call) + [None, None, None])[:3] if isinstance(call, (list, tuple)) else (None, None, None)
        cid = cid if isinstance(cid, str) and cid else f"toolu_lore_{i}"
        name = name if isinstance(name, str) and name else "unnamed_tool"
        while cid in seen:
            cid = f"{cid}_{i}"
        seen.add(cid)
        out.append((cid, name, args))
    return out


def _result(out: Outcome, tools: Tools, cid: str, name: Any, args: Any, deadline: float,
            skip: str | None = None) -> dict[str, Any]:
    out.tool_calls += 1
    t = time.monotonic()
    if skip is not None:
        r = toolspec.Result(skip, refused=True)
    elif t >= deadline:
        r = toolspec.Result("skipped: out of time", refused=True)
    else:
        r = toolspec.call(tools, name, args)
    out.tool_ms += (time.monotonic() - t) * 1000
    for path, seen in r.read.items():
        out.read[path] = seen
        out.texts[path] = r.text
    if r.fact is not None:
        out.facts.append(r.fact)
    return {"type": "tool_result", "tool_use_id": cid, "content": r.text, **({"is_error": True} if r.refused else {})}


def _close(out: Outcome) -> None:
    """Stopped before a final answer: the turns end in a complete exchange (a tool call with
    no result is dropped), and the answer says what it rests on."""
    turns = out.turns
    if turns and turns[-1]["role"] == "assistant":
        if any(b.get("type") == "tool_use" for b in turns[-1]["content"]):
            turns.pop()
    if turns and turns[-1]["role"] == "assistant":
        turns.pop()
    why = {"deadline": "the time ran out", "iterations": "the step limit was reached",
           "refused": "the model declined"}.get(out.finished, "the model failed")
    if out.read:
        seen = ", ".join(f"{p}:{lines}" for p, (_, lines) in out.read.items())
        note = f"(Best effort: {why} before a final answer. Read so far: {seen}.)"
    else:
        note = f"(Best effort: {why} before a final answer.)"
    out.answer = f"{out.answer}\n\n{note}" if out.answer else note
    turns.append({"role": "assistant", "content": [{"type": "text", "text": out.answer}]})
