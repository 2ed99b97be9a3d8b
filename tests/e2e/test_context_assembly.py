"""`lore/assembleContext` and `lore/recordUsage` over stdio: L0 changes nothing but cache
breakpoints; a long session never overflows the window; the distilled prefix is
byte-identical between compactions; a "prompt is too long" raises the floor and survives a
restart; two busts in a row stop compression; tool calls are never parted from their
results, in all three wire dialects."""

from __future__ import annotations

import json

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.engine.context.bodies import strip_marks

OPTIONS = {"watch": False, "indexWorkspace": False, "distiller": "off"}
WINDOW = 200_000


@pytest.fixture
def sidecar(tmp_path, workspace):
    clients = []

    def spawn() -> StdioClient:
        c = StdioClient(sidecar_command("--store-dir", str(tmp_path / "store")))
        c.initialize(workspace, options=OPTIONS)
        clients.append(c)
        return c

    yield spawn
    for c in clients:
        c.close()


def turn(k: int, lines: int = 40) -> list[dict]:
    """One agent turn: the user asks, the model reads a file, the tool answers, the model replies."""
    output = "\n".join(f"src/mod_{k}.py:{i}: value_{k}_{i} = compute({i})" for i in range(lines))
    return [
        {"role": "user", "content": [{"type": "text", "text": f"step {k}: look at src/mod_{k}.py (marker zq{k}x)"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"tu{k}", "name": "Read",
                                           "input": {"path": f"src/mod_{k}.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{k}", "content": output}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Module {k} computes values; nothing odd."}]},
    ]


def body(messages: list[dict]) -> dict:
    return {"model": "claude-sonnet-4-5", "max_tokens": 8000, "stream": True,
            "system": [{"type": "text", "text": "You are a coding agent. " * 50}],
            "tools": [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}],
            "messages": messages}


def assemble(c: StdioClient, session: str, b: dict, **extra) -> dict:
    return c.request("lore/assembleContext", {"sessionId": session, "body": b, **extra}, timeout=60)


def size(b: dict) -> int:
    return len(json.dumps(b)) // 4


def paired(messages: list[dict]) -> bool:
    """Every tool result answers a tool call of the assistant message right before it."""
    for i, m in enumerate(messages):
        blocks = m["content"] if isinstance(m["content"], list) else []
        results = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
        if results:
            prev = messages[i - 1]["content"] if i else []
            if i == 0 or messages[i - 1]["role"] != "assistant" or not results <= {
                    b.get("id") for b in prev if isinstance(b, dict) and b.get("type") == "tool_use"}:
                return False
    return True


def test_l0_changes_nothing_but_breakpoints_and_records_each_message_once(sidecar):
    c = sidecar()
    msgs = [m for k in range(3) for m in turn(k)] + [{"role": "user", "content": [{"type": "text", "text": "next"}]}]
    original = body(msgs)
    r = assemble(c, "s-l0", original)
    assert r["layer"] == 0 and r["recorded"] == len(msgs)
    assert strip_marks(r["body"]) == original  # byte-identical but for cache_control
    assert r["body"] != original and len(r["breakpoints"]) == 2  # control: it did place them
    again = assemble(c, "s-l0", original)
    assert again["recorded"] == 0 and again["body"] == r["body"]
    hits = c.request("lore/recall", {"query": "zq1x", "sources": ["messages"]})["hits"]
    assert hits and hits[0]["sessionId"] == "s-l0"


def test_a_150_turn_session_never_exceeds_the_window_and_the_prefix_is_stable_between_compactions(sidecar):
    c = sidecar()
    msgs: list[dict] = []
    previous = None
    layers, moves, stable = set(), 0, 0
    # 150 turns: L1 starts near turn 40 and the window then moves about every 26 turns, so
    # this is four compactions with ~100 stable calls between them (the batching check needs
    # more than ten per move). Turns 150-300 only repeated that pattern at quadratic cost:
    # each call resends the whole growing body, and even at 300 turns the raw body (169k
    # tokens) stayed under the window, reaching no further layer.
    for k in range(150):
        msgs += turn(k)
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"continue {k}"}]})
        original = body(msgs)
        r = assemble(c, "s-long", original)
        sent = r["body"]
        assert size(sent) <= WINDOW, (k, size(sent))
        assert paired(sent["messages"]), k
        # System prompt and tools are never rewritten (their cache survives a compaction), and
        # a session's layer never goes back down (docs/context.md).
        assert strip_marks(sent["system"]) == original["system"] and strip_marks(sent["tools"]) == original["tools"], k
        assert previous is None or r["layer"] >= previous["layer"], (k, previous["layer"], r["layer"])
        layers.add(r["layer"])
        if previous is not None and r["layer"] >= 1 and previous["layer"] == r["layer"]:
            if r["reason"] == "stable prefix":
                stable += 1
                # Everything the last call sent (but its last message, which carried the tail
                # marker) is sent again byte for byte: the prefix and the pinned window.
                before = strip_marks(previous["body"]["messages"][:-1])
                assert strip_marks(sent["messages"][: len(before)]) == before, k
                assert sent["messages"][0] == previous["body"]["messages"][0]  # the distilled prefix itself
            else:
                moves += 1
        previous = r
        msgs.pop()  # the "continue" prompt is replaced by the next turn's
    assert 1 in layers and stable > 10 * max(1, moves), (stable, moves)  # compactions are batched
    prefix = previous["body"]["messages"][0]["content"][0]["text"]
    assert prefix.startswith("<lore-context") and "lore_recall" in prefix
    # What was evicted stays reachable through recall in the session.
    hits = c.request("lore/recall", {"query": "zq3x", "sources": ["messages"], "sessionId": "s-long"})["hits"]
    assert any("zq3x" in h["snippet"] for h in hits)


def test_prompt_too_long_raises_the_next_calls_layer_and_survives_a_restart(sidecar):
    c = sidecar()
    msgs = [m for k in range(30) for m in turn(k)] + [{"role": "user", "content": [{"type": "text", "text": "next"}]}]
    assert assemble(c, "s-long2", body(msgs))["layer"] == 0
    told = c.request("lore/recordUsage", {"sessionId": "s-long2", "error": {
        "status": 400, "message": "prompt is too long: 212000 tokens > 200000 maximum"}})
    assert told["forceMinLayer"] == 1
    c.close()
    again = sidecar()  # a new process on the same store
    r = assemble(again, "s-long2", body(msgs))
    assert r["layer"] >= 1 and size(r["body"]) < size(body(msgs))
    control = assemble(again, "s-other", body(msgs))
    assert control["layer"] == 0  # the floor is that session's alone


def test_two_busts_in_a_row_stop_compression(sidecar):
    def run(session: str, busts: bool) -> list[str]:
        c = sidecar()
        msgs = [m for k in range(120) for m in turn(k)]
        reasons = []
        for k in range(120, 200):
            msgs += turn(k)
            r = assemble(c, session, body(msgs))
            reasons.append(r["reason"])
            if r["layer"] >= 1 and busts:  # the provider wrote the whole prompt again: it read nothing
                c.request("lore/recordUsage", {"sessionId": session, "usage": {
                    "inputTokens": 10, "cacheCreationInputTokens": r["estimate"]["inputTokens"], "cacheReadInputTokens": 0}})
        return reasons

    calm = run("s-calm", busts=False)
    assert any(x.startswith("window moved") for x in calm[5:])  # control: the window does move
    stormy = run("s-busts", busts=True)
    assert not any(x.startswith("window moved") and "over the window" not in x for x in stormy[5:])


def in_flight(k: int) -> list[dict]:
    return [{"role": "user", "content": [{"type": "text", "text": f"now fix {k}"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "live", "name": "Read", "input": {"path": "x"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "live", "content": "LIVE OUTPUT " * 400}]}]


def test_an_in_flight_tool_call_and_its_result_are_never_split_or_stubbed(sidecar):
    c = sidecar()
    msgs = [m for k in range(60) for m in turn(k)] + in_flight(60)
    for _ in range(3):  # floor raised to L3: every older tool output is stubbed
        c.request("lore/recordUsage", {"sessionId": "s-fly", "error": {"message": "prompt is too long"}})
    r = assemble(c, "s-fly", body(msgs))
    assert r["layer"] == 3
    sent = strip_marks(r["body"]["messages"])
    assert sent[-2:] == in_flight(60)[-2:]  # the call and its result, whole
    results = [b for m in sent for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]
    assert any("tool output elided" in json.dumps(b) for b in results)  # control: older ones were stubbed
    uses = {b["id"] for m in sent if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use"}
    assert {b["tool_use_id"] for b in results} <= uses


def test_openai_chat_and_responses_bodies_keep_tool_call_pairing(sidecar):
    c = sidecar()
    for turns in range(40, 90, 7):  # the window lands somewhere else each time
        chat = [{"role": "system", "content": "You code."}]
        resp: list[dict] = []
        for k in range(turns):
            # Sizes vary from turn to turn, so the window's edge falls on every kind of item.
            out = "\n".join(f"line {i} of file {k}" for i in range(10 + (k * 37) % 70))
            chat += [{"role": "user", "content": f"step {k} " + "please " * ((k * 53) % 90)},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": f"c{k}", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": f"c{k}", "content": out},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": f"d{k}", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": f"d{k}", "content": out[: 100 + (k * 71) % 900]},
                     {"role": "assistant", "content": f"done {k}"}]
            resp += [{"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                       "text": f"step {k} " + "please " * ((k * 53) % 90)}]},
                     {"type": "function_call", "call_id": f"c{k}", "name": "read", "arguments": "{}"},
                     {"type": "function_call_output", "call_id": f"c{k}", "output": out},
                     {"type": "function_call", "call_id": f"d{k}", "name": "grep", "arguments": "{}"},
                     {"type": "function_call_output", "call_id": f"d{k}", "output": out[: 100 + (k * 71) % 900]},
                     {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"done {k}"}]}]
        chat_id, resp_id = f"s-chat-{turns}", f"s-resp-{turns}"
        for session in (chat_id, resp_id):
            for _ in range(2):
                c.request("lore/recordUsage", {"sessionId": session, "error": {"message": "context_length_exceeded"}})
        r = c.request("lore/assembleContext", {"sessionId": chat_id, "body": {"model": "gpt-5", "messages": chat},
                                               "api": "openai-chat"}, timeout=60)
        out = r["body"]["messages"]
        assert r["layer"] == 2 and out[0] == {"role": "system", "content": "You code."} and len(out) < len(chat)
        called: set[str] = set()
        for m in out:
            if m["role"] == "tool":
                assert m["tool_call_id"] in called, turns
            called = {call["id"] for call in m.get("tool_calls") or []} | (called if m["role"] == "tool" else set())
        r = c.request("lore/assembleContext", {"sessionId": resp_id, "body": {"model": "gpt-5", "input": resp},
                                               "api": "openai-responses"}, timeout=60)
        out = r["body"]["input"]
        assert r["layer"] == 2 and len(out) < len(resp)
        calls: set[str] = set()
        for item in out:
            if item.get("type") == "function_call":
                calls.add(item["call_id"])
            if item.get("type") == "function_call_output":
                assert item["call_id"] in calls, turns


def test_ask_answers_from_retrieval_with_paths_lines_and_hashes_and_says_so(sidecar, workspace):
    (workspace / "billing.py").write_text("def round_tax(amount):\n    \"\"\"Tax is rounded half-up to cents.\"\"\"\n"
                                          "    return round(amount, 2)\n")
    c = sidecar()
    c.request("lore/reindex", {"scope": "workspace"}, timeout=60)
    r = c.request("lore/ask", {"question": "how is tax rounded?"})
    assert r["mode"] == "retrieval" and r["answer"].startswith("No model answered this")
    src = next(s for s in r["sources"] if s["path"].endswith("billing.py"))
    import hashlib

    assert src["lines"] == "1-3" and src["sha256"] == hashlib.sha256((workspace / "billing.py").read_bytes()).hexdigest()
    assert c.request("lore/askStats", {})["questionsAnswered"] == 1
    empty = c.request_full("lore/ask", {"question": "  "})
    assert empty["error"]["data"]["kind"] == "invalidQuestion"


def test_the_harness_own_breakpoints_are_left_alone_and_never_make_more_than_four(sidecar):
    """Anthropic allows four `cache_control` breakpoints. At L0 a body that carries the
    harness's own markers comes back exactly as sent (lore adds none); after compression
    lore's markers fill only what the harness left (three on system and tools: one more).
    The controls: a body without markers gets lore's two at L0, and after compression
    three (its system prompt, so a window move does not rewrite it; the prefix; the tail)."""
    from lore_sidecar.engine.context.bodies import count_marks

    c = sidecar()
    msgs = [m for k in range(30) for m in turn(k)] + [{"role": "user", "content": [{"type": "text", "text": "next"}]}]
    own = body(msgs)
    own["system"] = [{"type": "text", "text": "You are a coding agent. " * 50, "cache_control": {"type": "ephemeral"}},
                     {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    own["tools"] = [{**own["tools"][0], "cache_control": {"type": "ephemeral"}}]
    r = assemble(c, "s-own-l0", own)
    assert r["layer"] == 0 and r["body"] == own and r["breakpoints"] == []
    plain = assemble(c, "s-plain-l0", body(msgs))
    assert plain["layer"] == 0 and count_marks(plain["body"]) == 2  # the control
    for session in ("s-own", "s-plain"):
        c.request("lore/recordUsage", {"sessionId": session, "error": {"message": "prompt is too long"}})
    squeezed = assemble(c, "s-own", own)
    assert squeezed["layer"] >= 1 and count_marks(squeezed["body"]) <= 4, squeezed["breakpoints"]
    assert squeezed["body"]["system"] == own["system"] and squeezed["body"]["tools"] == own["tools"]
    control = assemble(c, "s-plain", body(msgs))
    assert control["layer"] >= 1 and count_marks(control["body"]) == 3  # system, prefix, tail


def test_l2_keeps_the_outputs_of_the_last_two_model_calls_whole(sidecar):
    """docs/context.md: at L2 "tool outputs older than the last two model calls become stubs".
    The turn in progress made two calls (read, then grep): both outputs are sent whole; the
    control: the older turns' outputs are stubbed."""
    c = sidecar()
    first, second = "FIRST OUTPUT " * 400, "SECOND OUTPUT " * 400
    live = [{"role": "user", "content": [{"type": "text", "text": "now fix the parser"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a1", "name": "Read", "input": {"path": "p"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a1", "content": first}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a2", "name": "Grep", "input": {"q": "x"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a2", "content": second}]}]
    msgs = [m for k in range(60) for m in turn(k)] + live
    for _ in range(2):
        c.request("lore/recordUsage", {"sessionId": "s-l2", "error": {"message": "prompt is too long"}})
    r = assemble(c, "s-l2", body(msgs))
    assert r["layer"] == 2
    sent = strip_marks(r["body"]["messages"])
    assert sent[-4:] == live[-4:]  # both calls of this turn and their outputs, whole
    results = [b for m in sent for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]
    assert any("tool output elided" in json.dumps(b) for b in results)  # control: older ones were stubbed
    assert paired(sent)


def test_parallel_function_calls_of_the_responses_dialect_stay_with_their_outputs(sidecar):
    """A Responses model turn may emit several `function_call` items in a row before their
    outputs. A window starting between them would send an output whose call was evicted.
    Wherever the window's edge falls, every output follows its call."""
    c = sidecar()
    for turns in range(40, 90, 7):
        resp: list[dict] = []
        for k in range(turns):
            out = "\n".join(f"line {i} of file {k}" for i in range(10 + (k * 37) % 70))
            resp += [{"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                       "text": f"step {k} " + "please " * ((k * 53) % 90)}]},
                     {"type": "function_call", "call_id": f"a{k}", "name": "read", "arguments": "{}"},
                     {"type": "function_call", "call_id": f"b{k}", "name": "grep", "arguments": "{}"},
                     {"type": "function_call", "call_id": f"c{k}", "name": "ls", "arguments": "{}"},
                     {"type": "function_call_output", "call_id": f"a{k}", "output": out},
                     {"type": "function_call_output", "call_id": f"b{k}", "output": out[: 100 + (k * 71) % 900]},
                     {"type": "function_call_output", "call_id": f"c{k}", "output": out[: 50 + (k * 13) % 400]},
                     {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"done {k}"}]}]
        session = f"s-par-{turns}"
        for _ in range(2):
            c.request("lore/recordUsage", {"sessionId": session, "error": {"message": "context_length_exceeded"}})
        r = c.request("lore/assembleContext", {"sessionId": session, "body": {"model": "gpt-5", "input": resp},
                                               "api": "openai-responses"}, timeout=60)
        out = r["body"]["input"]
        assert r["layer"] == 2 and len(out) < len(resp)
        calls: set[str] = set()
        for item in out:
            if item.get("type") == "function_call":
                calls.add(item["call_id"])
            if item.get("type") == "function_call_output":
                assert item["call_id"] in calls, (turns, item["call_id"])


def test_prompt_too_long_halves_the_raw_window_at_once(sidecar):
    """docs/context.md: a "prompt is too long" raises the floor by one "and halves the raw
    window at once" - the estimate was low by an unknown factor, so a window that merely fits
    the pinned size could be too long again. The history here is under the pinned size; after
    the error the raw window sent is at most half of it (plus the turn it must start on). The
    control: the distilled prefix stands in for what was evicted."""
    c = sidecar()
    msgs = [m for k in range(30) for m in turn(k)] + [{"role": "user", "content": [{"type": "text", "text": "next"}]}]
    assert assemble(c, "s-half", body(msgs))["layer"] == 0
    c.request("lore/recordUsage", {"sessionId": "s-half", "error": {"message": "prompt is too long"}})
    r = assemble(c, "s-half", body(msgs))
    sent = strip_marks(r["body"]["messages"])
    assert r["layer"] == 1 and sent[0]["content"][0]["text"].startswith("<lore-context")  # the control
    raw = [m for m in sent[1:] if m in msgs]
    assert raw == msgs[len(msgs) - len(raw):]  # a suffix of the history, as it was
    assert size({"m": raw}) <= size({"m": msgs}) // 2 + size({"m": turn(0)}), (size({"m": raw}), size({"m": msgs}))


def test_prompt_too_long_halves_a_raw_window_smaller_than_twice_the_pinned_size(sidecar):
    """docs/context.md: "prompt is too long" "halves the raw window at once" — also when the
    window is already small. Trigger: a history between the pinned size (`minLayer0Tokens`,
    4000 by default) and twice it, which the provider found too long. Halving to the pinned
    size would send it nearly whole again (and be refused again); the window sent after the
    error is at most half of what was sent before (plus the turn it must start on).
    (rev9 round: `target = max(pinned, raw // 2)` survived the older test, whose history was
    over twice the pinned size, where both give about half.)"""
    from lore_sidecar.engine.context.requests import estimate

    c = sidecar()
    msgs: list[dict] = []
    k = 0
    while sum(estimate(m) + 1 for m in msgs) < 6_000:  # the assembler's own token estimate
        msgs += turn(k, lines=10)
        k += 1
    msgs.append({"role": "user", "content": [{"type": "text", "text": "next"}]})
    history = sum(estimate(m) + 1 for m in msgs)
    assert 4_000 < history < 8_000  # the case: over the pinned size, under twice it
    per_turn = max(sum(estimate(m) + 1 for m in turn(j, lines=10)) for j in range(k))

    def raw_sent(r: dict) -> int:
        sent = strip_marks(r["body"]["messages"])
        raw = [m for m in sent if m in msgs]
        assert raw == msgs[len(msgs) - len(raw):]  # a suffix of the history, as it was
        return sum(estimate(m) + 1 for m in raw)

    before = raw_sent(assemble(c, "s-half-small", body(msgs)))
    c.request("lore/recordUsage", {"sessionId": "s-half-small", "error": {"status": 400, "message": "prompt is too long"}})
    r = assemble(c, "s-half-small", body(msgs))
    after = raw_sent(r)
    assert r["layer"] >= 1 and r["body"]["messages"][0]["content"][0]["text"].startswith("<lore-context")  # control
    assert after <= before // 2 + per_turn, (before, after, per_turn)


def test_each_openai_dialect_reserves_the_answer_length_its_body_names(sidecar):
    """The answer's room comes out of the model's window in every dialect: Chat Completions
    names it `max_completion_tokens` (or the older `max_tokens`), the Responses API
    `max_output_tokens`. A ~90k-token history on gpt-4o (128k window) leaves the window only
    when the body asks for 64k of answer; the control, the same history asking for 8k, fits
    the window (and leaves L0 for the raw cap instead)."""
    c = sidecar()
    filler = "the build reads its settings before the cache warms; " * 60  # ~800 tokens a message
    history = []
    for k in range(55):
        history.append((f"step {k}: {filler}", f"done {k}: {filler}"))
    chat = [m for q, a in history for m in ({"role": "user", "content": q}, {"role": "assistant", "content": a})]
    chat.append({"role": "user", "content": "and now?"})
    resp = [{"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
            for q, a in history for role, kind, text in (("user", "input_text", q), ("assistant", "output_text", a))]
    resp.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "and now?"}]})
    cases = [("openai-chat", {"model": "gpt-4o", "messages": chat}, "max_completion_tokens"),
             ("openai-chat", {"model": "gpt-4o", "messages": chat}, "max_tokens"),
             ("openai-responses", {"model": "gpt-4o", "input": resp}, "max_output_tokens")]
    for n, (api, b, key) in enumerate(cases):
        big = c.request("lore/assembleContext", {"sessionId": f"big-{n}", "body": {**b, key: 64_000}, "api": api},
                        timeout=60)
        small = c.request("lore/assembleContext", {"sessionId": f"small-{n}", "body": {**b, key: 8_000}, "api": api},
                          timeout=60)
        assert big["reason"] == "over the window", (api, key, big["reason"])
        assert small["layer"] == 1 and small["reason"] != "over the window", (api, key, small["reason"])
