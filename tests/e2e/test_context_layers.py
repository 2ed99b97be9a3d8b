"""Context assembly over stdio, the promises of docs/context.md the first tests left open
(independent round 3, tools/rounds/2026-12-04-fresh3-context-gateway-ask.py): L4 sends only
the current model call; a prefix part's breakpoint lets the next move read the parts sent
before from the cache; busts stop compression only two in a row; calibration passes over an
outlier; a user message carrying tool results never opens a window; a prefix over its budget
keeps the newest facts; the Responses dialect's digest keeps commands, statuses and errors;
an appended part names what an earlier part named only inside a longer path or fact."""

from __future__ import annotations

import hashlib
import json

import pytest

from lore_sidecar.client import StdioClient
from lore_sidecar.engine.context.bodies import strip_marks
from lore_sidecar.engine.context.cache_sim import CacheSim
from tests.support.digest import listed_paths

SYSTEM = [{"type": "text", "text": "You are a coding agent. " * 200}]
TOO_LONG = {"status": 400, "message": "prompt is too long: 212000 tokens > 200000 maximum"}


def turn(k: int, lines: int = 40) -> list[dict]:
    output = "\n".join(f"src/mod_{k}.py:{i}: value_{k}_{i} = compute({i})" for i in range(lines))
    return [
        {"role": "user", "content": [{"type": "text", "text": f"step {k}: look at src/mod_{k}.py"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"tu{k}", "name": "Read",
                                           "input": {"path": f"src/mod_{k}.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{k}", "content": output}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Module {k} computes values."}]},
    ]


def body(messages: list[dict]) -> dict:
    return {"model": "claude-sonnet-4-5", "max_tokens": 8000, "system": SYSTEM, "messages": messages}


def assemble(c: StdioClient, session: str, b: dict, **extra) -> dict:
    return c.request("lore/assembleContext", {"sessionId": session, "body": b, **extra}, timeout=60)


def too_long(c: StdioClient, session: str, times: int = 1) -> None:
    for _ in range(times):
        c.request("lore/recordUsage", {"sessionId": session, "error": TOO_LONG})


def growing(c: StdioClient, session: str, turns: int, make=turn, after=None):
    """Each call of a growing session: (the history sent in, the answer)."""
    msgs: list[dict] = []
    for k in range(turns):
        msgs += make(k)
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"continue {k}"}]})
        r = assemble(c, session, body(msgs))
        if after is not None:
            after(r)
        yield list(msgs), r
        msgs.pop()


def paired(messages: list[dict]) -> bool:
    """Every tool result answers a tool call of the assistant message right before it."""
    for i, m in enumerate(messages):
        blocks = m["content"] if isinstance(m["content"], list) else []
        results = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
        if results:
            prev = messages[i - 1]["content"] if i and isinstance(messages[i - 1]["content"], list) else []
            if i == 0 or messages[i - 1]["role"] != "assistant" or not results <= {
                    b.get("id") for b in prev if isinstance(b, dict) and b.get("type") == "tool_use"}:
                return False
    return True


def prefix_text(sent: dict) -> str:
    first = sent["messages"][0]["content"]
    return "\n".join(b["text"] for b in first) if isinstance(first, list) else first


def test_l4_sends_only_the_current_model_call_after_a_shorter_prefix(sidecar):
    """docs/context.md, L4: "a short prefix and only the current model call, whole, with its
    in-flight tool results". The control: the same history at L3 still sends the turn's
    user message and older calls (stubbed)."""
    c = sidecar()
    live = [{"role": "user", "content": [{"type": "text", "text": "now fix the parser"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "live", "name": "Read", "input": {"path": "p"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "live", "content": "LIVE " * 400}]}]
    msgs = [m for k in range(60) for m in turn(k)] + live
    too_long(c, "s-l3", 3)
    too_long(c, "s-l4", 4)
    l3, l4 = assemble(c, "s-l3", body(msgs)), assemble(c, "s-l4", body(msgs))
    assert l3["layer"] == 3 and l4["layer"] == 4
    sent3, sent4 = strip_marks(l3["body"]["messages"]), strip_marks(l4["body"]["messages"])
    assert len(sent3) > 3 and live[0] in sent3  # the control: L3 keeps more than the call in flight
    assert sent4[1:] == live[1:]  # the prefix, then the current call and its result, nothing else
    assert len(prefix_text(l4["body"])) < len(prefix_text(l3["body"]))


def cache_blocks(b: dict) -> tuple[list[tuple[str, int]], list[int]]:
    """The body as a prompt cache sees it: (hash, tokens) per block, and the breakpoints."""
    out: list[tuple[str, int]] = []
    marks: list[int] = []
    listed = [*b.get("system", []), *([{"tools": b["tools"]}] if b.get("tools") else [])]
    for m in b["messages"]:
        listed += m["content"] if isinstance(m["content"], list) else [m]
    for block in listed:
        if "cache_control" in block:
            marks.append(len(out))
        text = json.dumps(strip_marks(block), sort_keys=True)
        out.append((hashlib.sha256(text.encode()).hexdigest(), len(text) // 4 + 1))
    return out, marks


def test_after_a_move_the_parts_sent_before_are_read_from_the_cache(sidecar):
    """docs/context.md: a move appends a part, "the parts sent before stay byte-identical and
    the prefix's breakpoint sits on its last part, so they are read from cache". Priced with
    the project's cache simulator: each call that appended a part reads at least the system
    prompt and every earlier part."""
    c = sidecar(maxLayer0Tokens=6000, minLayer0Tokens=2000)
    sim, previous, appended = CacheSim(), None, 0
    for n, (_, r) in enumerate(growing(c, "s-parts", 60)):
        blocks, marks = cache_blocks(r["body"])
        outcome = sim.request(blocks, marks, at=float(n))
        parts = r["body"]["messages"][0]["content"] if r["layer"] else []
        if previous and len(parts) > len(previous) and strip_marks(parts[: len(previous)]) == previous:
            appended += 1
            _, tokens = zip(*blocks, strict=True)
            old_parts_end = len(SYSTEM) + len(previous) - 1
            assert outcome.read >= sum(tokens[: old_parts_end + 1]), (n, outcome)
        previous = strip_marks(parts) if r["layer"] else None
    assert appended >= 2  # the control: moves did append parts


def feed(c: StdioClient, session: str, r: dict, bust: bool) -> None:
    est = r["estimate"]
    read = 0 if bust else est["cacheReadTokens"]
    c.request("lore/recordUsage", {"sessionId": session, "usage": {
        "inputTokens": 10, "cacheCreationInputTokens": max(0, est["inputTokens"] - read - 10),
        "cacheReadInputTokens": read}})


def voluntary_moves(c: StdioClient, session: str, busts) -> int:
    """Window moves after the first L1 calls, the provider reading (or not) as `busts` says."""
    moves, calls = 0, 0

    def after(r: dict) -> None:
        nonlocal moves, calls
        if r["layer"] >= 1:
            calls += 1
            moves += calls > 4 and r["reason"] == "window moved"
            feed(c, session, r, bust=busts(calls))

    for _ in growing(c, session, 70, after=after):
        pass
    return moves


def test_busts_far_apart_never_stop_compression_two_in_a_row_do(sidecar):
    """docs/context.md: "when the provider's usage shows that two calls in a row read less
    than half of what should have been cached, the session stops compacting voluntarily".
    A bust every other call is never two in a row: the window keeps moving. The control:
    busts on every call stop the voluntary moves."""
    c = sidecar(minLayer0Tokens=2000)
    assert voluntary_moves(c, "s-alternate", lambda n: n % 2 == 1) >= 1
    assert voluntary_moves(c, "s-storm", lambda n: True) == 0


def test_calibration_passes_over_an_outlier_and_takes_a_plausible_latest_ratio(sidecar):
    """docs/context.md: estimates are calibrated by "the latest plausible ratio (0.4-2.5), or
    the median of the last five when the latest is an outlier". After four calls measured at
    1.0, a fifth at 2.0 is an outlier (the next estimate stays at 1.0); the control, a fifth
    at 1.2, is taken as it is."""
    c = sidecar()
    b = body(turn(0) + [{"role": "user", "content": [{"type": "text", "text": "next"}]}])
    got = {}
    for session, last in (("s-outlier", 2.0), ("s-plausible", 1.2)):
        raw = assemble(c, session, b)["estimate"]["inputTokens"]
        for ratio in (1.0, 1.0, 1.0, 1.0, last):
            c.request("lore/recordUsage", {"sessionId": session, "usage": {
                "inputTokens": int(raw * ratio), "cacheCreationInputTokens": 0, "cacheReadInputTokens": 0}})
            got[session] = assemble(c, session, b)["estimate"]["inputTokens"] / raw
    assert got["s-outlier"] == pytest.approx(1.0, abs=0.01), got
    assert got["s-plausible"] == pytest.approx(1.2, abs=0.01), got  # the control


def wrote(k: int) -> list[dict]:
    """A turn as Claude Code sends it: a large Write call, and its result in a user message
    that also carries text of the harness's own (a reminder)."""
    content = "\n".join(f"line {i} of generated file {k}" for i in range(20 + (k * 37) % 160))
    return [
        {"role": "user", "content": [{"type": "text", "text": f"generate file {k}"}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Writing gen_{k}."},
                                          {"type": "tool_use", "id": f"w{k}", "name": "Write",
                                           "input": {"file_path": f"gen/gen_{k}.py", "content": content}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"w{k}", "content": "File written."},
                                     {"type": "text", "text": f"<system-reminder>gen_{k} saved</system-reminder>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"gen_{k} is written."}]},
    ]


def test_a_user_message_carrying_tool_results_beside_text_never_opens_a_window(sidecar):
    """docs/context.md: "a window starts where nothing is parted: at a user's own message or
    at the first output of a model call". A user message holding tool results and text is
    not the user's own: a window opening on it would send results whose call was evicted.
    Wherever the window's edge falls (history lengths and sizes vary), every result follows
    its call; the control: the windows did evict something."""
    c = sidecar()
    for turns in range(20, 60, 3):
        session = f"s-mixed-{turns}"
        msgs = [m for k in range(turns) for m in wrote(k)]
        too_long(c, session)
        r = assemble(c, session, body(msgs))
        sent = strip_marks(r["body"]["messages"])
        assert r["layer"] == 1 and len(sent) < len(msgs), turns
        assert paired(sent), turns


def asking(k: int) -> list[dict]:
    """A turn whose facts are long: the user's request and the command both near their caps."""
    return [
        {"role": "user", "content": [{"type": "text", "text": f"case {k}: " + "please make the flaky check pass " * 9}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"b{k}", "name": "Bash", "input": {
            "command": f"pytest tests/test_case_{k}.py " + "--deselect tests/other.py::slow " * 5}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"b{k}",
                                      "content": f"E   AssertionError: case {k} differs\nExit code 1"}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Case {k} still fails."}]},
    ]


def test_a_prefix_over_its_budget_keeps_the_newest_facts_and_says_how_many_were_left_out(sidecar):
    """docs/context.md: when the parts would pass the prefix budget the prefix is compacted
    "the newest facts kept first; a line says how many were left out". The facts of the last
    evicted turn are there; the control: facts were left out (the budget was passed)."""
    c = sidecar()
    msgs = [m for k in range(80) for m in asking(k)] + [{"role": "user", "content": [{"type": "text", "text": "go on"}]}]
    too_long(c, "s-budget")
    r = assemble(c, "s-budget", body(msgs))
    prefix, raw = prefix_text(r["body"]), json.dumps(strip_marks(r["body"]["messages"][1:]))
    assert r["layer"] == 1 and "more facts of these messages are in memory" in prefix  # the control
    evicted = [k for k in range(80) if f"tests/test_case_{k}.py" not in raw]
    assert len(evicted) > 20
    newest = evicted[-1]
    assert f"$ pytest tests/test_case_{newest}.py" in prefix and f"case {newest} differs" in prefix, newest
    # Within a kind the newest first: the newest evicted request is kept, the oldest left out.
    assert f"user asked: case {newest}:" in prefix and f"user asked: case {evicted[0]}:" not in prefix, newest


def codex_turn(k: int) -> list[dict]:
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"fix case {k} " + "now " * 60}]},
        {"type": "function_call", "call_id": f"c{k}", "name": "exec_command",
         "arguments": json.dumps({"cmd": f"pytest -q tests/t_{k}.py"})},
        {"type": "function_call_output", "call_id": f"c{k}",
         "output": f"Exit code: 1\nWall time: 0.4 seconds\nOutput:\nE   AssertionError: case {k} mismatch\n"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"case {k} needs work"}]},
    ]


def test_the_responses_digest_keeps_each_command_its_exit_status_and_its_errors(sidecar):
    """docs/context.md: the digest keeps "every ... command with its exit status, error line"
    of the evicted messages, in all three dialects. A Codex (Responses) session's outputs are
    `function_call_output.output`. The control: the requests and the evicted turns are there."""
    c = sidecar()
    items = [i for k in range(40) for i in codex_turn(k)]
    too_long(c, "s-codex")
    r = c.request("lore/assembleContext", {"sessionId": "s-codex", "api": "openai-responses",
                                           "body": {"model": "gpt-5", "input": items}}, timeout=60)
    sent = r["body"]["input"]
    prefix = "\n".join(b["text"] for b in sent[0]["content"])
    raw = json.dumps(sent[1:])
    evicted = [k for k in range(40) if f"tests/t_{k}.py" not in raw]
    assert r["layer"] == 1 and len(evicted) > 5
    for k in evicted:
        assert f"user asked: fix case {k} now" in prefix, k  # the control: the digest covers them
        assert f"$ pytest -q tests/t_{k}.py (exit 1)" in prefix, k
        assert f"error: E   AssertionError: case {k} mismatch" in prefix, k


def naming(k: int) -> list[dict]:
    """Turns 0-19 name `legacy/src/mod_j.py` and ask "check mod_j twice"; turns 20-39 name
    `src/mod_j.py` and ask "check mod_j": each later fact is a piece of an earlier one."""
    j = k % 20
    path, ask = (f"legacy/src/mod_{j}.py", f"check mod_{j} twice") if k < 20 else (f"src/mod_{j}.py", f"check mod_{j}")
    output = "\n".join(f"value_{k}_{i} = compute({i})" for i in range(40))
    return [
        {"role": "user", "content": [{"type": "text", "text": ask}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"r{k}", "name": "Read", "input": {"path": path}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"r{k}", "content": output}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Read turn {k}."}]},
    ]


def test_an_appended_part_names_what_earlier_parts_held_only_inside_a_longer_path_or_fact(sidecar):
    """docs/context.md: a move appends a part "naming only paths not named before", and the
    digest keeps every file path and user request of the evicted messages. `src/mod_3.py` is
    not named by an earlier `legacy/src/mod_3.py`, nor "check mod_3" by "check mod_3 twice":
    each evicted one is in the prefix as an entry of its own. The control: the earlier,
    longer ones are there too, and the prefix did grow by appended parts."""
    c = sidecar(maxLayer0Tokens=6000, minLayer0Tokens=2000)
    parts = 0
    for _, r in growing(c, "s-pieces", 46, make=naming):
        parts = max(parts, len(r["body"]["messages"][0]["content"]) if r["layer"] else 0)
    lines = prefix_text(r["body"]).splitlines()
    named = set(listed_paths(lines))
    raw = json.dumps(strip_marks(r["body"]["messages"][1:]))
    evicted = [k for k in range(46) if f'"r{k}"' not in raw]
    assert parts >= 2 and len([k for k in evicted if k >= 20]) >= 5, (parts, evicted)
    for k in evicted:
        path, ask = (f"legacy/src/mod_{k}.py", f"check mod_{k} twice") if k < 20 else \
            (f"src/mod_{k - 20}.py", f"check mod_{k - 20}")
        assert path in named, k
        assert f"user asked: {ask}" in lines, k


# -- independent review, fresh round 5 (tools/rounds/2026-12-07-fresh5.py) --------------------------

def test_a_stubbed_tool_output_says_its_whole_text_is_kept_and_how_to_recall_it(sidecar):
    """docs/context.md, L2: older tool outputs become stubs ("full output kept in memory"):
    each shortened output names lore_recall and the session it can be found in. The control:
    the in-flight call's output goes whole."""
    c = sidecar()
    live = [{"role": "user", "content": [{"type": "text", "text": "now fix the parser"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "live", "name": "Read", "input": {"path": "p"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "live", "content": "LIVE " * 400}]}]
    msgs = [m for k in range(40) for m in turn(k)] + live
    too_long(c, "s-stubs", 2)
    r = assemble(c, "s-stubs", body(msgs))
    assert r["layer"] == 2
    originals = {b["tool_use_id"]: b["content"] for m in msgs if isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result"}
    sent = {b["tool_use_id"]: b["content"] for m in strip_marks(r["body"]["messages"]) if isinstance(m["content"], list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}
    stubbed = [k for k, v in sent.items() if v != originals[k]]
    whole = [k for k, v in sent.items() if v == originals[k]]
    assert stubbed and "live" in whole  # the control: the in-flight output went whole
    for k in stubbed:
        text = sent[k] if isinstance(sent[k], str) else json.dumps(sent[k])
        assert "full output kept in memory" in text and "lore_recall in session s-stubs" in text, text[-300:]


def test_a_warm_cache_calibrates_the_estimate_like_a_cold_one(sidecar):
    """docs/context.md: estimates are calibrated from the provider's usage. The real input
    is every input token, cached or not: a call measured at 1.2x whose tokens were 90% read
    from the cache calibrates to 1.2 exactly as the control, the same 1.2x all uncached."""
    c = sidecar()
    b = body(turn(0) + [{"role": "user", "content": [{"type": "text", "text": "next"}]}])
    got = {}
    for session, read_share in (("s-warm", 0.9), ("s-cold", 0.0)):
        raw = assemble(c, session, b)["estimate"]["inputTokens"]
        real = int(raw * 1.2)
        read = int(real * read_share)
        r = c.request("lore/recordUsage", {"sessionId": session, "usage": {
            "inputTokens": real - read, "cacheCreationInputTokens": 0, "cacheReadInputTokens": read}})
        assert r["calibrated"] is True, (session, r)
        got[session] = assemble(c, session, b)["estimate"]["inputTokens"] / raw
    assert got["s-warm"] == pytest.approx(1.2, abs=0.01), got
    assert got["s-cold"] == pytest.approx(1.2, abs=0.01), got  # the control


# -- independent review, hunt round 6 (tools/rounds/2026-12-07-hunt6.py) ----------------------------

def failing(k: int) -> list[dict]:
    """A turn whose evicted facts are long: a request, a command, a ~150-character error line."""
    errors = "\n".join(f"E   AssertionError: turn {k} check {i} expected {'x' * 90} got {i}" for i in range(1))
    return [
        {"role": "user", "content": [{"type": "text", "text": f"run check {k}"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"f{k}", "name": "Bash",
                                           "input": {"command": f"pytest tests/test_f{k}.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"f{k}", "content": errors}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Check {k} fails."}]},
    ]


def test_appended_parts_together_stay_within_the_prefix_budget(sidecar):
    """docs/context.md: "When the parts would pass the prefix budget (6k tokens at L1)" the
    prefix is compacted into one part: the parts sent together never pass it, however many
    moves appended one. Measured as the assembler measures (4 characters a token). The
    control: moves appended parts (three or more) before the budget made one of them."""
    c = sidecar(maxLayer0Tokens=6000, minLayer0Tokens=2000)
    parts, most, compacted = 0, 0, False
    for msgs, r in growing(c, "s-prefix-budget", 130, make=failing):
        if not r["layer"]:
            continue
        assert r["layer"] == 1
        sent = r["body"]["messages"][0]["content"]
        assert len(prefix_text(r["body"])) <= 6000 * 4, (len(msgs), len(sent), len(prefix_text(r["body"])))
        compacted = compacted or (parts >= 2 and len(sent) < parts)
        parts = len(sent)
        most = max(most, parts)
    assert most >= 3 and compacted, (most, parts)


def refused(k: int) -> list[dict]:
    """A turn whose command failed without an exit code in its output: the harness flags it."""
    return [
        {"role": "user", "content": [{"type": "text", "text": f"deploy stage {k}"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"d{k}", "name": "Bash",
                                           "input": {"command": f"make deploy-{k}"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"d{k}", "is_error": True,
                                      "content": f"the sandbox refused stage {k}"}]},
        {"role": "user", "content": [{"type": "text", "text": f"that is fine, skip stage {k}"}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Skipped stage {k}."}]},
    ]


def test_a_command_the_harness_flagged_as_failed_is_digested_as_an_error(sidecar):
    """docs/context.md: the digest keeps "every ... command with its exit status"; a tool
    result the harness marks `is_error` with no exit code in its text is a failed command,
    not an "ok" one. The control: the evicted commands are in the digest."""
    c = sidecar()
    msgs = [m for k in range(40) for m in refused(k)] + [{"role": "user", "content": [{"type": "text", "text": "go on"}]}]
    too_long(c, "s-flagged")
    r = assemble(c, "s-flagged", body(msgs))
    prefix, raw = prefix_text(r["body"]), json.dumps(strip_marks(r["body"]["messages"][1:]))
    evicted = [k for k in range(40) if f'"d{k}"' not in raw]
    assert r["layer"] == 1 and len(evicted) > 5, evicted
    for k in evicted:
        assert f"$ make deploy-{k} (error)" in prefix, k


def chat_turn(k: int) -> list[dict]:
    return [
        {"role": "user", "content": f"build target {k} " + "please " * 30},
        {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{k}", "type": "function", "function": {
            "name": "shell", "arguments": json.dumps({"command": f"make target-{k}"})}}]},
        {"role": "tool", "tool_call_id": f"call_{k}", "content": f"make: *** [target-{k}] Error 2\nexit code 2"},
        {"role": "assistant", "content": f"target {k} does not build"},
    ]


def test_the_chat_digest_keeps_each_command_with_its_exit_status(sidecar):
    """docs/context.md: the digest keeps "every ... command with its exit status" in all three
    dialects. A Chat Completions tool call is named by its `id`, which the tool message's
    `tool_call_id` answers. The control: the evicted turns' requests are in the digest."""
    c = sidecar()
    msgs = [{"role": "system", "content": "You are a coding agent."}, *[m for k in range(40) for m in chat_turn(k)]]
    too_long(c, "s-chat-exit")
    r = c.request("lore/assembleContext", {"sessionId": "s-chat-exit", "api": "openai-chat",
                                           "body": {"model": "gpt-4.1", "messages": msgs}}, timeout=60)
    sent = r["body"]["messages"]
    prefix = next(m["content"] for m in sent if m["role"] == "user")
    raw = json.dumps(sent[2:])
    evicted = [k for k in range(40) if f'"call_{k}"' not in raw]
    assert r["layer"] == 1 and len(evicted) > 5, evicted
    for k in evicted:
        assert f"user asked: build target {k} please" in prefix, k  # the control
        assert f"$ make target-{k} (exit 2)" in prefix, k
