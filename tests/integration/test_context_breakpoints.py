"""A call that appends more blocks than the provider looks back from a breakpoint (a dozen
parallel tool calls and their results) still reads the last call's prompt from the cache:
a spare breakpoint goes on the last call's tail (engine/context/requests.py `_last_tail`).
Priced with the project's cache simulator, at L0 and at L1."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lore_sidecar.app import open_engine
from lore_sidecar.engine.context.bodies import strip_marks
from lore_sidecar.engine.context.cache_sim import CacheSim
from lore_sidecar.settings import load_settings

SYSTEM = [{"type": "text", "text": "You are a careful coding agent. " * 300}]


def blocks_of(body: dict) -> tuple[list[tuple[str, int]], list[int], int]:
    """(hash, tokens) per block as a prompt cache sees them, the breakpoints, the head's size."""
    listed = [*body["system"]]
    head = len(listed)
    for m in body["messages"]:
        listed += m["content"] if isinstance(m["content"], list) else [m]
    out, marks = [], []
    for block in listed:
        if "cache_control" in block:
            marks.append(len(out))
        text = json.dumps(strip_marks(block), sort_keys=True)
        out.append((hashlib.sha256(text.encode()).hexdigest(), len(text) // 4 + 1))
    return out, marks, head


def step(k: int, parallel: int) -> list[dict]:
    """One model call's output and its tool results: `parallel` reads at once."""
    ids = [f"c{k}-{j}" for j in range(parallel)]
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "Read",
                                               "input": {"file_path": f"src/m{k}_{j}.py"}} for j, i in enumerate(ids)]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i,
                                          "content": f"def f_{k}_{j}():\n" + "    return 1\n" * 30}
                                         for j, i in enumerate(ids)]}]


def test_a_dozen_parallel_tool_calls_still_read_the_last_prompt_from_the_cache(tmp_path: Path):
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={
        "storeDir": str(tmp_path / "store"), "indexWorkspace": False, "watch": False, "distiller": "off",
        "minLayer0Tokens": 2000, "maxLayer0Tokens": 6000})
    e = open_engine(settings, [])
    sim = CacheSim()
    conv = [{"role": "user", "content": [{"type": "text", "text": "read every module"}]}]
    checked: dict[int, int] = {}
    last_total = 0
    try:
        for k in range(60):
            burst = k % 7 == 3
            conv += step(k, 12 if burst else 1)
            body = {"model": "claude-sonnet-4-5", "max_tokens": 8000, "system": SYSTEM, "messages": conv}
            r = e.context.assemble(session_id="s", body=body, api="anthropic-messages", model="claude-sonnet-4-5",
                                   at=f"2026-12-01T10:{k // 6:02d}:{(k % 6) * 10:02d}Z")
            bl, marks, head = blocks_of(r["body"])
            o = sim.request(bl, marks, at=float(k * 10), head=head)
            if burst and not o.bust:  # not a move (a planned rewrite) either
                assert o.read >= last_total, (k, r["layer"], r["reason"], o, r["breakpoints"])
                checked[r["layer"]] = checked.get(r["layer"], 0) + 1
            last_total = sum(t for _, t in bl)
    finally:
        e.close()
    assert checked.get(0) and checked.get(1), checked  # the control: bursts were checked at both layers


def test_a_harness_marking_system_and_tools_never_gets_more_than_four_breakpoints(tmp_path: Path):
    """Anthropic refuses a body with more than 4 `cache_control` markers. A harness that marks
    its system prompt and its tools itself leaves two: the tail and the prefix take them, and
    the last call's tail gets none even after a burst (reviewer rev7, r7-ctx-fifth-breakpoint)."""
    from lore_sidecar.engine.context.bodies import count_marks

    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={
        "storeDir": str(tmp_path / "store"), "indexWorkspace": False, "watch": False, "distiller": "off",
        "minLayer0Tokens": 2000, "maxLayer0Tokens": 6000})
    e = open_engine(settings, [])
    system = [{**SYSTEM[0], "cache_control": {"type": "ephemeral"}}]
    tools = [{"name": "Read", "description": "Read a file.", "input_schema": {"type": "object"},
              "cache_control": {"type": "ephemeral"}}]
    conv = [{"role": "user", "content": [{"type": "text", "text": "read every module"}]}]
    bursts_with_a_prefix = 0
    try:
        for k in range(60):
            burst = k % 7 == 3
            conv += step(k, 12 if burst else 1)
            body = {"model": "claude-sonnet-4-5", "max_tokens": 8000, "system": system, "tools": tools, "messages": conv}
            r = e.context.assemble(session_id="s", body=body, api="anthropic-messages", model="claude-sonnet-4-5",
                                   at=f"2026-12-01T10:{k // 6:02d}:{(k % 6) * 10:02d}Z")
            assert count_marks(r["body"]) <= 4, (k, r["layer"], r["breakpoints"])
            assert r["body"]["system"][-1].get("cache_control") and r["body"]["tools"][-1].get("cache_control")
            if burst and r["layer"] >= 1 and any(m["at"] == "prefix" for m in r["breakpoints"]):
                bursts_with_a_prefix += 1
    finally:
        e.close()
    assert bursts_with_a_prefix, "control: a burst at L1 with the prefix's breakpoint was checked"
