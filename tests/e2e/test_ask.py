"""Codebase questions with a model, end to end: a real sidecar over stdio, the real Anthropic
SDK (or the OpenAI-compatible backend) talking to a fake model on 127.0.0.1 that plays a
scripted agent (tests/support/ask_agent.py). What is checked is what reached the model: the
request bodies the fake recorded."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.engine.context.cache_sim import CacheSim
from tests.support import ask_agent
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_models import FakeModels

SECRET = "outside-secret-k7q2"
LOOK_FIRST = "You have not looked at the code yet"
PING = "(keep-warm: reply with one word)"


def make_workspace(root: Path, modules: int = 24) -> Path:
    (root / "src").mkdir(parents=True)
    for i in range(modules):
        body = [f'"""Module {i}: helpers for part {i} of the shop."""', "", "import os", ""]
        body += [f"def step_{i}_{j}(order):\n    \"\"\"Step {j} of part {i}.\"\"\"\n    return order + {j}\n" for j in range(6)]
        body += [f"def func_{i}(x):\n    return x * {i}  # marker-{i}\n"]
        (root / "src" / f"mod{i}.py").write_text("\n".join(body))
    (root / "README.md").write_text("# shop\n\nThe shop's code lives in src/.\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "Add the shop's helpers (walrus release)"], cwd=root, check=True)
    return root


def spawn(tmp: Path, ws: Path, url: str, *, provider: str = "anthropic", **options) -> StdioClient:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    if provider == "anthropic":
        env.update(ANTHROPIC_API_KEY="sk-test-not-a-real-key", ANTHROPIC_BASE_URL=url)
    else:
        env.update(LORE_ASK_API_KEY="sk-test-not-a-real-key")
        options.update(askProvider="openai", askModel="fake-model", askBaseUrl=url + "/v1")
    c = StdioClient(sidecar_command(), env=env)
    c.initialize(ws, options={"storeDir": str(tmp / "store"), "watch": False, "indexWorkspace": False,
                              "distiller": "off", **options})
    return c


def ask(c: StdioClient, question: str, **params) -> dict:
    return c.request("lore/ask", {"question": question, **params}, timeout=60)


@pytest.fixture
def ws(tmp_path) -> Path:
    return make_workspace(tmp_path / "shop")


def test_tool_results_reach_the_model_and_the_answer_cites_the_file_read(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            r = ask(c, "Where is `func_7` defined?")
            log = ask(c, "Which commit added the `walrus` release?")
            fact = c.request("lore/getNode", {"uri": r["ledgerFacts"][0]})
            node = c.request("lore/createNode", {  # promoting the fact: its text and its sources
                "uri": "project://shop/architecture/func-7", "content": fact["content"], "category": "architecture",
                "priority": 3, "sources": [{"path": s["path"]} for s in fact["metadata"]["sources"]]})
        finally:
            c.close()
    assert r["mode"] == "model" and r["finished"] == "answered"
    # The answer quotes the line the scripted agent found through Grep and then Read.
    assert "src/mod7.py" in r["answer"] and "def func_7(x):" in r["answer"]
    sha = hashlib.sha256((ws / "src/mod7.py").read_bytes()).hexdigest()
    assert {"path": "src/mod7.py", "lines": r["sources"][0]["lines"], "sha256": sha} in r["sources"]
    assert len(r["ledgerFacts"]) == 1 and r["ledgerFacts"][0].startswith("ledger://shop/F")
    assert r["trailer"]["toolCalls"] == 3 and r["trailer"]["filesRead"] == 1
    sent = [json.dumps(b) for b in fake.bodies]
    assert any("marker-7" in s for s in sent)  # the Read result reached the model
    assert "Add the shop's helpers (walrus release)" in log["answer"]  # git_search's result did too
    assert fact["source"] == "ledger" and fact["content"] == "`func_7` is defined in src/mod7.py at line 29."
    assert fact["metadata"]["sources"] == [{"path": "src/mod7.py", "sha256": sha}] and fact["metadata"]["stale"] is False
    assert node["uri"] == "project://shop/architecture/func-7"


def test_hostile_tool_calls_from_the_model_are_refused_and_nothing_outside_reaches_it(tmp_path, ws):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    os.symlink(outside / "secret.txt", ws / "src" / "leak.txt")
    os.mkfifo(ws / "pipe")
    hostile = [("Read", {"path": "../outside/secret.txt"}), ("Read", {"path": str(outside / "secret.txt")}),
               ("Read", {"path": "src/leak.txt"}), ("Read", {"path": "pipe"}), ("Read", {"path": "/proc/self/environ"}),
               ("Grep", {"pattern": "outside-secret", "glob": "../*"}), ("Glob", {"pattern": "../outside/*"}),
               ("find_paths", {"path": str(outside)}), ("git_search", {"query": f"--output={tmp_path / 'pwned'}"}),
               ("git_search", {"query": "x", "path": "../outside"}), ("remember", {"fact": "x", "paths": ["../outside/secret.txt"]}),
               ("Bash", {"command": f"cat {outside}/secret.txt"})]

    def responder(body):
        question, results = ask_agent.state(body["messages"])
        return {"tool_use": hostile} if not results else f"{len(results)} calls answered"

    with FakeAnthropic(responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            r = ask(c, "Read the secret")
        finally:
            c.close()
    results = [b for m in fake.bodies[-1]["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]
    # Refused, or (a glob or a git query that is only text to search for) bounded to the project: nothing found.
    assert len(results) == len(hostile)
    assert all(b.get("is_error") or b["content"] in ("no matches", "no commits match") for b in results), results
    assert sum(bool(b.get("is_error")) for b in results) >= len(hostile) - 2
    assert not any(SECRET in json.dumps(b) for b in fake.bodies)
    assert not (tmp_path / "pwned").exists()  # the injected option's file, in this test's own folder
    assert r["answer"] == f"{len(hostile)} calls answered"


def test_an_edited_source_makes_its_fact_stale_as_a_delta_while_the_frozen_block_stays(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            first = ask(c, "Where is `func_3` defined?")
            before = c.request("lore/askStats")
            mark = len(fake.bodies)
            (ws / "src/mod3.py").write_text((ws / "src/mod3.py").read_text().replace("x * 3", "x * 33"))
            ask(c, "Where is `func_4` defined?")
            after = c.request("lore/askStats")
        finally:
            c.close()
    fact = first["ledgerFacts"][0].rsplit("/", 1)[1]
    assert before["staleFacts"] == 0 and after["staleFacts"] == 1  # the control, then the staleness
    q1, q2 = fake.bodies[mark - 1], fake.bodies[mark]
    assert q2["system"] == q1["system"]  # the frozen block is byte for byte the same
    assert fact in q1["system"][1]["text"] or "nothing learnt yet" in q1["system"][1]["text"]
    deltas = [b["text"] for b in q2["messages"][-1]["content"] if b["text"].startswith("<delta>")]
    assert any(f"stale: {fact} cites src/mod3.py" in d for d in deltas)
    assert any("changed: src/mod3.py was edited" in d for d in deltas)
    assert not any("<delta>" in b.get("text", "") for b in q1["messages"][-1]["content"] if isinstance(b, dict))


def test_twenty_questions_extend_the_same_prefix_and_read_it_from_the_cache(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        starts = []
        try:
            for i in range(20):
                starts.append(len(fake.bodies))
                r = ask(c, f"Where is `func_{i}` defined?")
                assert f"src/mod{i}.py" in r["answer"]
            stats = c.request("lore/askStats")
        finally:
            c.close()
    assert stats["compactions"] == 0 and stats["questionsAnswered"] == 20
    sim, read, total = CacheSim(), 0, 0
    prev = None
    for n, body in enumerate(fake.bodies):
        blocks, marks = ask_agent.cache_blocks(body)
        if prev is not None:
            # Everything up to the previous request's last breakpoint is sent again, byte for byte.
            prev_blocks, prev_marks = prev
            assert blocks[: prev_marks[-1] + 1] == prev_blocks[: prev_marks[-1] + 1], f"request {n} rewrote its prefix"
        prev = (blocks, marks)
        o = sim.request(blocks, marks, at=float(n))
        if n >= starts[1]:
            read += o.read
            total += o.read + o.write + o.uncached
    assert read / total >= 0.90, read / total


def test_compaction_fires_above_085_ends_at_060_or_less_and_keeps_every_question(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url, askWindowTokens=5000)
        fills, counts, reports = [], [], []
        try:
            for i in range(16):
                ask(c, f"Where is `func_{i}` defined?")
                s = c.request("lore/askStats")
                fills.append(s["windowFill"])
                counts.append(s["compactions"])
                reports.append(s["lastCompaction"])
            ask(c, "Where is `func_20` defined?")  # one more: the model sees the last compaction's frozen block
        finally:
            c.close()
    assert counts[-1] >= 2, (counts, fills)
    for i in range(1, len(counts)):
        if counts[i] > counts[i - 1]:
            r = reports[i]
            assert r["fill_before"] >= 0.85 and r["fill_after"] <= 0.60, r
        else:
            assert fills[i] < 0.95  # no compaction happened, and none was overdue
    # Hysteresis: after a compaction the window grows past 0.60 before the next one fires.
    firsts = [i for i in range(1, len(counts)) if counts[i] > counts[i - 1]]
    assert all(b - a >= 2 for a, b in zip(firsts, firsts[1:], strict=False))
    # No question is lost: each one asked before the last compaction is in the ledger of the
    # frozen block the model saw afterwards.
    frozen = fake.bodies[-1]["system"][1]["text"]
    for i in range(firsts[-1] + 1):
        assert f"func_{i}`" in frozen, i


def test_a_model_slower_than_the_deadline_still_gets_an_answer_before_it(tmp_path, ws):
    def responder(body):
        question, results = ask_agent.state(body["messages"])
        if not results:
            return {"text": "Looking for it: probably in src/mod5.py.", "tool_use": [("Grep", {"pattern": "func_5"})]}
        return {"delay": 20, "text": "too late"}

    with FakeAnthropic(responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            t0 = time.monotonic()
            # Room for a first turn (the SDK's import, the window, Grep) on a busy machine; the
            # model's second turn, 20 s, is what the deadline must cut.
            r = ask(c, "Where is `func_5` defined?", deadlineMs=8000)
            waited = time.monotonic() - t0
        finally:
            c.close()
    assert r["finished"] == "deadline" and r["mode"] == "model"
    assert "probably in src/mod5.py" in r["answer"] and "Best effort" in r["answer"]
    # The server's own clock says it answered inside the deadline; the caller's says it did
    # not wait for the model's 20 s turn (a loaded machine added 2.3 s of stdio and start-up
    # around a 6.8 s answer once: the wall bound is the model's turn, not the deadline).
    assert r["trailer"]["latencyMs"] < 8000 and waited < 16.0
    assert len(fake.bodies) == 2


def test_three_questions_at_once_each_run_on_the_fork_and_all_their_facts_are_kept(tmp_path, ws):
    active, peak, lock = [0], [0], threading.Lock()

    def responder(body):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            time.sleep(0.3)
            return ask_agent.anthropic_responder(body)
        finally:
            with lock:
                active[0] -= 1

    with FakeAnthropic(responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            ask(c, "Where is `func_0` defined?")  # a ledger to start from (not a cold start)
            frozen = fake.bodies[-1]["system"][1]["text"]
            answers: list[dict] = []
            threads = [threading.Thread(target=lambda i=i: answers.append(ask(c, f"Where is `func_{i}` defined?")))
                       for i in (1, 2, 3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            stats = c.request("lore/askStats")
        finally:
            c.close()
    assert sorted(a["answer"].split("`")[1] for a in answers) == ["func_1", "func_2", "func_3"]
    assert peak[0] >= 2  # they did run at once
    assert all(b["system"][1]["text"] == frozen for b in fake.bodies[4:])  # each on the fork's frozen block
    assert stats["ledgerFacts"] == 4 and stats["version"] == 4  # nobody's facts were overwritten
    assert stats["historyMessages"] == 4 * 8


def test_with_max_parallel_one_questions_queue_first_come_first_served(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url, askMaxParallel=1)
        try:
            threads = [threading.Thread(target=ask, args=(c, f"Where is `func_{i}` defined?")) for i in (1, 2, 3)]
            for t in threads:
                t.start()
                time.sleep(0.05)
            for t in threads:
                t.join()
        finally:
            c.close()
    asked = [ask_agent.state(b["messages"])[0] for b in fake.bodies]
    runs = [q for i, q in enumerate(asked) if i == 0 or asked[i - 1] != q]
    assert len(runs) == 3  # each question's requests are contiguous: they never interleaved


def test_keep_warm_pings_at_its_interval_and_stops_when_idle_and_never_when_off(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url, askKeepWarmMs=400, askKeepWarmIdleMs=2000)
        try:
            ask(c, "Where is `func_1` defined?")
            done = time.monotonic()
            time.sleep(3.5)
            stats = c.request("lore/askStats")
        finally:
            c.close()
    pings = [t for t, b in zip(fake.times, fake.bodies, strict=True) if PING in json.dumps(b["messages"][-1])]
    assert 2 <= len(pings) <= 6, pings
    gaps = [b - a for a, b in zip(pings, pings[1:], strict=False)]
    assert all(g >= 0.35 for g in gaps), gaps  # at the interval, not faster
    assert pings[-1] - done <= 2.0 + 0.5  # none after the idle limit
    assert stats["keepWarmRequests"] == len(pings)

    with FakeAnthropic(ask_agent.anthropic_responder) as off:
        c = spawn(tmp_path / "off", ws, off.url)
        try:
            ask(c, "Where is `func_1` defined?")
            n = len(off.bodies)
            time.sleep(1.5)
        finally:
            c.close()
    assert len(off.bodies) == n and n > 0


def test_a_cold_start_answer_without_looking_is_sent_back_once(tmp_path, ws):
    def responder(body):
        question, results = ask_agent.state(body["messages"])
        told = LOOK_FIRST in json.dumps(body["messages"][-1])
        if not results and not told and "func_2" not in question:
            return "It is surely in utils.py."  # an answer from priors
        return ask_agent.anthropic_responder(body)

    with FakeAnthropic(responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            cold = ask(c, "Where is `func_1` defined?")
            n = len(fake.bodies)
            warm = ask(c, "Where is `func_9` defined?")  # the ledger is not empty now: accepted as is
        finally:
            c.close()
    assert any(LOOK_FIRST in json.dumps(b) for b in fake.bodies[:n])
    assert cold["trailer"]["toolCalls"] >= 1 and "src/mod1.py" in cold["answer"]
    assert warm["answer"] == "It is surely in utils.py." and warm["trailer"]["toolCalls"] == 0
    assert not any(LOOK_FIRST in json.dumps(b["messages"][-1]) for b in fake.bodies[n:])


def test_the_openai_compatible_backend_runs_the_same_loop(tmp_path, ws):
    with FakeModels(ask_agent.chat_responder) as fake:
        c = spawn(tmp_path, ws, fake.url, provider="openai")
        try:
            r = ask(c, "Where is `func_7` defined?")
        finally:
            c.close()
    assert r["mode"] == "model" and "def func_7(x):" in r["answer"] and r["trailer"]["toolCalls"] == 3
    chats = [b for api, _, b in fake.requests if api == "chat"]
    assert any(m["role"] == "tool" and "marker-7" in m["content"] for m in chats[-1]["messages"])
    assert chats[0]["tools"][0]["type"] == "function"


def test_files_other_agents_read_and_preloaded_docs_are_in_the_window(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url, askPreload=["README.md"])
        try:
            ask(c, "Where is `func_1` defined?")
            c.request("lore/recordMessages", {"sessionId": "agent-1", "harness": "claude-code", "messages": [
                {"role": "tool", "toolName": "Read", "toolCallId": "t1", "id": "m1",
                 "content": json.dumps({"type": "text", "file": {"filePath": str(ws / "src/mod11.py"), "numLines": 30}})},
                {"role": "tool", "toolName": "Read", "toolCallId": "t2", "id": "m2",
                 "content": json.dumps({"file": {"filePath": str(tmp_path / "elsewhere.py")}})}]})
            mark = len(fake.bodies)
            ask(c, "Where is `func_2` defined?")
        finally:
            c.close()
    assert "The shop's code lives in src/." in fake.bodies[0]["system"][1]["text"]  # preloaded
    deltas = " ".join(b["text"] for b in fake.bodies[mark]["messages"][-1]["content"])
    assert "observed: an agent read src/mod11.py: def step_11_0" in deltas
    assert "elsewhere" not in deltas  # outside the project: not read


def test_without_preload_the_docs_are_not_in_the_window(tmp_path, ws):
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            ask(c, "Where is `func_1` defined?")
        finally:
            c.close()
    assert "The shop's code lives in src/." not in fake.bodies[0]["system"][1]["text"]


def test_an_edit_that_keeps_the_file_size_still_makes_its_fact_stale(tmp_path, ws):
    """The ledger re-hashes a cited file only when its stat moved (size, times, inode): an edit
    that keeps the size (`x * 3` to `x * 9`) must still move it, after the file was hashed
    once already (by the second question). The control: a question later, the file edited
    back to its first bytes, the fact is current again. (Round 3,
    tools/rounds/2026-12-04-fresh3-context-gateway-ask.py.)"""
    src = ws / "src/mod3.py"
    original = src.read_text()
    with FakeAnthropic(ask_agent.anthropic_responder) as fake:
        c = spawn(tmp_path, ws, fake.url)
        try:
            ask(c, "Where is `func_3` defined?")
            ask(c, "Where is `func_4` defined?")  # re-validates the ledger: mod3.py is hashed now
            assert c.request("lore/askStats")["staleFacts"] == 0
            src.write_text(original.replace("x * 3", "x * 9"))
            assert len(src.read_text()) == len(original)
            ask(c, "Where is `func_5` defined?")
            stale = c.request("lore/askStats")["staleFacts"]
            src.write_text(original)
            ask(c, "Where is `func_6` defined?")
            back = c.request("lore/askStats")["staleFacts"]
        finally:
            c.close()
    assert stale == 1 and back == 0
