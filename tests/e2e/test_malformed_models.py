"""Models that misbehave, through `lore/ask` over stdio (one sidecar for the module; the real
SDK talks to the fake Anthropic server on 127.0.0.1, scripted per case as real models err):
wrong, missing, extra or mistyped arguments, unknown tools, arguments that are not JSON, a
`max_tokens` stop inside a call, refusals, empty or huge answers, odd unicode, bodies that are
not a message, 5xx and overload errors, a model that hangs past the deadline, a tool loop that
never ends. For every case: no internal error (-32603), the reply within `deadlineMs`, the
store unchanged, and the documented outcome (a tool error the model reads, or the question's
own failure answered from retrieval, saying why)."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.e2e.test_ask import make_workspace, spawn
from tests.support.fake_anthropic import FakeAnthropic

DEADLINE_MS = 8000
TAG = re.compile(r"\[case ([\w-]+)\]")


def use(name, args, cid=None):
    block = {"type": "tool_use", "name": name, "input": args, "id": cid}
    return {k: v for k, v in block.items() if v is not None or k == "input"}


def calls(*blocks, stop="tool_use"):
    return {"message": {"content": [dict(b, id=b.get("id", f"toolu_c{i}")) if "id" not in b and b.get("_keep") is None
                                    else b for i, b in enumerate(blocks)], "stop_reason": stop}}


def text(t, stop="end_turn"):
    return {"message": {"content": [{"type": "text", "text": t}], "stop_reason": stop}}


# Tool calls that are wrong in one way: (case, name, input, "ok" | "error", what the result says)
TOOL_CASES = [
    ("read-file_path", "Read", {"file_path": "src/mod3.py"}, "ok", "def func_3"),
    ("read-filePath", "Read", {"filePath": "src/mod3.py"}, "ok", "def func_3"),
    ("read-path-and-alias", "Read", {"path": "src/mod3.py", "file_path": "src/mod4.py"}, "error", "given twice"),
    ("read-missing-path", "Read", {}, "error", "'path' is required"),
    ("read-extra-arg", "Read", {"path": "README.md", "encoding": "utf-8"}, "error", "no argument 'encoding'"),
    ("read-offset-digits", "Read", {"path": "src/mod3.py", "offset": "3"}, "ok", "src/mod3.py (sha256"),
    ("read-offset-word", "Read", {"path": "src/mod3.py", "offset": "ten"}, "error", "'offset' must be an integer"),
    ("read-path-list", "Read", {"path": ["src/mod3.py"]}, "error", "'path' must be a string"),
    ("read-limit-float", "Read", {"path": "src/mod3.py", "limit": 5.5}, "error", "'limit' must be an integer"),
    ("read-limit-bool", "Read", {"path": "src/mod3.py", "limit": True}, "error", "'limit' must be an integer"),
    ("read-path-null", "Read", {"path": None}, "error", "'path' is required"),
    ("read-outside", "Read", {"path": "../../../../etc/passwd"}, "error", "refused"),
    ("read-nul-byte", "Read", {"path": "src/mod3.py\x00.txt"}, "error", "refused"),
    ("read-huge-path", "Read", {"path": "a/" * 5000}, "error", "refused"),
    ("grep-missing-pattern", "Grep", {"glob": "*.py"}, "error", "'pattern' is required"),
    ("grep-pattern-int", "Grep", {"pattern": 42}, "error", "'pattern' must be a string"),
    ("grep-context-list", "Grep", {"pattern": "func_3", "context": [1]}, "error", "'context' must be an integer"),
    ("grep-claude-path", "Grep", {"pattern": "func_3", "path": "src"}, "error", "no argument 'path'"),
    ("glob-extra-path", "Glob", {"pattern": "*.py", "path": "src"}, "error", "Glob takes: pattern"),
    ("unknown-bash", "Bash", {"command": "ls"}, "error", "no tool named 'Bash'"),
    ("unknown-lowercase", "read", {"path": "README.md"}, "error", "the tools are"),
    ("unknown-zero-width", "Rea\u200bd", {"path": "README.md"}, "error", "no tool named"),
    ("input-json-text", "Read", '{"path": "src/mod3.py"}', "ok", "def func_3"),
    ("input-truncated-json", "Read", '{"path": "src/mo', "error", "not valid JSON"),
    ("input-list", "Read", ["src/mod3.py"], "error", "must be a JSON object"),
    ("input-null", "Read", None, "error", "'path' is required"),
    ("input-number", "Read", 7, "error", "must be a JSON object"),
    ("remember-paths-string", "remember", {"fact": "func_3 is in mod3", "paths": "src/mod3.py"}, "error",
     "'paths' must be a list of strings"),
    ("remember-missing-fact", "remember", {"paths": ["src/mod3.py"]}, "error", "'fact' is required"),
    ("remember-paths-ints", "remember", {"fact": "f", "paths": [1, 2]}, "error", "'paths' must be a list"),
    ("git-limit-word", "git_search", {"query": "walrus", "limit": "many"}, "error", "'limit' must be an integer"),
    ("changed-files-extra", "get_changed_files", {"verbose": True}, "error", "no arguments"),
    ("find-paths-depth-digits", "find_paths", {"depth": "2"}, "ok", "src"),
]

# Whole turns that are wrong: (case, the model's first reply, expected `finished`, a check)
RETRIEVAL = "The model did not answer"
TURN_CASES = [
    ("empty-text", text(""), "error", RETRIEVAL),
    ("whitespace-text", text("  \n\t "), "error", RETRIEVAL),
    ("no-content", {"message": {"content": []}}, "error", RETRIEVAL),
    ("refusal-with-text", text("I can't help with that.", stop="refusal"), "refused", RETRIEVAL),
    ("refusal-empty", {"message": {"content": [], "stop_reason": "refusal"}}, "refused", RETRIEVAL),
    ("huge-answer", text("x" * 2_000_000), "answered", "[the answer was cut at 100000 characters]"),
    ("odd-unicode", {"raw": b'{"type":"message","role":"assistant","id":"m","model":"fake","stop_reason":"end_turn",'
                            b'"content":[{"type":"text","text":"caf\\u00e9 \\ud83d\\ude00 \\u202etxt.exe \\u200b '
                            b'\\ud800 lone \\u0000 nul"}],"usage":{"input_tokens":1,"output_tokens":1}}'},
     "answered", "caf\u00e9"),
    ("non-utf8-body", {"raw": b'\xff\xfe{"type": "message", "content": [\xc3\x28]}'}, "error", "llmBadResponse"),
    ("html-body", {"raw": b"<html><body>502 Bad Gateway</body></html>"}, "error", "llmBadResponse"),
    ("json-not-a-message", {"raw": b'{"hello": "world"}'}, "error", RETRIEVAL),
    ("text-not-a-string", {"message": {"content": [{"type": "text", "text": 5}]}}, "error", RETRIEVAL),
    ("status-500", {"status": 500}, "error", "llmError"),
    ("status-529-overloaded", {"status": 529, "error_type": "overloaded_error"}, "error", "llmError"),
    ("status-429", {"status": 429, "error_type": "rate_limit_error"}, "error", "llmError"),
    ("status-400", {"status": 400, "error_type": "invalid_request_error"}, "error", "llmError"),
    ("unknown-block-type", {"message": {"content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                                    {"type": "mystery", "data": 1},
                                                    {"type": "text", "text": "ANSWER-OK plain"}]}},
     "answered", "ANSWER-OK plain"),
    ("usage-missing", {"message": {"content": [{"type": "text", "text": "ANSWER-OK no usage"}], "usage": None}},
     "answered", "ANSWER-OK no usage"),
]


class Script:
    """The fake model: the question's `[case …]` tag picks the script; turn 0 is the case's
    reply, later turns answer with what the tool results said (so the test sees what the
    model read)."""

    def __init__(self):
        self.bodies: dict[str, list[dict]] = {}

    def __call__(self, body: dict):
        q, turn, results = self.state(body.get("messages") or [])
        m = TAG.search(q)
        if not m:
            return "warm-up: ANSWER-OK"
        case = m.group(1)
        self.bodies.setdefault(case, []).append(body)
        return self.reply(case, turn, results)

    @staticmethod
    def state(messages: list[dict]) -> tuple[str, int, list[dict]]:
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            q = next((b["text"] for b in blocks if b.get("type") == "text" and "Question:" in b.get("text", "")), None)
            if m["role"] == "user" and q:
                later = messages[i + 1:]
                results = [b for x in later if x["role"] == "user" and isinstance(x["content"], list)
                           for b in x["content"] if b.get("type") == "tool_result"]
                return q, sum(x["role"] == "assistant" for x in later), results
        return "", 0, []

    def reply(self, case: str, turn: int, results: list[dict]):
        tool = {c[0]: c for c in TOOL_CASES}
        whole = {c[0]: c for c in TURN_CASES}
        if case == "endless-loop":
            return calls(use("Glob", {"pattern": "*.md"}, f"toolu_loop_{turn}"))
        if case == "endless-drafts":  # a draft answer beside each call, a better one each turn
            return {"message": {"content": [{"type": "text", "text": f"DRAFT-{turn} func_3 is in src/mod3.py"},
                                            use("Glob", {"pattern": "*.md"}, f"toolu_draft_{turn}")],
                                "stop_reason": "tool_use"}}
        if turn > 0:
            return text("ANSWER-OK " + json.dumps(results)[:3000])
        if case in tool:
            _, name, args, _, _ = tool[case]
            return calls(use(name, args, "toolu_1"))
        if case in whole:
            return whole[case][1]
        if case == "twenty-calls":
            return calls(*[use("Read", {"path": f"src/mod{i % 8}.py"}, f"toolu_{i}") for i in range(20)])
        if case == "duplicate-ids":
            return calls(use("Read", {"path": "src/mod1.py"}, "toolu_same"), use("Read", {"path": "src/mod2.py"}, "toolu_same"))
        if case == "missing-id":
            return {"message": {"content": [{"type": "tool_use", "name": "Read", "input": {"path": "src/mod5.py"}}],
                                "stop_reason": "tool_use"}}
        if case == "missing-name":
            return calls(use(None, {"path": "src/mod5.py"}, "toolu_1") | {"name": None})
        if case == "max-tokens-mid-call":
            return calls(use("Read", {"path": "src/mo"}, "toolu_1"), stop="max_tokens")
        if case == "max-tokens-json-text":
            return calls(use("Grep", {"pattern": "func_3"}, "toolu_0"), use("Read", '{"path": "sr', "toolu_1"),
                         stop="max_tokens")
        if case == "hang":
            return {"delay": 30, "text": "too late"}
        raise AssertionError(case)


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("malformed")
    ws = make_workspace(tmp / "shop", modules=8)
    script = Script()
    with FakeAnthropic(script) as fake:
        c = spawn(tmp, ws, fake.url, askMaxIterations=5, askKeepWarmMs=0)
        try:
            c.request("lore/ask", {"question": "warm up: where is func_1?"}, timeout=60)  # not cold any more
            yield c, script
        finally:
            c.close()


def counts(c) -> dict:
    st = c.request("lore/status")
    return {**{k: st["counts"][k] for k in ("messages", "distillations", "knowledge", "facts")},
            "ledger": c.request("lore/askStats", {})["ledgerFacts"]}


def asked(c, case: str, deadline_ms: int = DEADLINE_MS) -> tuple[dict, float, dict, dict]:
    before = counts(c)
    t0 = time.monotonic()
    reply = c.request_full("lore/ask", {"question": f"[case {case}] where is func_3 defined?", "deadlineMs": deadline_ms},
                           timeout=deadline_ms / 1000 + 30)
    took = (time.monotonic() - t0) * 1000
    assert "error" not in reply or reply["error"]["code"] == -32803, reply.get("error")  # never -32603
    return reply, took, before, counts(c)


def last_results(script: Script, case: str) -> list[dict]:
    """The tool results the model was handed for its first turn's calls."""
    second = script.bodies[case][1]["messages"]
    return next(m["content"] for m in reversed(second) if m["role"] == "user" and isinstance(m["content"], list)
                and any(b.get("type") == "tool_result" for b in m["content"]))


def test_the_corpus_has_at_least_forty_cases():
    assert len(TOOL_CASES) + len(TURN_CASES) + 8 >= 40


@pytest.mark.parametrize("case, name, args, outcome, says", TOOL_CASES, ids=[c[0] for c in TOOL_CASES])
def test_a_bad_tool_call_is_a_tool_error_the_model_recovers_from(sidecar, case, name, args, outcome, says):
    c, script = sidecar
    reply, took, before, after = asked(c, case)
    r = reply["result"]
    assert took <= DEADLINE_MS and after == before
    assert r["finished"] == "answered" and r["answer"].startswith("ANSWER-OK"), r  # the model went on
    (result,) = last_results(script, case)
    assert result["tool_use_id"] == "toolu_1" and says in result["content"], result
    assert bool(result.get("is_error")) is (outcome == "error"), result  # the aliases' control: no error


@pytest.mark.parametrize("case, first, finished, says", TURN_CASES, ids=[c[0] for c in TURN_CASES])
def test_a_bad_model_turn_fails_only_its_question_and_says_why(sidecar, case, first, finished, says):
    c, _ = sidecar
    reply, took, before, after = asked(c, case)
    r = reply["result"]
    assert took <= DEADLINE_MS and after == before
    assert r["finished"] == finished and says in r["answer"], (r["finished"], r["answer"][:300])
    assert len(r["answer"]) <= 101_000


def test_an_answer_with_a_lone_surrogate_does_not_break_the_questions_after_it(sidecar):
    """The answer joins the workspace's window: a code unit that cannot be encoded would fail
    every later request that carries it back."""
    c, _ = sidecar
    first = asked(c, "odd-unicode")[0]["result"]
    assert first["finished"] == "answered" and "\ufffd" in first["answer"] and "\ud800" not in first["answer"]
    reply, took, before, after = asked(c, "unknown-block-type")
    assert reply["result"]["finished"] == "answered" and reply["result"]["answer"] == "ANSWER-OK plain"


def test_twenty_calls_in_one_turn_each_get_one_result_and_the_rest_past_ten_are_skipped(sidecar):
    c, script = sidecar
    reply, took, before, after = asked(c, "twenty-calls")
    assert took <= DEADLINE_MS and after == before and reply["result"]["finished"] == "answered"
    results = last_results(script, "twenty-calls")
    assert [b["tool_use_id"] for b in results] == [f"toolu_{i}" for i in range(20)]
    assert all(not b.get("is_error") for b in results[:10]) and all(b["content"].startswith("skipped") for b in results[10:])


def test_a_repeated_or_missing_tool_use_id_is_made_unique(sidecar):
    c, script = sidecar
    for case, n in (("duplicate-ids", 2), ("missing-id", 1)):
        reply, took, before, after = asked(c, case)
        assert took <= DEADLINE_MS and after == before and reply["result"]["finished"] == "answered"
        body = script.bodies[case][1]["messages"]
        uses = [b["id"] for m in body if m["role"] == "assistant" and isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_use"][-n:]
        results = [b["tool_use_id"] for b in last_results(script, case)]
        assert uses == results and len(set(results)) == n and all(results), (uses, results)
    # a call with no tool name is an unknown tool, answered as one
    reply, took, before, after = asked(c, "missing-name")
    assert reply["result"]["finished"] == "answered" and "no tool named" in last_results(script, "missing-name")[0]["content"]


def test_a_call_cut_by_max_tokens_is_answered_cut_off_not_run_with_half_its_arguments(sidecar):
    c, script = sidecar
    reply, took, before, after = asked(c, "max-tokens-mid-call")
    assert after == before and reply["result"]["finished"] == "answered"
    (cut,) = last_results(script, "max-tokens-mid-call")
    assert cut["is_error"] and cut["content"].startswith("cut off")
    reply, took, before, after = asked(c, "max-tokens-json-text")
    whole, cut = last_results(script, "max-tokens-json-text")
    assert not whole.get("is_error") and "func_3" in whole["content"]  # the control: the complete call ran
    assert cut["is_error"] and cut["content"].startswith("cut off")


def test_a_model_that_hangs_is_answered_before_the_deadline(sidecar):
    c, _ = sidecar
    reply, took, before, after = asked(c, "hang", deadline_ms=3000)
    assert took <= 3000 and after == before
    assert reply["result"]["finished"] == "deadline", reply["result"]


def test_a_tool_loop_that_never_ends_stops_at_the_turn_cap(sidecar):
    c, script = sidecar
    reply, took, before, after = asked(c, "endless-loop")
    assert took <= DEADLINE_MS and after == before
    assert reply["result"]["finished"] == "iterations" and len(script.bodies["endless-loop"]) == 5
    assert "the step limit was reached" in reply["result"]["answer"]


def test_a_question_stopped_at_the_turn_cap_answers_with_the_models_latest_draft(sidecar):
    """The loop's documented best effort: the LAST text the model wrote (hunt7a). Control: the
    model did write a first draft, which the answer must not be."""
    c, script = sidecar
    reply, took, before, after = asked(c, "endless-drafts")
    r = reply["result"]
    assert after == before and r["finished"] == "iterations" and len(script.bodies["endless-drafts"]) == 5
    assert r["answer"].startswith("DRAFT-4 func_3 is in src/mod3.py"), r["answer"][:200]
    assert "DRAFT-0" not in r["answer"] and "the step limit was reached" in r["answer"]


# --- the distiller, the curator and dream's judge, on the same misbehaviour -----------------
GOOD = "- the order checkout retries the payment call twice\nENTITIES:\nsrc/pay.py | file | payments"
SURROGATE = (b'{"type":"message","role":"assistant","id":"m","model":"fake","stop_reason":"end_turn",'
             b'"content":[{"type":"text","text":"- caf\\u00e9 \\ud800 lone \\u0000 nul \\ud83d\\ude00"}],'
             b'"usage":{"input_tokens":1,"output_tokens":1}}')
# (case, the model's reply to every prompt, what becomes of the segment: distilled by the
# model, "deferred" (nothing written, tried again on the next pass), or "extractive" at once)
MEMORY_CASES = [
    ("good", text(GOOD), "llm"),
    ("max-tokens-partial", text("- the order checkout retries\nENTITIES:\nsrc/pay.py | fi", stop="max_tokens"), "llm"),
    ("odd-unicode", {"raw": SURROGATE}, "llm"),
    ("garbage-entities", text("- observed a thing\nENTITIES:\n|||\n" + "x" * 300 + " | file\n | \n- a | b | " + "," * 50),
     "llm"),
    ("curator-garbage-json", text('{"nodes": "all of them", "op": 5}\n{"uri": ["x"], "decision": "apply", '
                                  '"content": ["not", "text"], "reason": 7}'), "llm"),
    ("empty-text", text(""), "deferred"),
    ("whitespace-text", text(" \n\t "), "deferred"),
    ("no-content", {"message": {"content": []}}, "deferred"),
    ("tool-use-instead", calls(use("Read", {"path": "src/pay.py"}, "toolu_1")), "deferred"),
    ("status-500", {"status": 500}, "deferred"),
    ("status-529-overloaded", {"status": 529, "error_type": "overloaded_error"}, "deferred"),
    ("status-429", {"status": 429, "error_type": "rate_limit_error"}, "deferred"),
    ("html-body", {"raw": b"<html>502 Bad Gateway</html>"}, "deferred"),
    ("non-utf8-body", {"raw": b'\xff\xfe{"content": [\xc3\x28]}'}, "deferred"),
    ("json-not-a-message", {"raw": b'{"hello": "world"}'}, "deferred"),
    ("hang", {"delay": 3, "text": GOOD}, "deferred"),
    ("refusal", text("I will not summarise this.", stop="refusal"), "extractive"),
    ("status-401", {"status": 401, "error_type": "authentication_error"}, "extractive"),
]
MEMORY_S = 15.0  # a lore/distill answer with llmTimeoutMs 1500 and no retries, on a loaded machine


class Memory:
    def __init__(self):
        self.case = "good"
        self.extra = None  # a reply of the test's own, over the case table's

    def __call__(self, body: dict):
        return self.extra or {c[0]: c[1] for c in MEMORY_CASES}.get(self.case, text(GOOD))


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("malformed-memory")
    ws = tmp / "shop"
    (ws / ".git").mkdir(parents=True)
    script = Memory()
    with FakeAnthropic(script) as fake:
        env = {**{k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"},
               "ANTHROPIC_API_KEY": "sk-test-not-a-real-key", "ANTHROPIC_BASE_URL": fake.url}
        c = StdioClient(sidecar_command(), env=env)
        c.initialize(ws, options={"storeDir": str(tmp / "store"), "watch": False, "indexWorkspace": False,
                                  "distiller": "llm", "distillIdleMs": 3_600_000, "curateEvery": 1,
                                  "llmTimeoutMs": 1500, "llmRetries": 0})
        for uri in ("project://shop/pattern/retry-a", "project://shop/pattern/retry-b"):  # a merge for dream to judge
            c.request("lore/createNode", {"uri": uri, "category": "pattern", "priority": 3,
                                          "content": "Every call to the payment gateway retries three times with backoff"})
        # warm up (the SDK's import and first connection) outside any case's time bound
        c.request("lore/recordMessages", {"sessionId": "warm-up", "messages": [
            {"role": "user", "content": "warm up the checkout memory please"}]})
        c.request("lore/distill", {"sessionId": "warm-up"}, timeout=120)
        try:
            yield c, script
        finally:
            c.close()


def store_counts(c) -> dict:
    return {k: v for k, v in c.request("lore/status")["counts"].items() if k in ("messages", "distillations", "knowledge", "facts")}


def record(c, session: str) -> None:
    c.request("lore/recordMessages", {"sessionId": session, "messages": [
        {"role": "user", "content": f"the checkout for {session} fails when the payment call times out"},
        {"role": "assistant", "content": "I made src/pay.py retry the payment call twice with backoff."},
        {"role": "user", "content": "good, and log each retry"},
        {"role": "assistant", "content": "Done: each retry is logged at WARNING in src/pay.py."}]})


def distilled(c, session: str) -> tuple[dict, float]:
    t0 = time.monotonic()
    reply = c.request_full("lore/distill", {"sessionId": session}, timeout=60)
    assert "error" not in reply, reply["error"]  # never -32603, and no failure: the segment waits or falls back
    return reply["result"], time.monotonic() - t0


@pytest.mark.parametrize("case, reply, mode", MEMORY_CASES, ids=[c[0] for c in MEMORY_CASES])
def test_the_distiller_and_curator_never_lose_a_segment_whatever_the_model_answers(memory, case, reply, mode):
    """A failed call that may pass (an outage, a reply with nothing in it) writes nothing and
    leaves the segment for the next try — which the model, answering again, then distils; one
    that will not pass (a refusal, the key refused) falls back to the extractive observation
    at once. Never "distilled into nothing" (the segment lost), never an internal error; the
    curator writes nothing from any of these replies."""
    c, script = memory
    script.case = case
    session = f"sess-{case}"
    record(c, session)
    before = store_counts(c)
    result, took = distilled(c, session)
    after = store_counts(c)
    assert took <= MEMORY_S and after["knowledge"] == before["knowledge"]
    st = c.request("lore/status")["distiller"]
    assert (st["lastError"] is None) is (mode == "llm"), st["lastError"]
    if mode == "deferred":
        assert result["created"] == [] and result["deferred"] == 1 and after == before  # the store is untouched
        script.case = "good"  # the model answers again: the same segment, now by the model
        result, _ = distilled(c, session)
        mode = "llm"
    created = [u for u in result["created"] if u.startswith("distillation://")]
    assert len(created) == 1 and store_counts(c)["distillations"] == before["distillations"] + 1
    node = c.request("lore/getNode", {"uri": created[0]})
    assert node["metadata"]["mode"] == mode and node["content"].strip() and "\ud800" not in node["content"], node
    # the segment is done: a second distill of the session makes nothing new
    assert distilled(c, session)[0]["created"] == [] and store_counts(c)["distillations"] == before["distillations"] + 1


def test_a_segment_the_model_keeps_failing_falls_back_to_extractive_on_the_third_try(memory):
    c, script = memory
    script.case = "status-529-overloaded"
    record(c, "sess-outage")
    before = store_counts(c)
    assert [distilled(c, "sess-outage")[0]["deferred"] for _ in range(2)] == [1, 1] and store_counts(c) == before
    third, _ = distilled(c, "sess-outage")
    (uri,) = third["created"]
    assert third["deferred"] == 0 and c.request("lore/getNode", {"uri": uri})["metadata"]["mode"] == "extractive"


@pytest.mark.parametrize("case, reply, mode", MEMORY_CASES, ids=[c[0] for c in MEMORY_CASES])
def test_dream_in_model_mode_keeps_the_rules_verdict_when_the_judge_misbehaves(memory, case, reply, mode):
    c, script = memory
    script.case = case
    before = c.request("lore/listNodes", {})["nodes"]
    t0 = time.monotonic()
    reply = c.request_full("lore/dream", {"dryRun": True}, timeout=60)
    assert "error" not in reply, reply["error"]
    r = reply["result"]
    assert time.monotonic() - t0 <= MEMORY_S and r["mode"] == "model" and r["applied"] == 0
    merge = next(ch for ch in r["changes"] if ch["uri"] == "project://shop/pattern/retry-b")
    assert merge["action"] == "merge" and merge["proposed"] and isinstance(merge["reason"], str)
    assert c.request("lore/listNodes", {})["nodes"] == before  # advisory: nothing changed


def test_a_judge_verdict_with_fields_of_the_wrong_type_applies_the_rule_not_the_garbage(memory):
    c, script = memory
    keep = c.request("lore/getNode", {"uri": "project://shop/pattern/retry-a"})["content"]
    script.case = "judge-odd-fields"
    script.extra = text(json.dumps({"uri": "project://shop/pattern/retry-b", "decision": "apply",
                                    "content": ["not", "text"], "reason": 7}))
    try:
        run = c.request_full("lore/dream", {}, timeout=60)
    finally:
        script.extra = None
    assert "error" not in run, run["error"]
    got = {ch["uri"]: ch for ch in run["result"]["changes"]}
    assert got["project://shop/pattern/retry-b"]["applied"] is True  # the verdict's decision counts ...
    assert c.request("lore/getNode", {"uri": "project://shop/pattern/retry-a"})["content"] == keep  # ... its list does not
    assert isinstance(got["project://shop/pattern/retry-b"]["reason"], str)
    c.request("lore/dreamRollback", {"runId": run["result"]["runId"]})
    assert {n["uri"] for n in c.request("lore/listNodes", {})["nodes"]} >= {"project://shop/pattern/retry-a",
                                                                             "project://shop/pattern/retry-b"}


def test_a_success_gives_the_sessions_next_segment_its_own_three_tries(memory):
    """"The third failure of the same segment" falls back: a segment that failed twice and was
    then distilled by the model leaves the count at zero, so the next segment's first failure
    waits for the next pass instead of falling back at once."""
    c, script = memory
    script.case = "status-529-overloaded"
    record(c, "sess-count")
    assert [distilled(c, "sess-count")[0]["deferred"] for _ in range(2)] == [1, 1]
    script.case = "good"
    first = [u for u in distilled(c, "sess-count")[0]["created"] if u.startswith("distillation://")]
    assert len(first) == 1 and c.request("lore/getNode", {"uri": first[0]})["metadata"]["mode"] == "llm"
    record(c, "sess-count")  # the session goes on: its next segment
    script.case = "status-529-overloaded"
    before = store_counts(c)
    nxt, _ = distilled(c, "sess-count")
    assert nxt["deferred"] == 1 and nxt["created"] == [] and store_counts(c) == before
    script.case = "good"  # the control: the model answers, and that segment is the model's
    (uri,) = [u for u in distilled(c, "sess-count")[0]["created"] if u.startswith("distillation://")]
    assert c.request("lore/getNode", {"uri": uri})["metadata"]["mode"] == "llm"
