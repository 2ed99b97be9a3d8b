"""Context assembly on the shapes a default session never sends, checked on every call of a
session that reaches L1 (hunt round 7a, tools/rounds/2026-12-07-hunt7a.py):

- the breakpoints reported are the breakpoints sent: each on the LAST block of what it
  closes (a system prompt of several blocks, a message of a dozen tool results), and no
  other `cache_control` in the body (Anthropic's cache reads a prefix up to the marked
  block; a mark on a first block caches none of the rest);
- roles keep alternating (Anthropic refuses two user turns in a row);
- OpenAI Chat and Responses: the harness's leading system/developer entries come first,
  whole and once; a later developer entry is not pulled ahead of the prefix;
- the harness rewriting its own history (its compaction) is noticed: what it wrote in its
  place reaches the model.
"""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import pytest

from lore_sidecar.app import open_engine
from lore_sidecar.engine.context.bodies import count_marks
from lore_sidecar.settings import load_settings
from tests.integration.test_context_breakpoints import step

SYSTEM = [{"type": "text", "text": "You are a careful coding agent. " * 150},
          {"type": "text", "text": "Project rules: keep functions small. " * 100}]


def engine(tmp_path: Path):
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={
        "storeDir": str(tmp_path / "store"), "indexWorkspace": False, "watch": False, "distiller": "off",
        "minLayer0Tokens": 2000, "maxLayer0Tokens": 6000})
    return open_engine(settings, [])


def at(k: int) -> str:
    return f"2026-12-01T10:{k // 6:02d}:{(k % 6) * 10:02d}Z"


def marked_blocks(body: dict) -> list[tuple[str, int, int]]:
    """Every (where, item, block) that carries a cache_control in the system and messages."""
    out = [("system", i, 0) for i, blk in enumerate(body.get("system") or []) if "cache_control" in blk]
    for i, m in enumerate(body["messages"]):
        if isinstance(m.get("content"), list):
            out += [("messages", i, j) for j, blk in enumerate(m["content"]) if "cache_control" in blk]
    return out


def test_anthropic_breakpoints_close_the_last_block_are_the_ones_reported_and_roles_alternate(tmp_path):
    e = engine(tmp_path)
    conv = [{"role": "user", "content": [{"type": "text", "text": "read every module"}]}]
    seen = {"layers": set(), "kinds": set(), "multi-block marks": 0}
    try:
        for k in range(50):
            conv += step(k, 12 if k % 7 == 3 else 1)
            body = {"model": "claude-sonnet-4-5", "max_tokens": 8000, "system": SYSTEM, "messages": conv}
            r = e.context.assemble(session_id="s", body=body, api="anthropic-messages", model="claude-sonnet-4-5", at=at(k))
            out, why = r["body"], (k, r["layer"], r["reason"], r["breakpoints"])
            seen["layers"].add(r["layer"])
            roles = [m["role"] for m in out["messages"]]
            assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), (why, roles)
            assert roles[0] == "user", why
            marks = marked_blocks(out)
            assert count_marks(out) == len(marks) == len(r["breakpoints"]) <= 4, (why, marks)
            for where, i, j in marks:
                if where == "system":
                    assert i == len(out["system"]) - 1, (why, "the system prompt's mark is on its last block")
                else:
                    assert j == len(out["messages"][i]["content"]) - 1, (why, "a message's mark is on its last block")
                    seen["multi-block marks"] += len(out["messages"][i]["content"]) > 1
            reported = {("system" if b["at"] == "system" else "messages", b["index"]) for b in r["breakpoints"]}
            assert reported == {(w, i) for w, i, _ in marks}, why
            seen["kinds"] |= {b["at"] for b in r["breakpoints"]}
    finally:
        e.close()
    # The controls: both layers ran, every kind of breakpoint was placed, and some closed a
    # message of many blocks.
    assert {0, 1} <= seen["layers"], seen
    assert {"system", "tail", "prefix", "last call's tail"} <= seen["kinds"], seen
    assert seen["multi-block marks"], seen


def _chat_step(k: int) -> list[dict]:
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{k}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": f"m{k}.py"})}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"def f_{k}():\n" + "    return 1\n" * 30}]


def _responses_step(k: int) -> list[dict]:
    return [{"type": "function_call", "call_id": f"c{k}", "name": "read", "arguments": json.dumps({"path": f"m{k}.py"})},
            {"type": "function_call_output", "call_id": f"c{k}", "output": f"def f_{k}():\n" + "    return 1\n" * 30}]


def test_openai_leading_system_entries_stay_first_whole_and_once_and_a_later_one_is_not_pulled_ahead(tmp_path):
    e = engine(tmp_path)
    try:
        for api, model, system, user, later, more in (
                ("openai-chat", "gpt-5", [{"role": "system", "content": "SYS-ALPHA"}, {"role": "developer", "content": "DEV-BETA"}],
                 {"role": "user", "content": "read every module"}, {"role": "developer", "content": "LATER-GAMMA"}, _chat_step),
                ("openai-responses", "gpt-5", [{"type": "message", "role": "developer", "content": "DEV-BETA"}],
                 {"type": "message", "role": "user", "content": "read every module"},
                 {"type": "message", "role": "developer", "content": "LATER-GAMMA"}, _responses_step)):
            conv = [*system, user]
            compressed = 0
            for k in range(40):
                conv += more(k)
                if k == 2:
                    conv.append(later)
                key = "messages" if api == "openai-chat" else "input"
                r = e.context.assemble(session_id=f"s-{api}", body={"model": model, key: conv}, api=api, model=model,
                                       at=at(k))
                items = r["body"][key]
                assert items[:len(system)] == system, (api, k, r["layer"])
                if r["layer"] and items is not conv and len(items) < len(conv):
                    compressed += 1
                    # After the leading entries comes lore's prefix (a user message), never
                    # the later developer entry, which was evicted with its turn.
                    nxt = items[len(system)]
                    assert nxt.get("role") == "user" and "LATER-GAMMA" not in json.dumps(nxt), (api, k, nxt)
                    assert sum(json.dumps(x) == json.dumps(later) for x in items) <= 1, (api, k)
            assert compressed, f"control: {api} was compressed at some call"
    finally:
        e.close()


def test_a_history_the_harness_rewrote_reaches_the_model(tmp_path):
    """The harness compacts its history itself (a summary in place of the first half): the
    summary must reach the model (in lore's prefix or in the window), not be skipped because
    the window's old position still exists in the new, shorter list. Control: before the
    rewrite the summary's words are nowhere."""
    e = engine(tmp_path)
    conv = [{"role": "user", "content": [{"type": "text", "text": "read every module"}]}]
    try:
        for k in range(40):
            conv += step(k, 1)
            r = e.context.assemble(session_id="s", body={"model": "claude-sonnet-4-5", "max_tokens": 8000,
                                                         "system": SYSTEM, "messages": conv},
                                   api="anthropic-messages", model="claude-sonnet-4-5", at=at(k))
        assert r["layer"] >= 1 and "SUMMARY-WALRUS" not in json.dumps(r["body"])
        keep = len(conv) // 4 * 2 + 1  # a model call (an assistant message) begins what is kept
        summary = {"role": "user", "content": [{"type": "text", "text": "SUMMARY-WALRUS: the harness compacted "
                                                                        "the conversation; modules m0..m20 were read."}]}
        rewritten = [summary, *conv[keep:]]
        assert rewritten[1]["role"] == "assistant" and len(rewritten) > 40
        r = e.context.assemble(session_id="s", body={"model": "claude-sonnet-4-5", "max_tokens": 8000,
                                                     "system": SYSTEM, "messages": rewritten},
                               api="anthropic-messages", model="claude-sonnet-4-5", at=at(40))
        assert "SUMMARY-WALRUS" in json.dumps(r["body"]), (r["layer"], r["reason"])
    finally:
        e.close()



CLAUDE_CODE_SUMMARY = ("This session is being continued from a previous conversation that ran out of context. "
                       "The summary below covers the earlier portion of the conversation.\n\nAnalysis:\n")
PI_SUMMARY = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"


def _summary_then_steps(opening: str) -> list[dict]:
    facts = [f"{n}. Read src/m{n}.py and noted its helpers." for n in range(1, 25)]
    facts.insert(17, "18. FACT-OKAPI: deploys go through the blue pool, never the green one.")
    return [{"role": "user", "content": [{"type": "text", "text": opening + "\n".join(facts)}]}]


def _numbered(opening: str, facts: int) -> list[dict]:
    return [{"role": "user", "content": [{"type": "text", "text": opening + "\n".join(
        f"{n}. Read src/m{n}.py and noted its helpers." for n in range(1, facts))}]}]


def _session(tmp_path: Path, first: list[dict], carry: bool | None, max_raw: int = 6000):
    """Each call's answer over 60 model calls after the conversation's `first` message(s)."""
    options = {"storeDir": str(tmp_path / "store"), "indexWorkspace": False, "watch": False, "distiller": "off",
               "minLayer0Tokens": 2000, "maxLayer0Tokens": max_raw}
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options=options if carry is None else {**options, "carryHarnessSummary": carry})
    e = open_engine(settings, [])
    conv = list(first)
    try:
        for k in range(60):
            conv += step(k, 1)
            yield k, e.context.assemble(session_id="s", body={"model": "claude-sonnet-4-5", "max_tokens": 8000,
                                                              "system": SYSTEM, "messages": conv},
                                        api="anthropic-messages", model="claude-sonnet-4-5", at=at(k))
    finally:
        e.close()


def _assembled(tmp_path: Path, opening: str, carry: bool | None) -> list[dict]:
    return [r for _, r in _session(tmp_path, _summary_then_steps(opening), carry) if r["layer"] >= 1]


@pytest.mark.parametrize("opening", [CLAUDE_CODE_SUMMARY, PI_SUMMARY], ids=["claude-code", "pi"])
def test_the_harness_compaction_summary_is_carried_whole_past_every_window_move_when_asked(tmp_path, opening):
    """After a harness compacts (Claude Code, Pi), its conversation opens with the summary it
    wrote: all the agent knows of what came before. With `carryHarnessSummary` on, lore's
    prefix carries it whole past every window move (its first block, byte-identical from move
    to move), not as the digest's one "user asked" line. Controls: the same message without a
    harness's opening is digested like any other (its deep line gone), and so is the summary
    with the setting off (the default), so the test can tell the three apart."""
    summary = _summary_then_steps(opening)[0]["content"][0]["text"]
    moved = _assembled(tmp_path / "a", opening, carry=True)
    assert moved, "the session never left L0"
    prefixes = set()
    for r in moved:
        first = r["body"]["messages"][0]
        assert first["content"][0]["text"] == summary, (r["layer"], r["reason"])
        assert json.dumps(r["body"]).count("FACT-OKAPI") == 1
        assert not any("user asked: " + opening[:40] in blk["text"] for blk in first["content"][1:])
        prefixes.add(json.dumps(first["content"][1:]))
    assert len(prefixes) >= 2, "the window moved once only: the append path was not exercised"

    plain = _assembled(tmp_path / "b", "Notes from earlier, in brief:\n", carry=True)
    assert plain and all("FACT-OKAPI" not in json.dumps(r["body"]) for r in plain)
    assert all("user asked: Notes from earlier" in json.dumps(r["body"]) for r in plain)
    off = _assembled(tmp_path / "c", opening, carry=None)  # the default
    assert off and all("FACT-OKAPI" not in json.dumps(r["body"]) for r in off)
    assert all("user asked: " + opening[:40] in json.dumps(r["body"]) for r in off)


def test_the_harness_summary_is_found_only_where_the_harness_puts_it():
    """Where `leading_summary` looks: the conversation's first message after any system
    entries (OpenAI bodies keep theirs in the conversation), read past leading whitespace (a
    summary sent as "\\n\\nThis session is being continued..."); never a later message that
    merely quotes the opening (the user pasting an old summary mid-session must not be moved
    to the prefix's head, nor have its room taken from the raw window)."""
    from lore_sidecar.engine.context.bodies import ANTHROPIC, CHAT, RESPONSES, leading_summary

    quote = CLAUDE_CODE_SUMMARY + "1. Read src/m1.py."
    assert leading_summary(ANTHROPIC, [{"role": "user", "content": [{"type": "text", "text": quote}]}]) == 0
    assert leading_summary(ANTHROPIC, [{"role": "user", "content": "\n\n  " + quote}]) == 0
    # A harness may put a reminder block ahead of the summary in the same message.
    assert leading_summary(ANTHROPIC, [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>The date is 2026-12-07.</system-reminder>"},
        {"type": "text", "text": quote}]}]) == 0
    assert leading_summary(ANTHROPIC, [{"role": "user", "content": [  # the control: no block opens with it
        {"type": "text", "text": "<system-reminder>The date is 2026-12-07.</system-reminder>"},
        {"type": "text", "text": "Please read " + quote}]}]) is None
    assert leading_summary(CHAT, [{"role": "system", "content": "SYS"}, {"role": "developer", "content": "DEV"},
                                  {"role": "user", "content": PI_SUMMARY + "x"}]) == 2
    assert leading_summary(RESPONSES, [{"type": "message", "role": "developer", "content": "DEV"},
                                       {"type": "message", "role": "user", "content": quote}]) == 1
    # A later message with the same opening is the user's text, not the harness's summary.
    assert leading_summary(ANTHROPIC, [{"role": "user", "content": "read every module"},
                                       {"role": "assistant", "content": "ok"},
                                       {"role": "user", "content": quote}]) is None
    assert leading_summary(CHAT, [{"role": "system", "content": "SYS"}, {"role": "user", "content": "hi"},
                                  {"role": "user", "content": quote}]) is None


def _window_after_moves(tmp_path: Path, opening: str, facts: int) -> list[int]:
    """The messages sent after each window move (carryHarnessSummary on): the prefix, its
    acknowledgement and the raw window, at each call where that count drops."""
    lens = [len(r["body"]["messages"]) for _, r in _session(tmp_path, _numbered(opening, facts), True)
            if r["layer"] >= 1]
    return [n for m, n in zip(lens, lens[1:], strict=False) if n < m]


def test_a_carried_summary_takes_its_room_from_the_raw_window_but_never_more_than_half(tmp_path):
    """docs/context.md: the carried summary "takes its room from the raw window's", not on
    top of it; and a summary larger than the whole raw window (minLayer0Tokens) leaves it
    half, not a single turn. Control: the same text without a harness's opening (digested,
    nothing carried) keeps the whole raw window at each move."""
    big = 600  # ~20k characters: several times minLayer0Tokens
    carried = _window_after_moves(tmp_path / "a", CLAUDE_CODE_SUMMARY, big)
    plain = _window_after_moves(tmp_path / "b", "Notes from earlier, in brief:\n", big)
    assert carried and plain, "the window never moved"
    assert max(carried) < min(plain), (carried, plain)  # its room came from the raw window
    assert 2 * min(carried) + 4 >= min(plain), (carried, plain)  # about half of it is left


def _first_compressed_call(tmp_path: Path, opening: str, facts: int) -> int | None:
    with closing(_session(tmp_path, _numbered(opening, facts), True, max_raw=60000)) as calls:
        return next((k for k, r in calls if r["layer"] >= 1), None)


def test_leaving_l0_prices_the_first_prefix_with_the_carried_summary_in_it(tmp_path):
    """The cost model's first prefix (`_first_prefix`) is what leaving L0 would write: with
    the summary carried, the summary itself, whole. A summary several times the raw window
    (~5k tokens) makes that prefix dear, so the session leaves L0 no earlier than with the
    same text digested to a line (control: a plain opening). Priced without it, leaving L0
    looks free and the session leaves at its very first call."""
    carried = _first_compressed_call(tmp_path / "a", CLAUDE_CODE_SUMMARY, 400)
    plain = _first_compressed_call(tmp_path / "b", "Notes from earlier, in brief:\n", 400)
    assert carried is not None and plain is not None, (carried, plain)
    assert carried >= plain, (carried, plain)
