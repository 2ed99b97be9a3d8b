"""Context assembly over stdio, promises of docs/context.md the earlier tests left open
(independent round 4, tools/rounds/2026-12-04-fresh4-context-gateway-ask.py): calibration
takes only plausible ratios; a Responses `developer` message (Codex's instructions) stays
first, whole, like a `system` one; a move's appended part names only paths not named by an
earlier part."""

from __future__ import annotations

import json

import pytest

from lore_sidecar.client import StdioClient
from lore_sidecar.engine.context.bodies import strip_marks
from tests.support.digest import listed_paths

SYSTEM = [{"type": "text", "text": "You are a coding agent. " * 200}]
TOO_LONG = {"status": 400, "message": "prompt is too long: 212000 tokens > 200000 maximum"}


def assemble(c: StdioClient, session: str, body: dict, **extra) -> dict:
    return c.request("lore/assembleContext", {"sessionId": session, "body": body, **extra}, timeout=60)


def reading(k: int) -> list[dict]:
    """A turn that reads the shared `src/core.py` and a file of its own."""
    out = "\n".join(f"value_{k}_{i} = compute({i})" for i in range(40))
    return [
        {"role": "user", "content": [{"type": "text", "text": f"step {k}: compare src/core.py with src/mod_{k}.py"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"r{k}", "name": "Read",
                                           "input": {"path": f"src/mod_{k}.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"r{k}", "content": out}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"src/mod_{k}.py matches src/core.py."}]},
    ]


def test_calibration_takes_only_a_plausible_ratio(sidecar):
    """docs/context.md: estimates are calibrated by "the latest plausible ratio (0.4-2.5)".
    A usage ten times (or a tenth of) the estimate is no measure of this body: not
    calibrated, the next estimate unchanged. The control: 1.5 is taken."""
    c = sidecar()
    b = {"model": "claude-sonnet-4-5", "max_tokens": 8000, "system": SYSTEM, "messages": reading(0)}
    got = {}
    for session, ratio in (("s-tenfold", 10.0), ("s-tenth", 0.1), ("s-plausible", 1.5)):
        raw = assemble(c, session, b)["estimate"]["inputTokens"]
        told = c.request("lore/recordUsage", {"sessionId": session, "usage": {
            "inputTokens": int(raw * ratio), "cacheCreationInputTokens": 0, "cacheReadInputTokens": 0}})
        got[session] = (told["calibrated"], assemble(c, session, b)["estimate"]["inputTokens"] / raw)
    assert got["s-plausible"][0] and got["s-plausible"][1] == pytest.approx(1.5, abs=0.01), got  # the control
    for session in ("s-tenfold", "s-tenth"):
        assert not got[session][0] and got[session][1] == pytest.approx(1.0, abs=0.01), got


def codex_turn(k: int) -> list[dict]:
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"fix case {k} " + "now " * 60}]},
        {"type": "function_call", "call_id": f"c{k}", "name": "exec_command",
         "arguments": json.dumps({"cmd": f"pytest -q tests/t_{k}.py"})},
        {"type": "function_call_output", "call_id": f"c{k}", "output": f"Exit code: 1\nOutput:\nE   case {k} failed\n"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"case {k} needs work"}]},
    ]


def test_a_responses_developer_message_stays_first_and_whole_like_a_system_one(sidecar):
    """docs/context.md: "System prompt and tools are never rewritten"; Codex sends its
    instructions as a `developer` message at the head of `input`. At L1 it is still the
    first item, byte for byte, and the digest does not hold it. The control: a `system`
    message in the same place is kept alike, and both sessions did compress."""
    c = sidecar()
    for role in ("system", "developer"):
        head = {"type": "message", "role": role, "content": [{"type": "input_text", "text": f"RULES-{role}: be terse."}]}
        session = f"s-{role}"
        c.request("lore/recordUsage", {"sessionId": session, "error": TOO_LONG})
        items = [head, *(i for k in range(40) for i in codex_turn(k))]
        r = assemble(c, session, {"model": "gpt-5", "input": items}, api="openai-responses")
        sent = r["body"]["input"]
        assert r["layer"] == 1 and len(sent) < len(items), role  # compressed
        assert sent[0] == head, role
        prefix = "\n".join(b["text"] for b in sent[1]["content"])
        assert "<lore-context" in prefix and f"RULES-{role}" not in prefix, role


def test_an_appended_part_names_no_path_an_earlier_part_named(sidecar):
    """docs/context.md: a move "appends one <lore-context part=…> block for the messages it
    evicted (naming only paths not named before)". Every turn names `src/core.py`: it is in
    one files line, the first; each turn's own file is named once too. The control: the
    prefix grew by at least two parts, and every evicted turn's file is named."""
    c = sidecar(maxLayer0Tokens=6000, minLayer0Tokens=2000)
    msgs: list[dict] = []
    most, r = 0, None
    for k in range(40):
        msgs += reading(k)
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"continue {k}"}]})
        r = assemble(c, "s-core", {"model": "claude-sonnet-4-5", "max_tokens": 8000, "system": SYSTEM,
                                   "messages": msgs})
        msgs.pop()
        if r["layer"]:
            most = max(most, len(r["body"]["messages"][0]["content"]))
    parts = [b["text"] for b in r["body"]["messages"][0]["content"]]
    files = listed_paths([line for part in parts for line in part.splitlines()])
    raw = json.dumps(strip_marks(r["body"]["messages"][1:]))
    evicted = [k for k in range(40) if f'"r{k}"' not in raw]
    assert most >= 2 and len(parts) >= 2 and len(evicted) >= 10, (most, len(parts), evicted)  # the control
    assert all(f"src/mod_{k}.py" in files for k in evicted), files
    assert files.count("src/core.py") == 1, files
    assert len(files) == len(set(files)), files
