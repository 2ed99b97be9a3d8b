"""The raw window is sized in the model's tokens of the conversation itself
(engine/context/calibrate.py): a provider whose tokenizer counts the conversation at 1.5
tokens per estimated token and the system prompt at 1.0 (a large system prompt, as Claude
Code sends) gets windows of `minLayer0Tokens` counted tokens, not 1.5 times that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lore_sidecar.app import open_engine
from lore_sidecar.engine.context import calibrate
from lore_sidecar.engine.context.requests import estimate
from lore_sidecar.settings import load_settings

PINNED = 2_000
SYSTEM = "You are a careful coding agent; follow the tools' contracts. " * 500  # ~8k estimated tokens
CONV, FIXED = 1.5, 1.0  # the provider's tokens per estimated token: conversation, system prompt


def call(k: int) -> list[dict]:
    out = "\n".join(f"src/mod_{k}.py:{i}: value_{k}_{i} = compute({i}, {k})" for i in range(25))
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "Read",
                                               "input": {"file_path": f"src/mod_{k}.py"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": out}]}]


def counted(body: dict) -> tuple[int, int]:
    """(the provider's count of the whole body, of its conversation alone)."""
    fixed = estimate({k: v for k, v in body.items() if k != "messages"})
    conv = estimate(body) - fixed
    return int(FIXED * fixed + CONV * conv), int(CONV * conv)


def window_tokens(body: dict) -> int:
    """Counted tokens of the raw window: the messages after the prefix and its acknowledgement."""
    msgs = body["messages"]
    first = next(i for i, m in enumerate(msgs) if "<lore-context" in json.dumps(m))
    rest = msgs[first + 1:]
    if rest and rest[0]["role"] == "assistant" and "Understood" in json.dumps(rest[0]):
        rest = rest[1:]
    return int(CONV * sum(estimate(m) for m in rest))


def test_the_window_after_a_move_holds_the_setting_in_the_conversations_own_tokens(tmp_path: Path):
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={
        "storeDir": str(tmp_path / "store"), "indexWorkspace": False, "watch": False, "distiller": "off",
        "minLayer0Tokens": PINNED})
    e = open_engine(settings, [])
    conv = [{"role": "user", "content": [{"type": "text", "text": "read the modules one by one"}]}]
    windows = []
    try:
        for k in range(120):
            conv += call(k)
            body = {"model": "claude-sonnet-4-5", "max_tokens": 8000, "messages": conv,
                    "system": [{"type": "text", "text": SYSTEM}]}
            at = f"2026-12-01T10:{k // 30:02d}:{(k % 30) * 2:02d}Z"
            r = e.context.assemble(session_id="s", body=body, api="anthropic-messages", model="claude-sonnet-4-5", at=at)
            whole, _ = counted(r["body"])
            e.context.record_usage(session_id="s", model="claude-sonnet-4-5", at=at, usage={
                "input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": whole})
            if r["reason"].startswith("window moved"):
                windows.append(window_tokens(r["body"]))
    finally:
        e.close()
    assert len(windows) >= 2, windows
    # The whole body's ratio is ~1.05 here (the system prompt dominates): sized by it, a
    # window would reach ~1.4x the setting in the provider's tokens.
    assert all(w <= PINNED * 1.05 for w in windows[1:]), windows


def test_the_share_comes_from_a_short_conversation_and_the_ratio_is_the_latest_calls():
    """Counts of 1.0 x an 8,000-token system prompt plus 1.5 x the conversation: measured on
    a call with 100 tokens of conversation, the share errs by under 1%; the ratio is the
    latest call's, even when the conversation's make-up changed."""
    share = calibrate.fixed_share(8_000, 100, 8_000 + 150)
    assert share == pytest.approx(8_000, rel=0.01)
    assert calibrate.conversation_ratio(8_000 + 2 * 20_000, 20_000, share) == pytest.approx(2.0, abs=0.01)
    assert calibrate.conversation_ratio(8_000 + 40_000, 4_000, share) is None  # 10x: not a body's ratio
    assert calibrate.conversation_ratio(8_000, 0, share) is None  # no conversation: nothing to measure
